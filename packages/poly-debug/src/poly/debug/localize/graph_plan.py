"""
``GraphPlan``: the order in which ``poly debug localize`` walks a model, and the pieces it cuts
it into.

The top-level nodes are taken in topological order and grouped into *segments*: consecutive
runs of nodes whose produced tensors fit a memory budget (estimated from the shapes ONNX shape
inference finds; a node count where shapes are unknown). A segment becomes a model of its own
whose inputs are the tensors it reads from earlier segments (the *frontier*) and whose outputs
are every tensor it produces, so that each can be compared and then dropped: the values alive at
any time are one segment's tensors plus the frontier, never all intermediates.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from poly.core import G_LOGGER, lazy_import
from poly.debug.subgraph import node_reads, toposort_model

onnx = lazy_import("onnx")
np = lazy_import("numpy")

__all__ = ["GraphPlan", "Segment", "DEFAULT_SEGMENT_BYTES", "DEFAULT_SEGMENT_NODES"]

DEFAULT_SEGMENT_BYTES = 64 << 20
"""The activations one segment may produce (64 MiB), where shapes are known. Peak memory is a few
times this (the candidate's and the reference's segment, and their copies) plus the model."""

DEFAULT_SEGMENT_NODES = 64
"""The nodes of one segment where shapes are unknown."""


@dataclass(frozen=True)
class Segment:
    """A run of consecutive nodes (indices into ``GraphPlan.nodes``) evaluated as one model."""

    first: int
    """Index of the first node."""
    stop: int
    """One past the index of the last node."""
    reads: tuple[str, ...] = field(default=())
    """Tensors the segment's nodes read that no node of the segment produces (graph inputs,
    earlier segments' tensors; initializers excluded)."""
    produces: tuple[str, ...] = field(default=())
    """Every tensor the segment's nodes produce, in node order."""

    @property
    def indices(self) -> range:
        return range(self.first, self.stop)


def _tensor_bytes(value_info: Any) -> float:
    """Bytes of a tensor from its ValueInfoProto; inf where its type or a dimension is unknown."""
    tensor_type = value_info.type.tensor_type
    if not value_info.type.HasField("tensor_type") or not tensor_type.HasField("shape"):
        return math.inf
    try:
        itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)).itemsize
    except Exception:  # noqa: BLE001 - unknown or non-numeric element type
        return math.inf
    count = 1
    for dim in tensor_type.shape.dim:
        if not dim.HasField("dim_value"):
            return math.inf
        count *= dim.dim_value
    return float(count * itemsize)


