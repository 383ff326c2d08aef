"""
The sharding hints file of `poly multi-device shard`, in Polygraphy's JSON format (``ShardHints``
holding ``DistCollective``, ``ShardTensor`` and ``AttentionLayerHint`` objects, each marked with
its ``"polygraphy_class"``). Files are written as Polygraphy 0.53 writes them (the collectives'
settings under ``dist_collectives``); the earlier layout, with ``group_size``, ``root``,
``groups`` and ``reduce_scatter_reduce_op`` at the top level, is read too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from poly.core import DataFormatError
from poly.core.json import Decoder, Encoder, add_json_methods

__all__ = ["DistCollective", "FusedAttention", "ShardTensor", "AttentionLayerHint", "ShardHints", "REDUCE_OPS", "PARALLELISMS", "SHARDABLE_PARALLELISMS"]

REDUCE_OPS = ("sum", "prod", "min", "max", "avg")
"""Reductions a reduce-scatter may use."""
PARALLELISMS = ("CP", "TP")
"""Kinds of parallelism a hints file may name: context and tensor parallelism."""
SHARDABLE_PARALLELISMS = ("CP",)
"""Kinds of parallelism `poly multi-device shard` implements: context parallelism."""


def _entry(dct: Any, key: Any, kind: Any, what: Any) -> Any:
    if key not in dct:
        raise DataFormatError(f"invalid sharding hints: {what} has no '{key}' entry")
    value = dct[key]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise DataFormatError(f"invalid sharding hints: '{key}' of {what} must be an integer, not {value!r}")
    if kind is not int and not isinstance(value, kind):
        raise DataFormatError(f"invalid sharding hints: '{key}' of {what} must be a {kind.__name__}, not {value!r}")
    return value


def _optional_int(dct: Any, key: Any, what: Any) -> Any:
    value = dct.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise DataFormatError(f"invalid sharding hints: '{key}' of {what} must be an integer or null, not {value!r}")
    return value


@add_json_methods("dist collective configuration")
@dataclass
class DistCollective:
    """The settings every DistCollective node of the sharded model gets."""

    group_size: int = 0
    """GPUs taking part; 0: all."""
    root: int = -1
    """Root rank of the collectives."""
    nb_rank: int = 1
    """Number of ranks."""
    groups: list[int] = field(default_factory=list)
    """NCCL group indices the collectives run in; []: all ranks."""
    reduce_scatter_reduce_op: str = "max"
    """The reduction of the reduce-scatters."""

    def node_attrs(self, collective_operation: Any, reduce_op: Any) -> dict[Any, Any]:
        """The attributes of one DistCollective node (``groups`` is added after export)."""
        return {"group_size": self.group_size, "root": self.root, "nb_rank": self.nb_rank,
                "reduce_op": reduce_op, "collective_operation": collective_operation}


@Encoder.register(DistCollective)
def _encode_dist_collective(dist: Any) -> dict[Any, Any]:
    return {"group_size": dist.group_size, "root": dist.root, "nb_rank": dist.nb_rank,
            "reduce_op": dist.reduce_scatter_reduce_op, "groups": dist.groups}


def _groups(dct: Any, what: Any) -> Any:
    groups = dct.get("groups") or []
    if not isinstance(groups, list) or any(isinstance(g, bool) or not isinstance(g, int) for g in groups):
        raise DataFormatError(f"invalid sharding hints: 'groups' of {what} must be a list of integers, not {groups!r}")
    return groups


def _int_or(dct: Any, key: Any, default: Any, what: Any) -> Any:
    value = _optional_int(dct, key, what)
    return default if value is None else value


@Decoder.register(DistCollective)
def _decode_dist_collective(dct: Any) -> Any:
    what = "a DistCollective"
    reduce_op = dct.get("reduce_op") or "max"
    if not isinstance(reduce_op, str):
        raise DataFormatError(f"invalid sharding hints: 'reduce_op' of {what} must be a string, not {reduce_op!r}")
    return DistCollective(_int_or(dct, "group_size", 0, what), _int_or(dct, "root", -1, what),
                          _int_or(dct, "nb_rank", 1, what), _groups(dct, what), reduce_op)


@add_json_methods("fused attention replacement")
@dataclass
class FusedAttention:
    """An attention layer's replacement by one fused Attention node (written by
    `poly template shard-hints --cp-type fused`; `poly multi-device shard` does not apply it)."""

    is_causal: bool = False
    q_shuffle: list[int] | None = None
    """Transpose permutation applied to Q before the fused node; None: none."""
    k_shuffle: list[int] | None = None
    v_shuffle: list[int] | None = None
    nb_rank: int = 1


@Encoder.register(FusedAttention)
def _encode_fused_attention(fused: Any) -> dict[Any, Any]:
    return {"is_causal": fused.is_causal, "q_shuffle": fused.q_shuffle, "k_shuffle": fused.k_shuffle,
            "v_shuffle": fused.v_shuffle, "nb_rank": fused.nb_rank}


@Decoder.register(FusedAttention)
def _decode_fused_attention(dct: Any) -> Any:
    what = "a FusedAttention"
    return FusedAttention(_entry(dct, "is_causal", bool, what), dct.get("q_shuffle"), dct.get("k_shuffle"),
                          dct.get("v_shuffle"), _int_or(dct, "nb_rank", 1, what))


@add_json_methods("shard tensor")
@dataclass
class ShardTensor:
    """A model input to reduce-scatter, or a model output to all-gather."""

    name: str
    seq_len_idx: int = 0
    """The axis holding the sequence length; another than 0 puts Transposes around the collective."""
    rank: int | None = None
    """The tensor's rank where the model does not record its shape (needed when seq_len_idx != 0)."""


