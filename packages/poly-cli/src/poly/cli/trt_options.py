"""The TensorRT flags of `poly run`, `poly convert` and `poly validate`, with Polygraphy's spelling."""

from __future__ import annotations

import click

from poly.cli.options import multi_option, record_runner

PROFILING_VERBOSITIES = ("layer_names_only", "detailed", "none")
PRECISION_CONSTRAINTS = ("obey", "prefer", "none")


def _options(opts):
    def decorate(func):
        for opt in reversed(opts):
            func = opt(func)
        return func

    return decorate


def trt_output_options(func):
    """--trt-outputs, --trt-exclude-outputs."""
    return _options([
        multi_option("--trt-outputs", help="Names of TensorRT network outputs to mark, or `mark all`."),
        multi_option("--trt-exclude-outputs", help="Names of TensorRT network outputs to unmark."),
    ])(func)


def trt_runner_options(func):
    """--trt, --trt-outputs, --trt-exclude-outputs."""
    func = trt_output_options(func)
    return click.option("--trt", is_flag=True, callback=record_runner, help="Run inference using TensorRT.")(func)


def trt_build_options(func):
    """Builder flags: profiles, precisions, calibration, timing caches, memory pools, engine saving."""
    return _options([
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
        click.option("--strongly-typed", is_flag=True,
                     help="Build a strongly typed network: precisions come from the model's types."),
        click.option("--precision-constraints", type=click.Choice(PRECISION_CONSTRAINTS),
                     help="Whether layer precisions are obeyed, preferred or ignored (none)."),
        click.option("--calibration-cache",
                     help="INT8 calibration cache: used when it exists, written after calibration otherwise."),
        click.option("--calibration-base-class", "--calib-base-cls", "calibration_base_class",
                     help="Calibrator algorithm: entropy (IInt8EntropyCalibrator2), entropy1, minmax, legacy."),
        click.option("--load-timing-cache", help="Timing cache to start the build from."),
        click.option("--save-timing-cache", help="Where to save the build's timing cache (merged into an existing one)."),
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
    ])(func)


def trt_options(func):
    """Every TensorRT flag of `poly run`."""
    return trt_build_options(trt_runner_options(func))
