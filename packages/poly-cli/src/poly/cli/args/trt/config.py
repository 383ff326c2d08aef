"""The TensorRT config group: the builder flags (optimization profiles, precisions, INT8
calibration, timing caches, memory pools, optimization level, profiling verbosity, tactic
replays, and the other builder flags of ``TrtBuilderFlags``) and where the built engine is saved
(--save-engine)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from poly.cli.args.trt.builder_flags import TrtBuilderFlags
from poly.cli.args.trt.network import strongly_typed_option
from poly.cli.args.trt.scripts import TrtConfigScriptArgs
from poly.cli.gen_script.call_tree import Assign, ListOf, Ref, Var, run_statements
from poly.cli.multi_option import multi_option, occurrences, stack_options
from poly.cli.value_parsing import parse_num_bytes, parse_shapes

if TYPE_CHECKING:
    from poly.cli.args.model import ModelArgs
    from poly.cli.args.trt.network import TrtNetworkArgs

PROFILING_VERBOSITIES = ("layer_names_only", "detailed", "none")
PRECISION_CONSTRAINTS = ("obey", "prefer", "none")
CALIBRATOR_ALIASES = {"IInt8EntropyCalibrator2": "entropy", "IInt8EntropyCalibrator": "entropy1",
                      "IInt8MinMaxCalibrator": "minmax", "IInt8LegacyCalibrator": "legacy"}
"""--calibration-base-class names of TensorRT's calibrator classes -> poly.trt.Calibrator's ``algo``."""


def input_shape_defaults(kwargs: Mapping) -> dict[str, list]:
    """--input-shapes (``input_shapes`` in ``kwargs``, from the data loader group) as the shapes a
    profile uses for the inputs its --trt-*-shapes do not name; a dynamic dimension (a name or
    a negative number) becomes 1."""
    from poly.core.constants import (
        DEFAULT_SHAPE_VALUE,  # poly.trt's too, without importing TensorRT's package
    )

    shapes = parse_shapes("--input-shapes", kwargs.get("input_shapes"))
    return {name: [DEFAULT_SHAPE_VALUE if isinstance(d, str) or d < 0 else d for d in shape]
            for name, shape in shapes.items()}


def parse_profiles(kwargs: Mapping) -> list:
    """--trt-min/opt/max-shapes (``trt_min_shapes``... in ``kwargs``) -> a list of
    poly.trt.Profile, one per min/opt/max triple; a bad triple is a usage error. --input-shapes
    fills each profile's min, opt and max for the inputs those flags leave out; without any
    --trt-*-shapes it makes the one profile (min = opt = max), as in Polygraphy."""
    groups = {key: occurrences(kwargs.get(f"trt_{key}_shapes")) for key in ("min", "opt", "max")}
    counts = {key: len(value) for key, value in groups.items()}
    defaults = input_shape_defaults(kwargs)
    if not any(counts.values()):
        if not defaults:
            return []
        groups = {key: [[]] for key in groups}
        counts = dict.fromkeys(groups, 1)
    if len(set(counts.values())) != 1:
        raise click.UsageError(
            "--trt-min-shapes, --trt-opt-shapes and --trt-max-shapes must be given the same number of times "
            f"(one triple per profile), got {counts['min']}, {counts['opt']} and {counts['max']}"
        )
    from poly.trt import Profile
    from poly.trt.builder.profile import shape_tuple_problem

    profiles = []
    for index in range(counts["min"]):
        parsed = {key: {**defaults, **parse_shapes(f"--trt-{key}-shapes", groups[key][index])} for key in groups}
        names = set(parsed["min"]) | set(parsed["opt"]) | set(parsed["max"])
        profile = Profile()
        for name in sorted(names):
            missing = [key for key in parsed if name not in parsed[key]]
            if missing:
                raise click.UsageError(f"Profile {index}: input '{name}' has no --trt-{missing[0]}-shapes entry")
            shapes = [parsed[key][name] for key in ("min", "opt", "max")]
            if any(isinstance(d, str) for shape in shapes for d in shape):
                raise click.UsageError(f"Profile {index}: input '{name}' must have numeric dimensions, got {shapes}")
            problem = shape_tuple_problem(name, *shapes)
            if problem:
                raise click.UsageError(f"Profile {index}: {problem}")
            profile.add(name, *shapes)
        profiles.append(profile)
    return profiles


def parse_pool_limits(values: Any) -> dict[str, int]:
    """`workspace:1G tactic_shared_memory:64K` -> {"workspace": 1073741824, ...}."""
    limits = {}
    for arg in values or ():
        name, sep, size = arg.rpartition(":")
        if not sep or not name:
            raise click.BadParameter(f"{arg!r}: expected POOL:SIZE, e.g. workspace:1G", param_hint="'--pool-limit'")
        limits[name] = parse_num_bytes("--pool-limit", arg, size)
    return limits


def reject_save_engine(kwargs: Mapping, reason: str) -> None:
    """A usage error naming ``reason`` when --save-engine is given to a command that writes its
    engines elsewhere (checked before the rest of the group is parsed)."""
    if kwargs.get("save_engine"):
        raise click.UsageError(f"--save-engine: {reason}")


@dataclass(frozen=True)
class TrtConfigArgs:
    """How TensorRT builds the engine, and where the engine and its timing cache are saved."""

    profiles: tuple = ()
    """Optimization profiles (poly.trt.Profile), one per --trt-min/opt/max-shapes triple."""
    tf32: bool = False
    fp16: bool = False
    bf16: bool = False
    fp8: bool = False
    int8: bool = False
    precision_constraints: str | None = None
    calibration_cache: str | None = None
    calibration_algo: str | None = None
    """poly.trt.Calibrator's ``algo`` (entropy, entropy1, minmax, legacy); None: its default."""
    load_timing_cache: str | None = None
    save_timing_cache: str | None = None
    pool_limits: dict[str, int] = field(default_factory=dict)
    """--pool-limit: memory pool name -> size in bytes."""
    builder_optimization_level: int | None = None
    profiling_verbosity: str | None = None
    save_engine: str | None = None
    save_tactics: str | None = None
    load_tactics: str | None = None
    builder_flags: TrtBuilderFlags = field(default_factory=TrtBuilderFlags)
    """The other builder flags (--sparse-weights, --tactic-sources, --version-compatible...)."""
    scripts: TrtConfigScriptArgs = field(default_factory=TrtConfigScriptArgs)
    """The config script options (--trt-config-script, --trt-config-postprocess-script)."""

    @classmethod
    def options(cls, tensor_formats: bool = False) -> Any:
        """The builder flags, and --save-engine; ``tensor_formats`` adds --direct-io."""
        return stack_options([
            multi_option("--trt-min-shapes", per_occurrence=True,
                         help="Minimum shapes of an optimization profile, e.g. `x:[1,3,224,224]`. Repeat the "
                         "min/opt/max triple for more profiles."),
            multi_option("--trt-opt-shapes", per_occurrence=True,
                         help="Optimum shapes of an optimization profile (one occurrence per profile)."),
            multi_option("--trt-max-shapes", per_occurrence=True,
                         help="Maximum shapes of an optimization profile (one occurrence per profile)."),
            click.option("--tf32", is_flag=True, help="Enable TF32 precision in TensorRT."),
            click.option("--fp16", is_flag=True, help="Enable FP16 precision in TensorRT (full TensorRT only)."),
            click.option("--bf16", is_flag=True, help="Enable BF16 precision in TensorRT (full TensorRT only)."),
            click.option("--fp8", is_flag=True, help="Enable FP8 precision in TensorRT (full TensorRT only)."),
            click.option("--int8", is_flag=True, help="Enable INT8 precision in TensorRT (full TensorRT only)."),
            strongly_typed_option(),
            click.option("--precision-constraints", type=click.Choice(PRECISION_CONSTRAINTS),
                         help="Whether layer precisions are obeyed, preferred or ignored (none)."),
            click.option("--calibration-cache",
                         help="INT8 calibration cache: used when it exists, written after calibration otherwise."),
            click.option("--calibration-base-class", "--calib-base-cls", "calibration_base_class",
                         help="Calibrator algorithm: entropy (IInt8EntropyCalibrator2), entropy1, minmax, legacy."),
            click.option("--load-timing-cache", help="Timing cache to start the build from."),
            click.option("--save-timing-cache",
                         help="Where to save the build's timing cache (merged into an existing one)."),
            multi_option("--pool-limit", "--memory-pool-limit", "pool_limit",
                         help="Memory pool limits as POOL:SIZE, e.g. `workspace:1G tactic_shared_memory:64K`."),
            click.option("--builder-optimization-level", type=click.IntRange(0, 5),
                         help="Builder optimization level: 0 (fastest build) to 5 (most optimized engine)."),
            click.option("--profiling-verbosity", type=click.Choice(PROFILING_VERBOSITIES),
                         help="Layer information kept in the engine (for `inspect model` on engines)."),
            click.option("--save-engine", type=click.Path(dir_okay=False), help="Path to save the TensorRT engine."),
            click.option("--save-tactics", "--save-tactic-replay", "save_tactics", type=click.Path(dir_okay=False),
                         help="Save the tactics TensorRT picks to this replay file (full TensorRT with algorithm "
                         "selectors only)."),
            click.option("--load-tactics", "--load-tactic-replay", "load_tactics", type=click.Path(exists=True),
                         help="Make TensorRT pick the tactics of this replay file (full TensorRT with algorithm "
                         "selectors only)."),
            TrtBuilderFlags.options(tensor_formats=tensor_formats),
            TrtConfigScriptArgs.options(),
        ], section="TensorRT Builder Configuration")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> TrtConfigArgs:
        """Parses the profiles and --pool-limit, so that a bad value is a usage error (exit 2)
        before anything is loaded or built."""
        name = kwargs["calibration_base_class"]
        return cls(
            profiles=tuple(parse_profiles(kwargs)),
            pool_limits=parse_pool_limits(kwargs["pool_limit"]),
            tf32=bool(kwargs["tf32"]),
            fp16=bool(kwargs["fp16"]),
            bf16=bool(kwargs["bf16"]),
            fp8=bool(kwargs["fp8"]),
            int8=bool(kwargs["int8"]),
            precision_constraints=kwargs["precision_constraints"],
            calibration_cache=kwargs["calibration_cache"],
            calibration_algo=CALIBRATOR_ALIASES.get(name, name) if name else None,
            load_timing_cache=kwargs["load_timing_cache"],
            save_timing_cache=kwargs["save_timing_cache"],
            builder_optimization_level=kwargs["builder_optimization_level"],
            profiling_verbosity=kwargs["profiling_verbosity"],
            save_engine=kwargs["save_engine"],
            save_tactics=kwargs["save_tactics"],
            load_tactics=kwargs["load_tactics"],
            builder_flags=TrtBuilderFlags.from_kwargs(kwargs),
            scripts=TrtConfigScriptArgs.from_kwargs(kwargs),
        )

    def with_precision_constraints(self, default: str) -> TrtConfigArgs:
        """These flags with --precision-constraints ``default`` when it was not given."""
        return dataclasses.replace(self, precision_constraints=self.precision_constraints or default)

    def config_statements(self) -> list:
        """The statements that set ``config``: ``profiles`` and CreateConfig (with --int8, a
        calibrator fed by the variable ``data_loader``), or the --trt-config-script function in
        its place; then PostprocessConfig for --trt-config-postprocess-script. --save-tactics with
        --load-tactics is a usage error."""
        if self.scripts.script:
            return self.scripts.config_statements([])
        statements = []
        if self.profiles:
            profile = Ref("poly.trt", "Profile")
            exprs = []
            for shapes_by_name in self.profiles:
                expr = profile()
                for name, shapes in shapes_by_name.items():
                    expr = expr.attr("add")(name, min=list(shapes.min), opt=list(shapes.opt), max=list(shapes.max))
                exprs.append(expr)
            statements.append(Assign("profiles", ListOf(exprs)))
        calibrator = None
        if self.int8:
            calibrator = Ref("poly.trt", "Calibrator")(Var("data_loader"), cache=self.calibration_cache,
                                                       algo=self.calibration_algo)
        statements.append(Assign("config", Ref("poly.trt", "CreateConfig")(
            tf32=self.tf32 or None, fp16=self.fp16 or None, bf16=self.bf16 or None, fp8=self.fp8 or None,
            int8=self.int8 or None, profiles=Var("profiles") if self.profiles else None, calibrator=calibrator,
            precision_constraints=self.precision_constraints, load_timing_cache=self.load_timing_cache,
            memory_pool_limits=dict(self.pool_limits) or None,
            builder_optimization_level=self.builder_optimization_level,
            profiling_verbosity=self.profiling_verbosity, algorithm_selector=self._algorithm_selector(),
            **self.builder_flags.create_config_kwargs())))
        return self.scripts.config_statements(statements)

    def _algorithm_selector(self) -> Any:
        if self.save_tactics and self.load_tactics:
            raise click.UsageError("--save-tactics and --load-tactics cannot be used together")
        if self.save_tactics:
            return Ref("poly.trt", "TacticRecorder")(self.save_tactics)
        if self.load_tactics:
            return Ref("poly.trt", "TacticReplayer")(self.load_tactics)
        return None

    def engine_statements(self, model: ModelArgs, network: TrtNetworkArgs, parser_path: Any = None) -> list:
        """The statements that set ``engine_bytes``, the serialized engine of MODEL: read from
        MODEL when it is an engine (after --plugins), else ``network`` (the network ``network``
        creates, from ``parser_path`` when given), ``config_statements`` and the engine built from
        them (saved to --save-engine when given)."""
        if model.is_engine:
            read = Ref("poly.trt", "BytesFromPath")(model.path, what="engine")
            return [Assign("engine_bytes", network.edits.plugins_expr(read))]
        statements = [Assign("network", network.network_expr(model, parser_path)), *self.config_statements()]
        return statements + self._build_statements()

    def _build_statements(self) -> list:
        expr = Ref("poly.trt", "EngineBytesFromNetwork")(Var("network"), config=Var("config"),
                                                         save_timing_cache=self.save_timing_cache)
        if self.save_engine:
            expr = Ref("poly.trt", "SaveEngine")(expr, self.save_engine)
        return [Assign("engine_bytes", expr)]

    def create_config(self, data_loader: Any = None) -> Any:
        """The config loader of ``config_statements`` (with --int8, the calibrator is fed by
        ``data_loader``; nothing when None: the calibration cache must then hold the scales)."""
        env = {"data_loader": data_loader if data_loader is not None else []}
        return run_statements(self.config_statements(), env)["config"]

    def build_engine_bytes(self, network: Any, data_loader: Any = None) -> Any:
        """EngineBytesFromNetwork: ``network`` (a network loader) built with ``create_config``,
        the timing cache saved to --save-timing-cache."""
        env = {"network": network, "data_loader": data_loader if data_loader is not None else []}
        build = Ref("poly.trt", "EngineBytesFromNetwork")(Var("network"), config=Var("config"),
                                                          save_timing_cache=self.save_timing_cache)
        return run_statements([*self.config_statements(), Assign("engine_bytes", build)], env)["engine_bytes"]

    def load_engine_bytes(self, model: ModelArgs, network: TrtNetworkArgs, data_loader: Any = None) -> Any:
        """The serialized engine of MODEL (``engine_statements`` run): read from MODEL when it is
        an engine, else built from the network ``network`` creates (and saved to --save-engine)."""
        env = {"data_loader": data_loader if data_loader is not None else []}
        return run_statements(self.engine_statements(model, network), env)["engine_bytes"]
