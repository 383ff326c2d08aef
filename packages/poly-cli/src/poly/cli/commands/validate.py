"""`poly validate`: stream a dataset through one backend and compare every sample with its
golden outputs (files, or a second backend), with a progress bar and JSON/HTML reports."""

from __future__ import annotations

import sys
import time

import click

from poly.cli.errors import EXIT_FAIL, EXIT_PASS, EXIT_USAGE, handle_errors
from poly.cli.lazy_group import error_line
from poly.cli.model_args import onnx_loader, resolve_model
from poly.cli.options import logging_options, multi_option, record_runner
from poly.cli.shape_parsing import parse_per_output
from poly.cli.trt_options import trt_options

_BACKENDS = ("onnxrt", "onnx_ref")


class Progress:
    """A one-line progress bar on a TTY, else a log line every ``interval`` seconds."""

    def __init__(self, total=None, stream=None, interval=5.0):
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.total = total
        self.interval = interval if not self.tty else 0.1
        self._last = -1e9

    def line(self, acc, elapsed):
        rate = acc.samples / elapsed if elapsed > 0 else 0.0
        pass_rate = f"{100 * acc.pass_rate:.2f}%" if acc.pass_rate is not None else "-"
        text = (f"{acc.samples} samples | {rate:.1f} samples/s | pass rate {pass_rate} | "
                f"failed {acc.failed} | unreadable {acc.errors}")
        return text

    def __call__(self, acc, elapsed):
        if elapsed - self._last < self.interval:
            return
        self._last = elapsed
        if self.tty:
            self.stream.write("\r\033[K" + self.line(acc, elapsed))
        else:
            self.stream.write("[I] validate | " + self.line(acc, elapsed) + "\n")
        self.stream.flush()

    def finish(self, acc, elapsed):
        if self.tty:
            self.stream.write("\r\033[K" + self.line(acc, elapsed) + "\n")
            self.stream.flush()


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model_file", required=False, metavar="MODEL")
@click.option("--example", is_flag=True, help="Use the bundled example CNN as MODEL.")
@click.option("--onnxrt", is_flag=True, callback=record_runner,
              help="Validate with ONNX-Runtime (the first backend given is the one under test).")
@click.option("--onnx-ref", "onnx_ref", is_flag=True, callback=record_runner,
              help="Validate with the ONNX reference evaluator; given second, it produces the golden outputs.")
@trt_options
@multi_option("--dataset", "--load-inputs", "--load-input-data", "dataset", type=click.Path(exists=True),
              help="A directory of .npz feed dicts (one sample per file, sorted by name) or input files "
              "(Polygraphy's inputs JSON, .npz).")
@click.option("--data-loader-script", metavar="FILE[:FUNC]",
              help="Python script defining a data loader (function `load_data` by default).")
@multi_option("--golden", "--load-outputs", "--load-results", "golden", type=click.Path(exists=True),
              help="Golden outputs: a directory of .npz files named as the dataset's files, or saved "
              "RunResults (JSON/.npz, or a per-iteration directory) in dataset order.")
@multi_option("--providers", "--execution-providers", "providers",
              help="ONNX-Runtime execution providers in priority order.")
@multi_option("--onnx-outputs", help="Names of ONNX outputs to mark, or `mark all`.")
@multi_option("--onnx-exclude-outputs", help="Names of ONNX outputs to unmark.")
@multi_option("--atol", help="Absolute tolerance, optionally per output: `--atol 1e-5 out0:1e-3`.")
@multi_option("--rtol", help="Relative tolerance, optionally per output: `--rtol 1e-5 out0:1e-3`.")
@multi_option("--check-error-stat", help="Error statistic to check (elemwise, max, mean, median, quantile), "
              "optionally per output.")
@multi_option("--error-quantile", help="Error quantile to compare (0 to 1), optionally per output.")
@click.option("--infinities-compare-equal", is_flag=True,
              help="Matching +-inf values in outputs have an absolute difference of 0.")
@click.option("--no-shape-check", is_flag=True, help="Disable checking that output shapes match exactly.")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Comparison threads.")
@click.option("--infer-threads", type=click.IntRange(min=1), default=None,
              help="Inferences run side by side (ONNX-Runtime only), each session thread pool sized to "
              "share the CPUs. Default: 2 for ONNX-Runtime on the CPU with at least 2 CPUs, else 1.")
