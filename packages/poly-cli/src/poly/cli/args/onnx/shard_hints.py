"""The sharding hints group: the flags of `poly template shard-hints` (and of
`poly multi-device shard --one-shot`) that decide the hints written for a model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.multi_option import multi_option, stack_options

# kept here so that `--help` imports no onnx; the tests check they are poly.onnx.multi_device's
PARALLELISMS = ("CP", "TP")
CP_TYPES = ("native", "fused")
REDUCE_OPS = ("sum", "prod", "min", "max", "avg")


def _ints(flag: Any, values: Any) -> list[Any]:
    try:
        return [int(v) for v in values]
    except ValueError:
        raise click.BadParameter(f"expected integers, got {' '.join(values)}", param_hint=f"'{flag}'") from None


def _non_negative(flag: Any, value: Any) -> Any:
    if value is not None and value < 0:
        raise click.BadParameter(f"must not be negative (got {value})", param_hint=f"'{flag}'")
    return value


@dataclass(frozen=True)
class ShardHintArgs:
    """How sharding hints are suggested for a model."""

    hint_options: object
    """A ``poly.onnx.multi_device.ShardHintOptions``."""

    @classmethod
    def options(cls) -> Any:
        """The group's click options."""
        return stack_options([
            click.option("--parallelism", type=click.Choice(PARALLELISMS), default="CP", show_default=True,
                         help="Type of parallelism (`poly multi-device shard` implements CP)."),
            click.option("--root", type=int, default=-1, show_default=True, help="Rank of the root process."),
            click.option("--gpus", type=int, default=0, show_default=True,
                         help="Number of participating GPUs (0: all)."),
            multi_option("--groups", help="NCCL group indices the collectives run in (omit for all ranks)."),
            click.option("--cp-type", type=click.Choice(CP_TYPES), default="native", show_default=True,
                         help="How attention layers are sharded: native all-gathers K and V; fused replaces the "
                         "layer by one fused Attention node."),
            click.option("--no-suggest-io", is_flag=True,
                         help="Do not suggest the model inputs and outputs to shard from the attention layers' "
                         "dependencies."),
            click.option("--i-idx", type=int, default=0, show_default=True,
                         help="Default sequence axis of the input tensors."),
            click.option("--o-idx", type=int, default=0, show_default=True,
                         help="Default sequence axis of the output tensors."),
            click.option("--k-idx", type=int, default=0, show_default=True, help="Sequence axis of the K tensors."),
            click.option("--v-idx", type=int, default=0, show_default=True, help="Sequence axis of the V tensors."),
            click.option("--i-rank", type=int, default=None,
                         help="Rank of the inputs where the model does not record their shapes."),
            click.option("--o-rank", type=int, default=None,
                         help="Rank of the outputs where the model does not record their shapes."),
            click.option("--kv-rank", type=int, default=None,
                         help="Rank of K and V where the model does not record their shapes."),
            click.option("--reduce-op", type=click.Choice(REDUCE_OPS), default="max", show_default=True,
                         help="Reduction of the reduce-scatter operations."),
            click.option("--attention-pattern", type=click.IntRange(0, 1), default=0, show_default=True,
                         help="Attention pattern to look for: 0, MatMul -> Softmax -> MatMul (1, Polygraphy's "
                         "scaled variant, is not implemented)."),
            multi_option("--q-shuffle", help="Transpose permutation applied to Q before a fused attention node."),
            multi_option("--k-shuffle", help="Transpose permutation applied to K before a fused attention node."),
            multi_option("--v-shuffle", help="Transpose permutation applied to V before a fused attention node."),
            click.option("--is-causal", is_flag=True, help="Whether the fused attention node is causal."),
            click.option("--nb-rank", type=int, default=1, show_default=True, help="Number of ranks."),
        ], section="Shard Hints")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> ShardHintArgs:
        from poly.onnx.multi_device import ShardHintOptions

        if kwargs["attention_pattern"] != 0:
            raise click.BadParameter("pattern 1 is not implemented by poly; use 0 (MatMul -> Softmax -> MatMul)",
                                     param_hint="'--attention-pattern'")
        for flag in ("gpus", "i_idx", "o_idx", "k_idx", "v_idx", "i_rank", "o_rank", "kv_rank"):
            _non_negative("--" + flag.replace("_", "-"), kwargs[flag])
        if kwargs["nb_rank"] < 1:
            raise click.BadParameter(f"must be at least 1 (got {kwargs['nb_rank']})", param_hint="'--nb-rank'")

        def shuffle(flag: Any) -> Any:
            values = kwargs[flag.lstrip("-").replace("-", "_")]
            return _ints(flag, values) if values else None

        return cls(ShardHintOptions(
            parallelism=kwargs["parallelism"], root=kwargs["root"], gpus=kwargs["gpus"],
            groups=_ints("--groups", kwargs["groups"] or ()), cp_type=kwargs["cp_type"],
            suggest_io=not kwargs["no_suggest_io"], i_idx=kwargs["i_idx"], o_idx=kwargs["o_idx"],
            k_idx=kwargs["k_idx"], v_idx=kwargs["v_idx"], i_rank=kwargs["i_rank"], o_rank=kwargs["o_rank"],
            kv_rank=kwargs["kv_rank"], reduce_op=kwargs["reduce_op"], q_shuffle=shuffle("--q-shuffle"),
            k_shuffle=shuffle("--k-shuffle"), v_shuffle=shuffle("--v-shuffle"), is_causal=kwargs["is_causal"],
            nb_rank=kwargs["nb_rank"]))
