"""`poly run`: run a model with one or more backends, compare their outputs (to each other
and to saved results), and report PASSED or FAILED."""

from __future__ import annotations

import sys
import time

import click

from poly.cli.errors import EXIT_FAIL, EXIT_PASS, handle_errors
from poly.cli.model_args import onnx_loader, resolve_model
from poly.cli.options import logging_options, multi_option, record_runner
from poly.cli.shape_parsing import parse_per_output, parse_ranges, parse_shapes
from poly.cli.trt_options import trt_options

COMPARE_FUNCS = ["simple", "indices", "l2", "cosine_similarity", "distance_metrics", "psnr", "snr",
                 "quality_metrics", "perceptual_metrics"]


def _runner_flags(func):
    opts = [
        click.option("--onnxrt", is_flag=True, callback=record_runner,
                     help="Run inference using ONNX-Runtime."),
        click.option("--onnx-ref", "onnx_ref", is_flag=True, callback=record_runner,
                     help="Run inference using the ONNX reference evaluator (onnx.reference)."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def _compare_flags(func):
    opts = [
        multi_option("--atol", help="Absolute tolerance, optionally per output: `--atol 1e-5 out0:1e-3`."),
        multi_option("--rtol", help="Relative tolerance, optionally per output: `--rtol 1e-5 out0:1e-3`."),
        multi_option("--check-error-stat",
                     help="Error statistic to check (elemwise, max, mean, median, quantile), optionally "
                     "per output: `--check-error-stat max out0:mean`."),
        multi_option("--error-quantile", help="Error quantile to compare (0 to 1), optionally per output."),
        click.option("--infinities-compare-equal", is_flag=True,
                     help="Matching +-inf values in outputs have an absolute difference of 0."),
        click.option("--no-shape-check", is_flag=True, help="Disable checking that output shapes match exactly."),
        multi_option("--compare", "--compare-func", "compare_func", type=click.Choice(COMPARE_FUNCS),
                     help="Comparison function(s): simple (default), indices, l2, cosine_similarity, "
                     "distance_metrics, psnr, snr, quality_metrics, perceptual_metrics."),
        multi_option("--index-tolerance", help="Index tolerance for `--compare indices`, optionally per output."),
        multi_option("--l2-threshold", "--l2-tolerance", "l2_threshold", help="L2 norm threshold."),
        multi_option("--cosine-similarity-threshold", help="Cosine similarity threshold."),
        multi_option("--psnr-threshold", "--psnr-tolerance", "psnr_threshold", help="PSNR threshold (dB)."),
        multi_option("--snr-threshold", "--snr-tolerance", "snr_threshold", help="SNR threshold (dB)."),
        multi_option("--lpips-threshold", help="LPIPS threshold (needs torch and lpips)."),
        click.option("--fail-fast", is_flag=True, help="Stop comparing after the first failure."),
        click.option("--check-average", is_flag=True,
                     help="Check each metric averaged over all iterations instead of per iteration."),
        click.option("--save-heatmaps", type=click.Path(file_okay=False),
                     help="Directory in which to save heatmaps of the absolute and relative error."),
        click.option("--save-error-metrics-plot", type=click.Path(file_okay=False),
                     help="Directory in which to save error metrics plots."),
        click.option("--validate", is_flag=True, help="Check outputs for NaNs and Infs."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def _data_flags(func):
    opts = [
        multi_option("--input-shapes", "--inputs", "input_shapes",
                     help="Input shapes for dynamic inputs: `--input-shapes x:[1,3,224,224] y:[1,10]`."),
        click.option("--seed", type=int, help="Seed of the synthetic input data (default 1)."),
        multi_option("--val-range", help="Range of synthetic values [MIN,MAX], optionally per input: "
                     "`--val-range [0,1] x:[-1,1]`."),
        click.option("--iterations", "--iters", "iterations", type=click.IntRange(min=1),
                     help="Number of inference iterations (default 1)."),
        click.option("--data-loader-script", metavar="FILE[:FUNC]",
                     help="Python script defining a data loader (function `load_data` by default)."),
        click.option("--data-loader-func-name", help="[DEPRECATED] Function name in --data-loader-script."),
        multi_option("--load-inputs", "--load-input-data", "load_inputs",
                     type=click.Path(exists=True), help="Input data files (JSON or .npz) to use."),
        click.option("--save-inputs", "--save-input-data", "save_inputs", type=click.Path(),
                     help="Path to save the inference inputs (JSON, .npz, or a directory)."),
        click.option("--save-outputs", "--save-results", "save_outputs", type=click.Path(),
                     help="Path to save the inference results (JSON, .npz, or a directory)."),
        multi_option("--load-outputs", "--load-results", "load_outputs", type=click.Path(exists=True),
                     help="Saved results to compare against (e.g. from --save-outputs)."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model_file", required=False, metavar="MODEL")
@click.option("--example", is_flag=True, help="Use the bundled example CNN as MODEL.")
@click.option("--model-type", type=click.Choice(["onnx", "engine"]),
              help="Type of MODEL: onnx, or a serialized TensorRT engine (default: from the extension).")
@_runner_flags
@trt_options
@multi_option("--onnx-outputs", help="Names of ONNX outputs to mark, or `mark all`.")
@multi_option("--onnx-exclude-outputs", help="Names of ONNX outputs to unmark.")
@click.option("--shape-inference", "--do-shape-inference", "shape_inference", is_flag=True,
              help="Run ONNX shape inference when loading the model.")
@multi_option("--providers", "--execution-providers", "providers",
              help="ONNX-Runtime execution providers in priority order (exact or partial names, e.g. cpu cuda).")
@_data_flags
@_compare_flags
@logging_options
@handle_errors
def run(model_file, example, **opts):
    """Run inference and compare results across backends.

    Backends run in the order given; every one is compared to the first, and to --load-outputs.
    """
    start = time.time()
    ctx = click.get_current_context()
    command = " ".join(sys.argv) if sys.argv and sys.argv[0].endswith("poly") else f"poly run {model_file or ''}".strip()
    from poly.core.logger import G_LOGGER

    runner_names = ctx.meta.get("poly.runners", [])
    if runner_names or opts["load_outputs"] or opts["validate"]:
        model = resolve_model(model_file, example)
    else:
        model = resolve_model(model_file, example) if (model_file or example) else None
    _check_value_flags(opts)
    G_LOGGER.start(f"RUNNING | Command: {command}")

    passed = _run(model, runner_names, opts)
    status = "PASSED" if passed else "FAILED"
    message = f"{status} | Runtime: {time.time() - start:.3f}s | Command: {command}"
    (G_LOGGER.finish if passed else G_LOGGER.error)(message)
    return EXIT_PASS if passed else EXIT_FAIL


def _check_value_flags(opts):
    """Parses every structured flag up front so that a bad value is a usage error (exit 2)."""
    opts["input_shapes"] = parse_shapes("--input-shapes", opts["input_shapes"])
    opts["val_range"] = parse_ranges("--val-range", opts["val_range"])
    for flag in ("atol", "rtol", "error_quantile", "index_tolerance", "l2_threshold", "cosine_similarity_threshold",
                 "psnr_threshold", "snr_threshold", "lpips_threshold"):
        opts[flag] = parse_per_output("--" + flag.replace("_", "-"), opts[flag])
    stats = ("elemwise", "max", "mean", "median", "quantile")

    def stat(arg, text):
        if text not in stats:
            raise click.BadParameter(f"{arg!r}: choose from {', '.join(stats)}", param_hint="'--check-error-stat'")
        return text

    opts["check_error_stat"] = parse_per_output("--check-error-stat", opts["check_error_stat"], stat)
    from poly.cli.trt_args import check_builder_flags

    check_builder_flags(opts)


def _build_runners(model, runner_names, opts):
    from poly.cli.trt_args import is_engine_path, trt_runner

    runners = []
    if is_engine_path(model, opts["model_type"]):
        others = [name for name in runner_names if name != "trt"]
        if others:
            raise click.UsageError(f"MODEL {model!r} is a TensorRT engine; only --trt can run it (not --{others[0]})")
    else:
        loader = onnx_loader(model, opts["onnx_outputs"], opts["onnx_exclude_outputs"], opts["shape_inference"])
    for name in runner_names:
        if name == "trt":
            runners.append(trt_runner(model, opts, data_loader=_data_loader(opts) if opts["int8"] else None))
        elif name == "onnxrt":
            from poly.onnx import OnnxrtRunner, SessionFromOnnx

            providers = list(opts["providers"]) or None
            runners.append(OnnxrtRunner(SessionFromOnnx(loader, providers=providers)))
        elif name == "onnx_ref":
            from poly.onnx import OnnxRefRunner

            runners.append(OnnxRefRunner(loader))
    return runners


def _data_loader(opts):
    from poly.compare import DataLoader, DataLoaderFromScript, load_inputs
    from poly.core.logger import G_LOGGER

    if opts["load_inputs"]:
        for path in opts["load_inputs"]:
            G_LOGGER.info(f"Loading input data from {path}")
        return load_inputs(list(opts["load_inputs"]))
    if opts["data_loader_script"]:
        spec = opts["data_loader_script"]
        if opts["data_loader_func_name"] and ":" not in spec:
            spec = f"{spec}:{opts['data_loader_func_name']}"
        return DataLoaderFromScript(spec)
    metadata = None
    if opts["input_shapes"]:
        from poly.core.metadata import TensorMetadata

        metadata = TensorMetadata()
        for name, shape in opts["input_shapes"].items():
            metadata.add(name, dtype=None, shape=shape)
    return DataLoader(seed=opts["seed"], iterations=opts["iterations"], input_metadata=metadata,
                      val_range=opts["val_range"])


def _compare_funcs(opts):
    from poly.compare import CompareFunc

    names = list(opts["compare_func"]) or ["simple"]
    check_shapes = not opts["no_shape_check"]
    fail_fast = opts["fail_fast"]
    funcs = []
    for name in names:
        if name == "simple":
            funcs.append(CompareFunc.simple(
                check_shapes=check_shapes, rtol=opts["rtol"], atol=opts["atol"], fail_fast=fail_fast,
                check_error_stat=opts["check_error_stat"], error_quantile=opts["error_quantile"],
                infinities_compare_equal=opts["infinities_compare_equal"] or None,
                save_heatmaps=opts["save_heatmaps"], save_error_metrics_plot=opts["save_error_metrics_plot"]))
        elif name == "indices":
            funcs.append(CompareFunc.indices(index_tolerance=opts["index_tolerance"], fail_fast=fail_fast))
        elif name == "distance_metrics":
            funcs.append(CompareFunc.distance_metrics(
                l2_tolerance=opts["l2_threshold"], cosine_similarity_threshold=opts["cosine_similarity_threshold"],
                check_shapes=check_shapes, fail_fast=fail_fast))
        elif name == "quality_metrics":
            funcs.append(CompareFunc.quality_metrics(
                psnr_tolerance=opts["psnr_threshold"], snr_tolerance=opts["snr_threshold"],
                check_shapes=check_shapes, fail_fast=fail_fast))
        elif name == "l2":
            funcs.append(CompareFunc.l2(opts["l2_threshold"], check_shapes, fail_fast))
        elif name == "cosine_similarity":
            funcs.append(CompareFunc.cosine_similarity(opts["cosine_similarity_threshold"], check_shapes, fail_fast))
        elif name == "psnr":
            funcs.append(CompareFunc.psnr(opts["psnr_threshold"], check_shapes, fail_fast))
        elif name == "snr":
            funcs.append(CompareFunc.snr(opts["snr_threshold"], check_shapes, fail_fast))
        elif name == "perceptual_metrics":
            funcs.append(CompareFunc.perceptual_metrics(opts["lpips_threshold"], check_shapes, fail_fast))
    return funcs[0] if len(funcs) == 1 else funcs


def _run(model, runner_names, opts) -> bool:
    from poly.compare import Comparator, RunResults
    from poly.core.logger import G_LOGGER

    runners = _build_runners(model, runner_names, opts) if model is not None else []
    run_results = Comparator.run(runners, data_loader=_data_loader(opts), save_inputs_path=opts["save_inputs"],
                                 save_outputs_path=opts["save_outputs"])
    for path in opts["load_outputs"]:
        G_LOGGER.info(f"Loading inference results from {path}")
        run_results.extend(RunResults.load(path))

    passed = True
    if opts["validate"]:
        passed = bool(Comparator.validate(run_results, check_inf=True, check_nan=True)) and passed
    if len(run_results) > 1:
        accuracy = Comparator.compare_accuracy(run_results, fail_fast=opts["fail_fast"],
                                               compare_func=_compare_funcs(opts),
                                               check_average=opts["check_average"])
        passed = bool(accuracy) and passed
    return passed
