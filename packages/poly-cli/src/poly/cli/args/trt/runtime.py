"""The TensorRT runtime flags of `poly run`: the runtime that deserializes the engine
(--load-runtime) and how ``poly.trt.TrtRunner`` runs it (--optimization-profile,
--allocation-strategy, --weight-streaming-budget)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.gen_script.call_tree import Ref, Value, evaluate
from poly.cli.multi_option import stack_options
from poly.cli.value_parsing import parse_num_bytes

ALLOCATION_STRATEGY_CHOICES = ("static", "profile", "runtime")
"""``poly.trt.ALLOCATION_STRATEGIES`` (spelled out here: importing poly.trt to build ``--help``
would slow every command down; a test keeps the two equal)."""


def parse_weight_streaming_budget(value: str | None) -> tuple[int | None, float | None]:
    """`--weight-streaming-budget` -> ``(budget_bytes, percent)``: `50%` -> (None, 50.0),
    `1G` -> (1073741824, None), `-1` (automatic) and `-2` (disabled) stay as they are."""
    if not value:
        return None, None
    flag = "--weight-streaming-budget"
    if value.endswith("%"):
        try:
            percent = float(value[:-1])
        except ValueError:
            raise click.BadParameter(f"{value!r}: {value[:-1]!r} is not a percentage", param_hint=f"'{flag}'") from None
        if not 0 <= percent <= 100:
            raise click.BadParameter(f"{value!r}: a percentage must be between 0% and 100%", param_hint=f"'{flag}'")
        return None, percent
    budget = parse_num_bytes(flag, value, value)
    if budget < -2:
        raise click.BadParameter(f"{value!r}: use -2 (disabled), -1 (automatic), a size >= 0 or a percentage",
                                 param_hint=f"'{flag}'")
    return budget, None


@dataclass(frozen=True)
class TrtRuntimeArgs:
    """How the engine is deserialized and run."""

    load_runtime: str | None = None
    optimization_profile: int | None = None
    allocation_strategy: str | None = None
    weight_streaming_budget: int | None = None
    """Bytes of weights kept on the device; -1 automatic, -2 disabled."""
    weight_streaming_percent: float | None = None

    @classmethod
    def options(cls, load_runtime: bool = True) -> Any:
        """--load-runtime (unless ``load_runtime`` is False), --optimization-profile,
        --allocation-strategy and --weight-streaming-budget."""
        options = []
        if load_runtime:
            options.append(click.option(
                "--load-runtime", type=click.Path(exists=True, dir_okay=False),
                help="A TensorRT runtime library (libnvinfer_lean.so...) to deserialize the engine with: "
                "runs --version-compatible engines built with --exclude-lean-runtime."))
        options += [
            click.option("--optimization-profile", type=click.IntRange(min=0),
                         help="Index of the optimization profile to run with (default 0)."),
            click.option("--allocation-strategy", type=click.Choice(ALLOCATION_STRATEGY_CHOICES),
                         help="How the context's activation memory is allocated: static (once, for every "
                         "profile and shape), profile (for the active profile), runtime (for the current "
                         "input shapes)."),
            click.option("--weight-streaming-budget", metavar="BUDGET",
                         help="Device memory for the weights of an engine built with --weight-streaming: -2 "
                         "disables streaming, -1 lets TensorRT choose, a size in bytes (K, M, G suffixes) or a "
                         "percentage of the streamable weights, e.g. `50%`."),
        ]
        return stack_options(options, section="TensorRT Inference")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> TrtRuntimeArgs:
        budget, percent = parse_weight_streaming_budget(kwargs.get("weight_streaming_budget"))
        return cls(load_runtime=kwargs.get("load_runtime"), optimization_profile=kwargs.get("optimization_profile"),
                   allocation_strategy=kwargs.get("allocation_strategy"), weight_streaming_budget=budget,
                   weight_streaming_percent=percent)

    def engine_expr(self, engine_bytes: Any) -> Any:
        """The call tree of ``EngineFromBytes`` over the serialized engine ``engine_bytes`` (a
        call tree), deserialized with the --load-runtime runtime (``LoadRuntime``) when given."""
        runtime = Ref("poly.trt", "LoadRuntime")(self.load_runtime) if self.load_runtime else None
        return Ref("poly.trt", "EngineFromBytes")(engine_bytes, runtime=runtime)

    def runner_expr(self, engine_bytes: Any) -> Any:
        """The call tree of the ``TrtRunner`` of the engine ``engine_bytes`` loads, with these settings."""
        return Ref("poly.trt", "TrtRunner")(self.engine_expr(engine_bytes),
                                            optimization_profile=self.optimization_profile,
                                            allocation_strategy=self.allocation_strategy,
                                            weight_streaming_budget=self.weight_streaming_budget,
                                            weight_streaming_percent=self.weight_streaming_percent)

    def load_engine(self, engine_bytes: Any) -> Any:
        """``EngineFromBytes`` over the serialized engine loader ``engine_bytes``."""
        return evaluate(self.engine_expr(Value(engine_bytes)))

    def create_runner(self, engine_bytes: Any) -> Any:
        """The ``TrtRunner`` of the engine ``engine_bytes`` loads, with these settings."""
        return evaluate(self.runner_expr(Value(engine_bytes)))