@click.option("--max-failures", type=click.IntRange(min=1), help="Stop after this many failed samples.")
@click.option("--batch", type=click.IntRange(min=1), default=1, show_default=True,
              help="Stack this many samples along axis 0 per inference where the model allows it.")
@click.option("--prefetch", type=click.IntRange(min=1), default=8, show_default=True,
              help="Samples read ahead of inference.")
@click.option("--worst", "worst_k", type=click.IntRange(min=0), default=10, show_default=True,
              help="Number of worst samples to report.")
@click.option("--report-json", type=click.Path(dir_okay=False), help="Write the JSON report here.")
@click.option("--report", "report_html", type=click.Path(dir_okay=False),
              help="Write a self-contained HTML report here.")
@logging_options
@handle_errors
def validate(model_file, example, **opts):
    """Validate a model over a whole dataset against golden outputs, streaming.

    Memory stays bounded whatever the dataset size. Exit status: 0 when every sample passed,
    1 when a sample failed or could not be read, 2 for a usage error.
    """
    from poly.core.logger import G_LOGGER

    ctx = click.get_current_context()
    backends = ctx.meta.get("poly.runners", [])
    model = resolve_model(model_file, example)
    if not backends:
        raise click.UsageError("Choose a backend: --onnxrt, --onnx-ref or --trt.")
    if len(backends) > 2:
        raise click.UsageError("Give one backend to validate, and optionally a second one for the golden outputs.")
    if not opts["dataset"] and not opts["data_loader_script"]:
        raise click.UsageError("Missing --dataset (or --load-inputs / --data-loader-script).")
    if opts["dataset"] and opts["data_loader_script"]:
        raise click.UsageError("Give either --dataset or --data-loader-script, not both.")
    if bool(opts["golden"]) == (len(backends) == 2):
        raise click.UsageError("Give the golden outputs either as --golden files or as a second backend, "
                               "exactly one of the two.")
    checker_opts = _checker_options(opts)

    from poly.compare.validate import (
        RunnerReference,
        SampleChecker,
        ValidationPipeline,
        build_report,
        open_dataset,
        open_reference,
        write_html_report,
        write_json_report,
    )

    try:
        dataset = open_dataset(list(opts["dataset"]), opts["data_loader_script"])
    except ValueError as err:
        error_line(f"Error: {err}")
        return EXIT_USAGE
    _resolve_infer_threads(backends, opts)
    runners = _build_runners(model, backends, opts)
    from poly.compare.validate.dataset import DirectoryDataset

    if len(runners) == 2:
        reference = RunnerReference(runners[1])
    else:
        reference = open_reference(list(opts["golden"]), by_name=isinstance(dataset, DirectoryDataset))
    checker = SampleChecker(threads=1, **checker_opts)
    progress = Progress()
    G_LOGGER.start(f"VALIDATING | {runners[0].name} on {model} against {reference.describe()}")
    pipeline = ValidationPipeline(runners[0], dataset, reference, checker, workers=opts["workers"],
                                  max_failures=opts["max_failures"], prefetch=opts["prefetch"], batch=opts["batch"],
                                  worst_k=opts["worst_k"], progress=progress, infer_threads=opts["infer_threads"])
    start = time.perf_counter()
    outcome = pipeline.run()
    progress.finish(outcome.accumulator, time.perf_counter() - start)

    config = {"model": str(model), "runner": runners[0].name, "reference": reference.describe(),
              "dataset": ", ".join(opts["dataset"]) or opts["data_loader_script"],
              "atol": checker_opts["atol"], "rtol": checker_opts["rtol"],
              "check_error_stat": checker_opts["check_error_stat"] or "elemwise",
              "error_quantile": checker_opts["error_quantile"], "workers": opts["workers"], "batch": opts["batch"]}
    config = {k: (v if v is not None else None) for k, v in config.items()}
    report = build_report(outcome, config)
    if opts["report_json"]:
        write_json_report(report, opts["report_json"])
        G_LOGGER.info(f"Wrote JSON report to {opts['report_json']}")
    if opts["report_html"]:
        write_html_report(report, opts["report_html"])
        G_LOGGER.info(f"Wrote HTML report to {opts['report_html']}")
    _log_summary(G_LOGGER, outcome)
    if outcome.interrupted:
        G_LOGGER.error("INTERRUPTED | the report covers the samples done so far")
        return EXIT_FAIL
    return EXIT_PASS if outcome.passed else EXIT_FAIL


