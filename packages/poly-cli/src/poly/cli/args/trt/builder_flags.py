"""The TensorRT builder flags of the config group beyond precisions, profiles and caches: sparse
weights, version and hardware compatibility, refit and stripped plans, DLA, tactic sources,
preview features, quantization flags, auxiliary streams, weight streaming, runtime platform,
tiling, timing-cache misses and the compilation cache. ``TrtConfigArgs`` lists them in its
``--help`` block and passes ``create_config_kwargs()`` to ``poly.trt.CreateConfig``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.multi_option import multi_option, stack_options
from poly.cli.trt_values import trt_enum_name, trt_enum_names

_NONE_GIVEN = "\x00none"
"""The value of a zero-or-more flag given without values (`--tactic-sources` alone)."""

_BOOLEAN_FLAGS = ("sparse_weights", "version_compatible", "exclude_lean_runtime", "error_on_timing_cache_miss",
                  "disable_compilation_cache", "refittable", "strip_plan", "allow_gpu_fallback", "weight_streaming",
                  "direct_io")
"""The on/off flags, by the ``poly.trt.CreateConfig`` argument each sets."""

_ENUM_LISTS = {"tactic_sources": "TacticSource", "preview_features": "PreviewFeature",
               "quantization_flags": "QuantizationFlag"}
"""Zero-or-more flags: CreateConfig argument -> the ``trt`` enum their names come from."""

_ENUM_VALUES = {"hardware_compatibility_level": "HardwareCompatibilityLevel", "runtime_platform": "RuntimePlatform",
                "tiling_optimization_level": "TilingOptimizationLevel"}
"""One-name flags: CreateConfig argument -> the ``trt`` enum their name comes from."""


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def zero_or_more_option(*decls: Any, **kwargs: Any) -> Any:
    """A multi-value option that may also be given with no value (argparse's ``nargs="*"``):
    its value is then ``(_NONE_GIVEN,)``, which ``given_names`` reads as an empty list."""
    return multi_option(*decls, is_flag=False, flag_value=_NONE_GIVEN, metavar="[VALUE ...]", **kwargs)


def given_names(values: Any) -> list[str] | None:
    """A zero-or-more option's value: None when absent, [] when given alone, else its values."""
    values = list(values or ())
    if not values:
        return None
    return [value for value in values if value != _NONE_GIVEN]


@dataclass(frozen=True)
class TrtBuilderFlags:
    """Builder flags, each None (or False) when not given: TensorRT's default then applies."""

    sparse_weights: bool = False
    version_compatible: bool = False
    exclude_lean_runtime: bool = False
    error_on_timing_cache_miss: bool = False
    disable_compilation_cache: bool = False
    refittable: bool = False
    strip_plan: bool = False
    use_dla: bool = False
    allow_gpu_fallback: bool = False
    weight_streaming: bool = False
    direct_io: bool = False
    tactic_sources: tuple[str, ...] | None = None
    """``trt.TacticSource`` names; () disables every source."""
    preview_features: tuple[str, ...] | None = None
    """``trt.PreviewFeature`` names to enable; () disables them all."""
    quantization_flags: tuple[str, ...] | None = None
    """``trt.QuantizationFlag`` names to enable; () clears them all."""
    hardware_compatibility_level: str | None = None
    runtime_platform: str | None = None
    tiling_optimization_level: str | None = None
    max_aux_streams: int | None = None

    @classmethod
    def options(cls, tensor_formats: bool = False) -> Any:
        """The flags, in Polygraphy's order; ``tensor_formats`` adds --direct-io (with the
        --tensor-formats of the network group, on `convert`)."""
        options = [
            click.option("--sparse-weights", is_flag=True, help="Let TensorRT use optimizations for sparse weights."),
            click.option("--version-compatible", is_flag=True,
                         help="Build an engine that later TensorRT versions can run (version compatible)."),
            click.option("--exclude-lean-runtime", is_flag=True,
                         help="Leave the lean runtime out of a --version-compatible engine (load one with "
                         "--load-runtime to run it)."),
            click.option("--error-on-timing-cache-miss", is_flag=True,
                         help="Fail the build when a tactic to time is not in the timing cache."),
            click.option("--disable-compilation-cache", is_flag=True,
                         help="Do not cache the code TensorRT compiles just in time."),
            zero_or_more_option("--tactic-sources",
                                help="Tactic sources to enable, named as in trt.TacticSource (any case), e.g. "
                                "`--tactic-sources jit_convolutions`; the flag alone disables every source. "
                                "Default: TensorRT's."),
            click.option("--refittable", is_flag=True, help="Build an engine whose weights can be refitted later."),
            click.option("--strip-plan", is_flag=True, help="Build the engine without its refittable weights."),
            click.option("--use-dla", is_flag=True, help="Make DLA the default device type (full TensorRT only)."),
            click.option("--allow-gpu-fallback", is_flag=True,
                         help="Let layers DLA cannot run fall back to the GPU (with --use-dla)."),
            zero_or_more_option("--preview-features",
                                help="Preview features to enable, named as in trt.PreviewFeature (any case); the "
                                "flag alone disables them all. Default: TensorRT's."),
            click.option("--hardware-compatibility-level",
                         help="Hardware compatibility level, named as in trt.HardwareCompatibilityLevel (any case), "
                         "e.g. `ampere_plus`."),
            click.option("--max-aux-streams", type=click.IntRange(min=0),
                         help="Most auxiliary streams TensorRT may run layers on in parallel. Default: TensorRT's "
                         "heuristics."),
            zero_or_more_option("--quantization-flags",
                                help="INT8 quantization flags to enable, named as in trt.QuantizationFlag (any "
                                "case); the flag alone clears them all (full TensorRT only)."),
            click.option("--weight-streaming", is_flag=True,
                         help="Build an engine whose weights can stream from host memory (strongly typed networks; "
                         "set the budget with --weight-streaming-budget)."),
            click.option("--runtime-platform",
                         help="Platform the engine will run on, named as in trt.RuntimePlatform (any case), e.g. "
                         "`same_as_build`, `windows_amd64`."),
            click.option("--tiling-optimization-level",
                         help="Tiling optimization level, named as in trt.TilingOptimizationLevel (any case): "
                         "none, fast, moderate, full."),
        ]
        if tensor_formats:
            options.append(click.option("--direct-io", is_flag=True,
                                        help="Allow no reformatting layers at network I/O tensors whose formats "
                                        "are set (with --tensor-formats)."))
        return stack_options(options)

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> TrtBuilderFlags:
        """Checks the enum names against the installed TensorRT (a bad one is a usage error
        naming the flag) and --exclude-lean-runtime's need for --version-compatible."""
        values = {name: bool(kwargs.get(name)) for name in (*_BOOLEAN_FLAGS, "use_dla")}
        if values["exclude_lean_runtime"] and not values["version_compatible"]:
            raise click.UsageError("--exclude-lean-runtime needs --version-compatible")
        for name, enum_name in _ENUM_LISTS.items():
            names = given_names(kwargs.get(name))
            values[name] = None if names is None else tuple(trt_enum_names(_flag(name), enum_name, names))  # type: ignore[assignment]
        for name, enum_name in _ENUM_VALUES.items():
            values[name] = trt_enum_name(_flag(name), enum_name, kwargs.get(name))  # type: ignore[assignment]
        values["max_aux_streams"] = kwargs.get("max_aux_streams")  # type: ignore[assignment]
        return cls(**values)  # type: ignore[arg-type]

    def create_config_kwargs(self) -> dict:
        """The ``poly.trt.CreateConfig`` arguments of the flags given (absent ones left out)."""
        kwargs = {name: True for name in (*_BOOLEAN_FLAGS, "use_dla") if getattr(self, name)}
        for name in (*_ENUM_LISTS, *_ENUM_VALUES, "max_aux_streams"):
            value = getattr(self, name)
            if value is not None:
                kwargs[name] = list(value) if isinstance(value, tuple) else value  # type: ignore[assignment]
        return kwargs