class GraphPlan:
    """
    The walk of one ONNX model: nodes in topological order, who produces and who reads each
    tensor, and the segments.

    Example::

        plan = GraphPlan(onnx.load("model.onnx", load_external_data=False))
        for segment in plan.segments:
            print(segment.first, segment.stop, len(segment.produces))
    """

    def __init__(self, model: Any, segment_bytes: float = DEFAULT_SEGMENT_BYTES,
                 segment_nodes: int = DEFAULT_SEGMENT_NODES, shapes: dict[str, float] | None = None) -> None:
        """
        Args:
            model (onnx.ModelProto): The model; its external data need not be loaded. Its nodes
                    are sorted topologically (in place, stable).
            segment_bytes (float): The activations one segment may produce.
            segment_nodes (int): The nodes of one segment where a tensor's size is unknown.
            shapes (Dict[str, float]): Bytes of tensors by name; None: from ONNX shape inference.
        """
        if segment_nodes < 1:
            raise ValueError(f"segment_nodes must be at least 1, got {segment_nodes}")
        self.model = toposort_model(model)
        graph = self.model.graph
        self.nodes = list(graph.node)
        self.initializers = {init.name for init in graph.initializer}
        self.graph_inputs = [vi.name for vi in graph.input if vi.name not in self.initializers]
        self.graph_outputs = [vi.name for vi in graph.output]
        self.reads = [[n for n in node_reads(node) if n] for node in self.nodes]
        self.producer: dict[str, int] = {}
        for index, node in enumerate(self.nodes):
            for name in node.output:
                if name:
                    self.producer[name] = index
        self.last_read: dict[str, int] = {}
        """Tensor name -> index of the last node reading it."""
        for index, names in enumerate(self.reads):
            for name in names:
                self.last_read[name] = index
        self.tensor_bytes = self._estimate_bytes() if shapes is None else dict(shapes)
        self.segments = self._cut(segment_bytes, segment_nodes)

    def _estimate_bytes(self) -> dict[str, float]:
        try:
            inferred = onnx.shape_inference.infer_shapes(self.model, strict_mode=False)
        except Exception as err:  # noqa: BLE001 - shapes only size the segments
            G_LOGGER.verbose(f"Shape inference failed ({err}); segments are cut by node count")
            return {}
        graph = inferred.graph
        return {vi.name: _tensor_bytes(vi) for vi in (*graph.value_info, *graph.output, *graph.input)}

    def _cut(self, segment_bytes: float, segment_nodes: int) -> list[Segment]:
        segments = []
        first, used, count = 0, 0.0, 0
        for index, node in enumerate(self.nodes):
            size = sum(self.tensor_bytes.get(name, math.inf) for name in node.output if name)
            unknown = math.isinf(size)
            cost = segment_bytes / segment_nodes if unknown else size
            if count and used + cost > segment_bytes:
                segments.append(self._segment(first, index))
                first, used, count = index, 0.0, 0
            used += cost
            count += 1
        if count:
            segments.append(self._segment(first, len(self.nodes)))
        return segments

    def _segment(self, first: int, stop: int) -> Segment:
        produced: list[str] = []
        for index in range(first, stop):
            produced.extend(name for name in self.nodes[index].output if name)
        produced_set = set(produced)
        reads: list[str] = []
        seen: set[str] = set()
        for index in range(first, stop):
            for name in self.reads[index]:
                if name not in produced_set and name not in self.initializers and name not in seen:
                    seen.add(name)
                    reads.append(name)
        return Segment(first, stop, tuple(reads), tuple(produced))

    def needed_after(self, names: Iterable[str], index: int) -> list[str]:
        """The tensors of ``names`` that a node after ``index`` still reads."""
        return [name for name in names if self.last_read.get(name, -1) > index]

    def node_label(self, index: int) -> str:
        """The node's name, or ``<op> #index`` for an unnamed node."""
        node = self.nodes[index]
        return node.name or f"{node.op_type}#{index}"

    def segment_model(self, segment: Segment, input_values: dict[str, Any], outputs: Sequence[str]) -> Any:
        """
        The model of ``segment``: its nodes, the initializers they read (external data kept as
        references), graph inputs typed from ``input_values`` (name -> array, every name of
        ``segment.reads``) and ``outputs`` as graph outputs.
        """
        indices = segment.indices
        return self.build_model([self.nodes[i] for i in indices], input_values, outputs,
                                f"{self.model.graph.name or 'graph'}_segment_{segment.first}_{segment.stop}")

    def build_model(self, nodes: Sequence[Any], input_values: dict[str, Any], outputs: Sequence[str],
                    name: str) -> Any:
        """A model of ``nodes`` (any NodeProtos reading this model's initializers and the tensors of
        ``input_values``) with ``outputs`` as graph outputs."""
        src = self.model
        model = onnx.ModelProto()
        model.ir_version = max(src.ir_version or onnx.IR_VERSION, 4)
        model.opset_import.extend(src.opset_import)
        model.functions.extend(src.functions)
        graph = model.graph
        graph.name = name
        graph.node.extend(nodes)
        read: set[str] = set()
        for node in nodes:
            read.update(node_reads(node))
        for init in src.graph.initializer:
            if init.name in read and init.name not in input_values:
                graph.initializer.append(init)
        for input_name, value in input_values.items():
            graph.input.append(_value_info(input_name, value))
        for output_name in outputs:
            graph.output.append(onnx.helper.make_empty_tensor_value_info(output_name))
        return model


def _value_info(name: str, value: Any) -> Any:
    array = np.asarray(value)
    return onnx.helper.make_tensor_value_info(name, onnx.helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)
