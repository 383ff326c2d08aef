"""
``ShardModel``: turns a single-device ONNX model with attention layers into a multi-device one,
as `poly multi-device shard` does, following a ``ShardHints`` file.

Each hinted model input is reduce-scattered (a ``DistCollective`` node with
``collective_operation="reduce_scatter"`` between the input and its consumers); in each hinted
attention layer (MatMul(Q, K) -> Softmax -> MatMul(., V), found by the name of Q) K and V, and Q
where asked, are all-gathered; and unless some Q was gathered, each hinted output is all-gathered
before it leaves the model. A sequence axis other than 0 gets a Transpose on either side of the
collective that brings it to the front. Running the result needs TensorRT with multi-device
(``DistCollective``) support; writing it needs only ONNX.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from poly.core import G_LOGGER, BaseLoader
from poly.core.func import funcify, invoke_if_callable
from poly.core.optional_import import lazy_import
from poly.onnx.model.base import load_model
from poly.onnx.model.graph import export_graph
from poly.onnx.multi_device.hints import ShardHints

gs = lazy_import("onnx_graphsurgeon")
onnx = lazy_import("onnx")

__all__ = ["AttentionMatch", "find_attention_layers", "ShardModel", "shard_model"]

DIST_OP = "DistCollective"


@dataclass
class AttentionMatch:
    """One attention layer: its two MatMuls and the Q, K and V tensors they read."""

    first_matmul: object
    second_matmul: object
    q: object
    k: object
    v: object


def find_attention_layers(graph: Any) -> list[AttentionMatch]:
    """The layers of ``graph`` (an onnx-graphsurgeon graph) of the form MatMul(Q, K) -> Softmax ->
    MatMul(., V), where the intermediate tensors feed nothing else and are not graph outputs."""
    outputs = {t.name for t in graph.outputs}

    def only_consumer(tensor: Any, op: Any) -> Any:
        if tensor.name in outputs or len(tensor.outputs) != 1:
            return None
        node = tensor.outputs[0]
        return node if node.op == op else None

    matches = []
    for node in graph.nodes:
        if node.op != "MatMul" or len(node.inputs) != 2 or len(node.outputs) != 1:
            continue
        softmax = only_consumer(node.outputs[0], "Softmax")
        if softmax is None or len(softmax.outputs) != 1:
            continue
        second = only_consumer(softmax.outputs[0], "MatMul")
        if second is None or len(second.inputs) != 2 or second.inputs[0] is not softmax.outputs[0]:
            continue
        matches.append(AttentionMatch(node, second, node.inputs[0], node.inputs[1], second.inputs[1]))
    return matches


def _replace(tensors: Any, old: Any, new: Any) -> None:
    # onnx-graphsurgeon's synchronized lists take item assignment, not slices
    for index, t in enumerate(tensors):
        if t is old:
            tensors[index] = new


class _Sharder:
    def __init__(self, graph: Any, hints: Any) -> None:
        self.graph = graph
        self.hints = hints
        self.count = 0
        self.renamed_q: dict[Any, Any] = {}

    def transposes(self, node: Any, seq_len_idx: Any, rank: Any) -> None:
        # brings the sequence axis to the front for the collective, and back after it
        source, result = node.inputs[0], node.outputs[0]
        size = len(source.shape) if source.shape else (len(result.shape) if result.shape else rank)
        if not size:
            G_LOGGER.critical(f"Cannot place the sequence axis {seq_len_idx} of tensor '{source.name}' first: its rank "
                              "is unknown. Run with --shape-inference, or give its rank in the hints file")
        if seq_len_idx >= size:
            G_LOGGER.critical(f"seq_len_idx {seq_len_idx} is out of range for tensor '{source.name}' of rank {size} "
                              f"(collective {node.name})")
        perm = list(range(size))
        perm[0], perm[seq_len_idx] = perm[seq_len_idx], perm[0]
        before = gs.Variable(f"TensorPre_{node.name}", dtype=source.dtype)
        after = gs.Variable(f"TensorPost_{node.name}", dtype=source.dtype)
        self.graph.nodes.append(gs.Node("Transpose", f"TransposePre_{node.name}", {"perm": perm}, [source], [before]))
        self.graph.nodes.append(gs.Node("Transpose", f"TransposePost_{node.name}", {"perm": perm}, [after], [result]))
        node.inputs = [before]
        node.outputs = [after]

    def collective(self, tensor: Any, operation: Any, reduce_op: Any, seq_len_idx: Any, rank: Any) -> Any:
        sharded = gs.Variable(f"{tensor.name}_md", dtype=tensor.dtype, shape=tensor.shape)
        name = f"{DIST_OP}_{self.count}"
        self.count += 1
        if operation == "reduce_scatter":  # T -> RS -> T_md; consumers read T_md
            for consumer in list(tensor.outputs):
                _replace(consumer.inputs, tensor, sharded)
            inputs, outputs = [tensor], [sharded]
        else:  # the producer writes T_md; T_md -> AG -> T
            for producer in list(tensor.inputs):
                _replace(producer.outputs, tensor, sharded)
            inputs, outputs = [sharded], [tensor]
        node = gs.Node(DIST_OP, name, self.hints.dist_collectives.node_attrs(operation, reduce_op), inputs, outputs)
        self.graph.nodes.insert(0, node)
        if seq_len_idx:
            self.transposes(node, seq_len_idx, rank)
        if operation == "reduce_scatter":
            self.renamed_q[tensor.name] = sharded.name
        G_LOGGER.info(f"Inserted {operation.replace('_', '-')} {name} for tensor: {tensor.name}")
        return sharded

    def run(self) -> Any:
        tensors = self.graph.tensors()

        def tensor(name: Any, what: Any) -> Any:
            if name not in tensors:
                G_LOGGER.critical(f"The sharding hints name {what} '{name}', which is not a tensor of the model")
            return tensors[name]

        for hint in self.hints.inputs:
            self.collective(tensor(hint.name, "input"), "reduce_scatter",
                            self.hints.dist_collectives.reduce_scatter_reduce_op,
                            hint.seq_len_idx, hint.rank)

        matches = {m.q.name: m for m in find_attention_layers(self.graph)}  # type: ignore[attr-defined]
        G_LOGGER.info(f"Found {len(matches)} attention layer(s) in the model")
        gathered_q = False
        for layer in self.hints.attention_layers:
            q_name = self.renamed_q.get(layer.q, layer.q)
            match = matches.get(q_name)
            if match is None:
                G_LOGGER.warning(f"No attention layer (MatMul -> Softmax -> MatMul) reads Q tensor '{layer.q}'; "
                                 "this hint is left unused")
                continue
            done = set()
            for t, wanted, seq_len_idx, rank in ((match.q, layer.gather_q, 0, None),
                                                 (match.k, layer.gather_kv, self.hints.k_seq_len_idx, self.hints.kv_rank),
                                                 (match.v, layer.gather_kv, self.hints.v_seq_len_idx, self.hints.kv_rank)):
                if not wanted or t.name in done:  # type: ignore[attr-defined]
                    continue
                if t.name == q_name:  # type: ignore[attr-defined]
                    gathered_q = True
                self.collective(t, "all_gather", "none", seq_len_idx, rank)
                done.add(t.name)  # type: ignore[attr-defined]
        if gathered_q:
            G_LOGGER.info("Q was gathered: the model's outputs are left unsharded (no all-gather at the outputs)")
        else:
            for hint in self.hints.outputs:
                self.collective(tensor(hint.name, "output"), "all_gather", "none", hint.seq_len_idx, hint.rank)
        self.graph.cleanup().toposort()
        return self.graph


class ShardModel(BaseLoader):
    """
    Functor that shards a single-device ONNX model for running on several GPUs.
    """

    def __init__(self, model: Any, hints: Any) -> None:
        """
        Shards a single-device ONNX model following sharding hints.

        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    The single-device model, or a callable that returns one.
            hints (Union[ShardHints, str, Callable() -> ShardHints]):
                    The hints, the path of a hints file, or a callable that returns hints.
        """
        self._model = model
        self._hints = hints

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The multi-device model, with ``DistCollective`` nodes.
        """
        hints = invoke_if_callable(self._hints)
        source = "sharding hints"
        if isinstance(hints, str):
            source = f"sharding hints file '{hints}'"
            hints = ShardHints.load(hints)  # type: ignore[attr-defined]
        hints.check(source)
        dist = hints.dist_collectives
        G_LOGGER.info(f"Sharding hints: parallelism={hints.parallelism}, group_size={dist.group_size}, "
                      f"root={dist.root}, nb_rank={dist.nb_rank}, groups={dist.groups}")
        model = load_model(self._model)
        graph = _Sharder(gs.import_onnx(model), hints).run()
        sharded = export_graph(graph, source_model=model)
        # onnx-graphsurgeon cannot tell the type of an empty list attribute: groups is set here.
        for node in sharded.graph.node:
            if node.op_type == DIST_OP:
                node.attribute.append(onnx.helper.make_attribute("groups", list(dist.groups),
                                                                 attr_type=onnx.AttributeProto.INTS))
        return sharded


shard_model = funcify(ShardModel)
