"""The TensorRT flags, reserved with their Polygraphy spelling until poly-trt provides them."""

from __future__ import annotations

import click

from poly.cli.options import multi_option

TRT_UNAVAILABLE = "TensorRT support lands with poly-trt"


def _reject(ctx, param, value):
    if value in (None, False, ()):
        return value
    flag = param.opts[0]
    raise click.UsageError(f"{flag}: {TRT_UNAVAILABLE}; this flag is not available yet.", ctx=ctx)


def trt_options(func, with_runner=True):
    """Adds the reserved TensorRT flags; using one is a usage error (exit 2)."""
    opts = []
    if with_runner:
        opts += [
            click.option("--trt", is_flag=True, expose_value=False, callback=_reject,
                         help="Run inference using TensorRT. [reserved: lands with poly-trt]"),
            multi_option("--trt-outputs", expose_value=False, callback=_reject,
                         help="Names of TensorRT network outputs to mark, or `mark all`. [reserved]"),
            multi_option("--trt-exclude-outputs", expose_value=False, callback=_reject,
                         help="Names of TensorRT outputs to unmark. [reserved]"),
        ]
    opts += [
        multi_option("--trt-min-shapes", expose_value=False, callback=_reject,
                     help="Minimum shapes of a TensorRT optimization profile, e.g. X:[1,2,28,28]. [reserved]"),
        multi_option("--trt-opt-shapes", expose_value=False, callback=_reject,
                     help="Optimum shapes of a TensorRT optimization profile. [reserved]"),
        multi_option("--trt-max-shapes", expose_value=False, callback=_reject,
                     help="Maximum shapes of a TensorRT optimization profile. [reserved]"),
        click.option("--fp16", is_flag=True, expose_value=False, callback=_reject,
                     help="Enable FP16 precision in TensorRT. [reserved]"),
        click.option("--tf32", is_flag=True, expose_value=False, callback=_reject,
                     help="Enable TF32 precision in TensorRT. [reserved]"),
        click.option("--int8", is_flag=True, expose_value=False, callback=_reject,
                     help="Enable INT8 precision in TensorRT. [reserved]"),
        click.option("--calibration-cache", expose_value=False, callback=_reject,
                     help="Path to load/save a TensorRT INT8 calibration cache. [reserved]"),
        click.option("--save-engine", expose_value=False, callback=_reject,
                     help="Path to save the TensorRT engine. [reserved]"),
        click.option("--save-timing-cache", expose_value=False, callback=_reject,
                     help="Path to save the TensorRT timing cache. [reserved]"),
        click.option("--load-timing-cache", expose_value=False, callback=_reject,
                     help="Path to load a TensorRT timing cache. [reserved]"),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func
