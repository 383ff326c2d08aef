"""
``suggest_shard_hints``: a sharding hints file for a model, as `poly template shard-hints` writes
it: one hint per attention layer (MatMul -> Softmax -> MatMul, found by its Q tensor) and, unless
told not to, the model inputs the layers depend on (to reduce-scatter) and the model outputs that
depend on them (to all-gather).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from poly.core import G_LOGGER
from poly.onnx.multi_device.hints import (
    AttentionLayerHint,
    DistCollective,
    FusedAttention,
    ShardHints,
    ShardTensor,
)
from poly.onnx.multi_device.shard import find_attention_layers

__all__ = ["CP_TYPES", "SEQUENCE_DIM_NAMES", "ShardHintOptions", "suggest_shard_hints"]

CP_TYPES = ("native", "fused")
"""How attention layers are sharded: `native` all-gathers K and V; `fused` replaces the layer by
one fused Attention node."""
SEQUENCE_DIM_NAMES = ("sequence_length", "seq_len")
"""Dimension names that mark a tensor's sequence axis."""


@dataclass
class ShardHintOptions:
    """The settings of `poly template shard-hints` (Polygraphy's flags, same defaults)."""

    parallelism: str = "CP"
    root: int = -1
    gpus: int = 0
    """Participating GPUs (the collectives' group_size); 0: all."""
    groups: list[int] = field(default_factory=list)
    cp_type: str = "native"
    suggest_io: bool = True
    i_idx: int = 0
    o_idx: int = 0
    k_idx: int = 0
    v_idx: int = 0
    i_rank: int | None = None
    o_rank: int | None = None
    kv_rank: int | None = None
    reduce_op: str = "max"
    q_shuffle: list[int] | None = None
    k_shuffle: list[int] | None = None
    v_shuffle: list[int] | None = None
    is_causal: bool = False
    nb_rank: int = 1


def _rank(tensor: Any, fallback: Any) -> Any:
    return len(tensor.shape) if tensor.shape else fallback


def _sequence_axis(tensor: Any, default: Any) -> Any:
    for index, dim in enumerate(tensor.shape or []):
        if dim in SEQUENCE_DIM_NAMES:
            G_LOGGER.info(f"Found the sequence axis of tensor {tensor.name} at index {index} (dimension {dim!r})")
            return index
    return default


def _reachable(start: Any, step: Any) -> Any:
    """Nodes reachable from ``start`` (included) going through ``step(node)`` -> nodes."""
    seen, todo = {id(start): start}, [start]
    while todo:
        for nxt in step(todo.pop()):
            if id(nxt) not in seen:
                seen[id(nxt)] = nxt
                todo.append(nxt)
    return seen.values()


def _upstream(node: Any) -> list[Any]:
    return [producer for t in node.inputs for producer in t.inputs]


def _downstream(node: Any) -> list[Any]:
    return [consumer for t in node.outputs for consumer in t.outputs]


def suggest_shard_hints(graph: Any, options: ShardHintOptions | None = None) -> ShardHints:
    """The sharding hints for ``graph`` (an onnx-graphsurgeon graph) under ``options``."""
    options = options or ShardHintOptions()
    if options.cp_type not in CP_TYPES:
        G_LOGGER.critical(f"Unknown CP type {options.cp_type!r} (use one of {', '.join(CP_TYPES)})")
    replace = None
    if options.cp_type == "fused":
        replace = FusedAttention(options.is_causal, options.q_shuffle, options.k_shuffle, options.v_shuffle,
                                 options.nb_rank)
    graph_inputs = {t.name: t for t in graph.inputs}
    graph_outputs = {t.name: t for t in graph.outputs}
    layers, inputs, outputs = [], {}, {}
    kv_rank = None
    for match in find_attention_layers(graph):
        G_LOGGER.info(f"Found attention layer with Q tensor {match.q.name}")  # type: ignore[attr-defined]
        if not kv_rank:
            kv_rank = _rank(match.k if match.k.shape else match.v, options.kv_rank)  # type: ignore[attr-defined]
        if options.suggest_io:
            for node in _reachable(match.second_matmul, _upstream):
                inputs.update({t.name: t for t in node.inputs if t.name in graph_inputs})
            for node in _reachable(match.second_matmul, _downstream):
                outputs.update({t.name: t for t in node.outputs if t.name in graph_outputs})
        layers.append(AttentionLayerHint(match.q.name, gather_kv=options.cp_type == "native", gather_q=False,  # type: ignore[attr-defined]
                                         replace=replace))
    if not layers:
        G_LOGGER.warning("Found no attention layer (MatMul -> Softmax -> MatMul) in the model")

    def shard_tensors(tensors: Any, order: Any, default_idx: Any, fallback_rank: Any) -> list[Any]:
        return [ShardTensor(t.name, _sequence_axis(t, default_idx), _rank(t, fallback_rank))
                for name in order if name in tensors for t in [tensors[name]]]

    return ShardHints(
        parallelism=options.parallelism,
        attention_layers=layers,
        dist_collectives=DistCollective(options.gpus, options.root, options.nb_rank, list(options.groups),
                                        options.reduce_op),
        inputs=shard_tensors(inputs, graph_inputs, options.i_idx, options.i_rank),
        outputs=shard_tensors(outputs, graph_outputs, options.o_idx, options.o_rank),
        k_seq_len_idx=options.k_idx,
        v_seq_len_idx=options.v_idx,
        kv_rank=kv_rank or options.kv_rank,
    )
