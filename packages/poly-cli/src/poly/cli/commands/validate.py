"""`poly validate`: stream a dataset through one backend and compare every sample with its
golden outputs (files, or a second backend), with a progress bar and JSON/HTML reports."""

from __future__ import annotations

import sys
import time

import click

from poly.cli.args.comparison import ComparisonArgs
from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx_load import OnnxLoadArgs
from poly.cli.args.onnxrt import OnnxrtArgs
from poly.cli.args.ray_cluster import PathOrUri, RayArgs
from poly.cli.args.runners import RunnerArgs
from poly.cli.args.trt_config import TrtConfigArgs
from poly.cli.args.trt_network import TrtNetworkArgs
from poly.cli.errors import EXIT_FAIL, EXIT_PASS, EXIT_USAGE, error_line, handle_errors
from poly.cli.multi_option import multi_option


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
        done = f"{acc.samples} samples"
        if self.total:  # the dataset's size is known: percent done and time left
            left = max(self.total - acc.samples, 0)
            eta = _duration(left / rate) if rate > 0 else "?"
            done = (f"{acc.samples}/{self.total} samples ({min(100.0, 100.0 * acc.samples / self.total):.0f}%) | "
                    f"{eta} left")
        text = (f"{done} | {rate:.1f} samples/s | pass rate {pass_rate} | "
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
        self.total = None  # the end: what was done, without time left
        if self.tty:
            self.stream.write("\r\033[K" + self.line(acc, elapsed) + "\n")
            self.stream.flush()


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options(required=False, example=True)
@RunnerArgs.options(
    onnxrt_help="Validate with ONNX-Runtime (the first backend given is the one under test).",
    onnx_ref_help="Validate with the ONNX reference evaluator; given second, it produces the golden outputs.")
@TrtConfigArgs.options()
@RunnerArgs.trt_options()
@TrtNetworkArgs.options()
@multi_option("--dataset", "--load-inputs", "--load-input-data", "dataset", type=PathOrUri(exists=True),
              help="A directory of .npz feed dicts (one sample per file, sorted by name) or input files "
              "(Polygraphy's inputs JSON, .npz). With --ray also .npy samples, Parquet files (one row per "
              "sample) and URIs (s3://...).")
@click.option("--data-loader-script", metavar="FILE[:FUNC]",
              help="Python script defining a data loader (function `load_data` by default).")
@multi_option("--golden", "--load-outputs", "--load-results", "golden", type=PathOrUri(exists=True),
              help="Golden outputs: a directory of .npz files named as the dataset's files, or saved "
              "RunResults (JSON/.npz, or a per-iteration directory) in dataset order.")
@OnnxrtArgs.options(providers_help="ONNX-Runtime execution providers in priority order.")
@OnnxLoadArgs.options()
@ComparisonArgs.tolerance_options(
    check_error_stat_help="Error statistic to check (elemwise, max, mean, median, quantile), optionally per output.")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Comparison threads.")
@click.option("--processes", type=click.IntRange(min=1), default=None,
              help="Worker processes, each with its own loaded runner and its share of the CPUs (the runs "
              "in one process share Python's interpreter lock, which caps them at a few cores). Needs "
              "--dataset as one local directory of sample files and --golden as one directory (or a "
              "second backend). Default: one process.")
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
@RayArgs.options()
@LoggingArgs.options()
@handle_errors
def validate(dataset, data_loader_script, golden, workers, processes, infer_threads, max_failures, batch, prefetch,
             worst_k, report_json, report_html, **kwargs):
    """Validate a model over a whole dataset against golden outputs, streaming.

    Memory stays bounded whatever the dataset size. Exit status: 0 when every sample passed,
    1 when a sample failed or could not be read, 2 for a usage error.
    """
    from poly.core import G_LOGGER

    runners = RunnerArgs.from_kwargs(kwargs)
    model = ModelArgs.from_kwargs(kwargs)
    if not runners.names:
        raise click.UsageError("Choose a backend: --onnxrt, --onnx-ref or --trt.")
    if len(runners.names) > 2:
        raise click.UsageError("Give one backend to validate, and optionally a second one for the golden outputs.")
    if not dataset and not data_loader_script:
        raise click.UsageError("Missing --dataset (or --load-inputs / --data-loader-script).")
    if dataset and data_loader_script:
        raise click.UsageError("Give either --dataset or --data-loader-script, not both.")
    if bool(golden) == (len(runners.names) == 2):
        raise click.UsageError("Give the golden outputs either as --golden files or as a second backend, "
                               "exactly one of the two.")
    comparison = ComparisonArgs.from_kwargs(kwargs)
    ray_args = RayArgs.from_kwargs(kwargs)
    ray_args.check_paths(dataset=dataset, golden=golden)
    if ray_args.enabled:
        from poly.cli.validate_ray.cli_entry import validate_on_ray

        outcome, config = validate_on_ray(ray_args, model, runners, comparison, dataset, data_loader_script, golden,
                                          kwargs, max_failures=max_failures, batch=batch, worst_k=worst_k,
                                          progress=Progress())
        return _finish(outcome, config, report_json, report_html)
    if processes is not None and processes > 1:
        return _validate_in_processes(processes, model, runners, comparison, dataset, data_loader_script, golden,
                                      kwargs, max_failures=max_failures, batch=batch, worst_k=worst_k,
                                      report_json=report_json, report_html=report_html)

    from poly.compare.dataset import (
        RunnerReference,
        SampleChecker,
        ValidationPipeline,
        open_dataset,
        open_reference,
    )

    try:
        samples = open_dataset(list(dataset), data_loader_script)
    except ValueError as err:
        error_line(f"Error: {err}")
        return EXIT_USAGE
    onnxrt = OnnxrtArgs.from_kwargs(kwargs)
    infer_threads = _infer_threads(infer_threads, runners, onnxrt)
    runners.check_engine_model(model, name_other=False)
    # The TensorRT flags are parsed (and a bad one reported) only when TensorRT runs.
    trt_config = TrtConfigArgs.from_kwargs(kwargs) if runners.uses_trt else None
    session_options = _session_options(infer_threads) if "onnxrt" in runners.names else None
    built = runners.create_runners(model, OnnxLoadArgs.from_kwargs(kwargs), onnxrt, TrtNetworkArgs.from_kwargs(kwargs),
                                   trt_config, session_options=session_options)
    from poly.compare.dataset import DirectoryDataset

    if len(built) == 2:
        reference = RunnerReference(built[1])
    else:
        reference = open_reference(list(golden), by_name=isinstance(samples, DirectoryDataset))
    tolerances = comparison.tolerances()
    checker = SampleChecker(threads=1, **tolerances)
    progress = Progress(total=_dataset_size(samples))
    G_LOGGER.start(f"VALIDATING | {built[0].name} on {model.path} against {reference.describe()}")
    pipeline = ValidationPipeline(built[0], samples, reference, checker, workers=workers, max_failures=max_failures,
                                  prefetch=prefetch, batch=batch, worst_k=worst_k, progress=progress,
                                  infer_threads=infer_threads)
    start = time.perf_counter()
    outcome = pipeline.run()
    progress.finish(outcome.accumulator, time.perf_counter() - start)

    config = {"model": str(model.path), "runner": built[0].name, "reference": reference.describe(),
              "dataset": ", ".join(dataset) or data_loader_script,
              "atol": tolerances["atol"], "rtol": tolerances["rtol"],
              "check_error_stat": tolerances["check_error_stat"] or "elemwise",
              "error_quantile": tolerances["error_quantile"], "workers": workers, "batch": batch}
    return _finish(outcome, config, report_json, report_html)


def _validate_in_processes(processes, model, runners, comparison, dataset, data_loader_script, golden, kwargs,
                           max_failures, batch, worst_k, report_json, report_html):
    """`--processes N`: the run spread over N worker processes (poly.cli.validate_processes)."""
    import os

    from poly.cli.validate_processes import ProcessValidation, local_work_items, processes_supported
    from poly.compare.dataset import SampleChecker
    from poly.core import G_LOGGER
    from poly.onnx.session import usable_cpus

    if not processes_supported():
        raise click.UsageError("--processes needs worker processes started by fork (Linux, macOS); "
                               "use --workers and --infer-threads here.")
    if data_loader_script or len(dataset) != 1 or not os.path.isdir(dataset[0]):
        raise click.UsageError("With --processes, give --dataset as one local directory of sample files "
                               "(.npz, .json).")
    if golden and (len(golden) != 1 or not os.path.isdir(golden[0])):
        raise click.UsageError("With --processes, --golden is one directory of golden outputs named as the "
                               "samples (or give a second backend).")
    if not local_work_items(dataset[0]):
        raise click.UsageError(f"--dataset '{dataset[0]}' holds no sample files (.npz, .json).")
    runners.check_engine_model(model, name_other=False)
    onnxrt = OnnxrtArgs.from_kwargs(kwargs)
    trt_config = TrtConfigArgs.from_kwargs(kwargs) if runners.uses_trt else None
    # One inference at a time per process, its session pool sized to the process's share of the CPUs.
    session_options = None
    if "onnxrt" in runners.names:
        from poly.core import lazy_import

        session_options = lazy_import("onnxruntime").SessionOptions()
        session_options.intra_op_num_threads = max(1, usable_cpus() // processes)
        session_options.inter_op_num_threads = 1
    built = runners.create_runners(model, OnnxLoadArgs.from_kwargs(kwargs), onnxrt, TrtNetworkArgs.from_kwargs(kwargs),
                                   trt_config, session_options=session_options)
    tolerances = comparison.tolerances()
    reference = golden[0] if golden else built[1].name
    progress = Progress(total=len(local_work_items(dataset[0])))
    G_LOGGER.start(f"VALIDATING | {built[0].name} on {model.path} against {reference} | {processes} processes")
    validation = ProcessValidation(
        built[0], dataset[0], SampleChecker(threads=1, **tolerances), golden=golden[0] if golden else None,
        reference_runner=built[1] if len(built) == 2 else None, processes=processes, max_failures=max_failures,
        worst_k=worst_k, batch=batch, progress=progress)
    outcome = validation.run()
    progress.finish(outcome.accumulator, outcome.elapsed)
    config = {"model": str(model.path), "runner": built[0].name, "reference": reference, "dataset": dataset[0],
              "atol": tolerances["atol"], "rtol": tolerances["rtol"],
              "check_error_stat": tolerances["check_error_stat"] or "elemwise",
              "error_quantile": tolerances["error_quantile"], "processes": processes, "batch": batch}
    return _finish(outcome, config, report_json, report_html)


def _finish(outcome, config, report_json, report_html):
    """Writes the reports of ``outcome``, logs its summary, and returns the exit status."""
    from poly.compare.dataset import build_report, write_html_report, write_json_report
    from poly.core import G_LOGGER

    report = build_report(outcome, config)
    if report_json:
        write_json_report(report, report_json)
        G_LOGGER.info(f"Wrote JSON report to {report_json}")
    if report_html:
        write_html_report(report, report_html)
        G_LOGGER.info(f"Wrote HTML report to {report_html}")
    _log_summary(G_LOGGER, outcome)
    if outcome.interrupted:
        G_LOGGER.error("INTERRUPTED | the report covers the samples done so far")
        return EXIT_FAIL
    return EXIT_PASS if outcome.passed else EXIT_FAIL


def _duration(seconds: float) -> str:
    """``seconds`` as 42s, 3m05s or 2h07m."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _dataset_size(samples):
    """The number of samples of a dataset directory (one per file); None where it is not known
    without reading the data (input files, a data-loader script)."""
    from poly.compare.dataset import DirectoryDataset

    return len(samples.files()) if isinstance(samples, DirectoryDataset) else None


def _infer_threads(infer_threads, runners: RunnerArgs, onnxrt: OnnxrtArgs) -> int:
    """--infer-threads, or its default: 2 for ONNX-Runtime on the CPU when there are 2+ CPUs."""
    if infer_threads is not None:
        return infer_threads
    from poly.onnx.session import usable_cpus

    all_ort = all(name == "onnxrt" for name in runners.names)
    return 2 if all_ort and onnxrt.cpu_only and usable_cpus() >= 2 else 1


def _session_options(infer_threads):
    """ONNX-Runtime session options whose thread pools share the CPUs among --infer-threads."""
    if infer_threads <= 1:
        return None
    from poly.core import lazy_import
    from poly.onnx.session import usable_cpus

    onnxruntime = lazy_import("onnxruntime")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = max(1, usable_cpus() // infer_threads)
    options.inter_op_num_threads = 1
    return options


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