def _checker_options(opts):
    stats = ("elemwise", "max", "mean", "median", "quantile")

    def stat(arg, text):
        if text not in stats:
            raise click.BadParameter(f"{arg!r}: choose from {', '.join(stats)}", param_hint="'--check-error-stat'")
        return text

    return {
        "atol": parse_per_output("--atol", opts["atol"]),
        "rtol": parse_per_output("--rtol", opts["rtol"]),
        "error_quantile": parse_per_output("--error-quantile", opts["error_quantile"]),
        "check_error_stat": parse_per_output("--check-error-stat", opts["check_error_stat"], stat),
        "infinities_compare_equal": opts["infinities_compare_equal"],
        "check_shapes": not opts["no_shape_check"],
    }


def _resolve_infer_threads(backends, opts):
    """--infer-threads, or its default: 2 for ONNX-Runtime on the CPU when there are 2+ CPUs."""
    if opts["infer_threads"] is None:
        cpu_only = all(p.lower().startswith("cpu") for p in opts["providers"])
        all_ort = all(name == "onnxrt" for name in backends)
        from poly.onnx.session import usable_cpus

        opts["infer_threads"] = 2 if all_ort and cpu_only and usable_cpus() >= 2 else 1
    return opts["infer_threads"]


def _session_options(opts):
    """ONNX-Runtime session options whose thread pools share the CPUs among --infer-threads."""
    if opts["infer_threads"] <= 1:
        return None
    import onnxruntime

    from poly.onnx.session import usable_cpus

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = max(1, usable_cpus() // opts["infer_threads"])
    options.inter_op_num_threads = 1
    return options


def _build_runners(model, backends, opts):
    from poly.cli.trt_args import is_engine_path, trt_runner

    engine = is_engine_path(model)
    if engine and any(name != "trt" for name in backends):
        raise click.UsageError(f"MODEL {model!r} is a TensorRT engine; only --trt can run it")
    loader = None if engine else onnx_loader(model, opts["onnx_outputs"], opts["onnx_exclude_outputs"])
    runners = []
    for name in backends:
        if name == "trt":
            from poly.cli.trt_args import check_builder_flags

            check_builder_flags(opts)
            runners.append(trt_runner(model, opts))
        elif name == "onnxrt":
            from poly.onnx import OnnxrtRunner, SessionFromOnnx

            runners.append(OnnxrtRunner(SessionFromOnnx(loader, providers=list(opts["providers"]) or None,
                                                        session_options=_session_options(opts))))
        else:
            from poly.onnx import OnnxRefRunner

            runners.append(OnnxRefRunner(loader))
    return runners


def _log_summary(logger, outcome):
    acc = outcome.accumulator
    rate = f"{100 * acc.pass_rate:.2f}%" if acc.pass_rate is not None else "-"
    logger.info(f"Samples: {acc.samples} | passed: {acc.passed} | failed: {acc.failed} | unreadable: {acc.errors} "
                f"| pass rate: {rate} | {outcome.samples_per_second:.1f} samples/s")
    for entry in acc.error_samples[:10]:
        logger.warning(f"Unreadable sample {entry['index']} ({entry['file']}): {entry['error']}")
    for sample in acc.worst()[:5]:
        if sample["passed"]:
            break
        outs = ", ".join(f"{n}: max abs {r['max_absdiff']}, max rel {r['max_reldiff']}"
                         + (f" ({r['error']})" if r.get("error") else "")
                         for n, r in sample["outputs"].items() if not r["passed"])
        logger.error(f"FAILED | sample {sample['index']} ({sample['file']}) | {outs}")
    if outcome.stopped_early:
        logger.warning(f"Stopped early after {acc.failed} failed samples (--max-failures {outcome.max_failures})")
    if not outcome.interrupted:
        (logger.finish if outcome.passed else logger.error)(
            f"{'PASSED' if outcome.passed else 'FAILED'} | validate | {acc.passed}/{acc.samples} samples passed")
