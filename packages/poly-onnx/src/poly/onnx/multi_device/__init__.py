"""poly.onnx.multi_device: sharding hints (Polygraphy's hints file, and ``suggest_shard_hints``, which
writes them for a model) and ``ShardModel``, which turns a
single-device model with attention layers into a multi-device one (DistCollective nodes)."""

from poly.onnx.multi_device.hint_generation import CP_TYPES, ShardHintOptions, suggest_shard_hints
from poly.onnx.multi_device.hints import (
    REDUCE_OPS,
    AttentionLayerHint,
    DistCollective,
    FusedAttention,
    ShardHints,
    ShardTensor,
)
from poly.onnx.multi_device.shard import AttentionMatch, ShardModel, find_attention_layers, shard_model

__all__ = [
    "CP_TYPES",
    "REDUCE_OPS",
    "ShardHintOptions",
    "suggest_shard_hints",
    "FusedAttention",
    "AttentionLayerHint",
    "DistCollective",
    "ShardHints",
    "ShardTensor",
    "AttentionMatch",
    "ShardModel",
    "find_attention_layers",
    "shard_model",
]
