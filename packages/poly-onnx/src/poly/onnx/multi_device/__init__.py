"""poly.onnx.multi_device: sharding hints (Polygraphy's hints file) and ``ShardModel``, which turns a
single-device model with attention layers into a multi-device one (DistCollective nodes)."""

from poly.onnx.multi_device.hints import AttentionLayerHint, DistCollective, ShardHints, ShardTensor
from poly.onnx.multi_device.shard import AttentionMatch, ShardModel, find_attention_layers, shard_model

__all__ = [
    "AttentionLayerHint",
    "DistCollective",
    "ShardHints",
    "ShardTensor",
    "AttentionMatch",
    "ShardModel",
    "find_attention_layers",
    "shard_model",
]