@Encoder.register(ShardTensor)
def _encode_shard_tensor(tensor: Any) -> dict[Any, Any]:
    return {"name": tensor.name, "seq_len_idx": tensor.seq_len_idx, "rank": tensor.rank}


@Decoder.register(ShardTensor)
def _decode_shard_tensor(dct: Any) -> Any:
    what = "a ShardTensor"
    return ShardTensor(_entry(dct, "name", str, what), _entry(dct, "seq_len_idx", int, what),
                       _optional_int(dct, "rank", what))


@add_json_methods("attention layer hint")
@dataclass
class AttentionLayerHint:
    """How to shard one attention layer, found by the name of its Q tensor."""

    q: str
    gather_kv: bool = True
    """All-gather the layer's K and V tensors."""
    gather_q: bool = False
    """All-gather Q too (the model then ends unsharded: no all-gather is put at its outputs)."""
    replace: FusedAttention | None = None
    """A fused-attention replacement, which `poly multi-device shard` does not implement; None:
    keep the layer and gather its tensors."""


@Encoder.register(AttentionLayerHint)
def _encode_attention_layer_hint(hint: Any) -> dict[Any, Any]:
    return {"q": hint.q, "gather_kv": hint.gather_kv, "gather_q": hint.gather_q, "replace": hint.replace}


@Decoder.register(AttentionLayerHint)
def _decode_attention_layer_hint(dct: Any) -> Any:
    what = "an AttentionLayerHint"
    return AttentionLayerHint(_entry(dct, "q", str, what), _entry(dct, "gather_kv", bool, what),
                              _entry(dct, "gather_q", bool, what), dct.get("replace"))


@add_json_methods("shard hints")
@dataclass
class ShardHints:
    """The whole hints file."""

    parallelism: str = "CP"
    attention_layers: list[AttentionLayerHint] = field(default_factory=list)
    dist_collectives: DistCollective = field(default_factory=DistCollective)
    inputs: list[ShardTensor] = field(default_factory=list)
    """Model inputs to reduce-scatter."""
    outputs: list[ShardTensor] = field(default_factory=list)
    """Model outputs to all-gather."""
    k_seq_len_idx: int = 0
    v_seq_len_idx: int = 0
    kv_rank: int | None = None
    """Rank of the K and V tensors where the model does not record their shapes."""

    def check(self, source: str = "sharding hints") -> Any:
        """Raises ``DataFormatError`` naming ``source`` and the entry that poly cannot shard with."""
        if self.parallelism not in SHARDABLE_PARALLELISMS:
            raise DataFormatError(f"{source}: parallelism {self.parallelism!r} is not supported by poly "
                                  f"(supported: {', '.join(SHARDABLE_PARALLELISMS)})")
        op = self.dist_collectives.reduce_scatter_reduce_op
        if op not in REDUCE_OPS:
            raise DataFormatError(f"{source}: reduce op {op!r} is not one of {', '.join(REDUCE_OPS)}")
        for name in ("k_seq_len_idx", "v_seq_len_idx"):
            if getattr(self, name) < 0:
                raise DataFormatError(f"{source}: {name} must not be negative (got {getattr(self, name)})")
        for kind, items, typ in (("attention_layers", self.attention_layers, AttentionLayerHint),
                                 ("inputs", self.inputs, ShardTensor), ("outputs", self.outputs, ShardTensor)):
            for item in items:
                if not isinstance(item, typ):
                    raise DataFormatError(f"{source}: an entry of {kind} is not a {typ.__name__}: {item!r}")
        for layer in self.attention_layers:
            if layer.replace is not None:
                raise DataFormatError(f"{source}: attention layer with q={layer.q!r} asks for a fused-attention "
                                      "replacement ('replace'), which poly does not implement")
        if not isinstance(self.dist_collectives, DistCollective):
            raise DataFormatError(f"{source}: dist_collectives is not a DistCollective: {self.dist_collectives!r}")
        return self


@Encoder.register(ShardHints)
def _encode_shard_hints(hints: Any) -> dict[Any, Any]:
    return {
        "parallelism": hints.parallelism,
        "attention_layers": hints.attention_layers,
        "dist_collectives": hints.dist_collectives,
        "inputs": hints.inputs,
        "outputs": hints.outputs,
        "k_seq_len_idx": hints.k_seq_len_idx,
        "v_seq_len_idx": hints.v_seq_len_idx,
        "kv_rank": hints.kv_rank,
    }


@Decoder.register(ShardHints)
def _decode_shard_hints(dct: Any) -> Any:
    what = "ShardHints"
    if "dist_collectives" in dct:
        dist = dct["dist_collectives"]
    else:  # the earlier layout: the collectives' settings at the top level
        dist = DistCollective(_int_or(dct, "group_size", 0, what), _int_or(dct, "root", 0, what), 1,
                              _groups(dct, what), dct.get("reduce_scatter_reduce_op", "max"))
    return ShardHints(
        parallelism=_entry(dct, "parallelism", str, what),
        attention_layers=_entry(dct, "attention_layers", list, what),
        dist_collectives=dist,
        inputs=_entry(dct, "inputs", list, what),
        outputs=_entry(dct, "outputs", list, what),
        k_seq_len_idx=_entry(dct, "k_seq_len_idx", int, what),
        v_seq_len_idx=_entry(dct, "v_seq_len_idx", int, what),
        kv_rank=_optional_int(dct, "kv_rank", what),
    )
