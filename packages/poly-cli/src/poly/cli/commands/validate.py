"""`poly validate`: stream a dataset through one backend and compare every sample with its
golden outputs (files, or a second backend), with a progress bar and JSON/HTML reports."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.comparison import ComparisonArgs
from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.load import OnnxLoadArgs
from poly.cli.args.onnx.onnxrt import OnnxrtArgs
from poly.cli.args.ray_cluster import PathOrUri, RayArgs
from poly.cli.args.runners import RunnerArgs
from poly.cli.args.trt.config import TrtConfigArgs
from poly.cli.args.trt.network import TrtNetworkArgs
from poly.cli.errors import handle_errors
from poly.cli.help_sections import SectionedCommand
from poly.cli.multi_option import multi_option
from poly.core import G_LOGGER


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options(required=False, example=True)
@RunnerArgs.options(
    onnxrt_help="Validate with ONNX-Runtime (the first backend given is the one under test).",
    onnx_ref_help="Validate with the ONNX reference evaluator; given second, it produces the golden outputs.")
@TrtConfigArgs.options()
@RunnerArgs.trt_options()
@TrtNetworkArgs.options()
@multi_option("--dataset", "--load-inputs", "--load-input-data", "dataset", type=PathOrUri(exists=True),
              help="A directory of samples (one per file, sorted by name: .npz feed dicts, .json inputs, .npy "
              "arrays for a one-input model), a Parquet file or directory (one row per sample), or input "
              "files (Polygraphy's inputs JSON, .npz). With --ray also URIs (s3://...).")
@click.option("--data-loader-script", metavar="FILE[:FUNC]",
              help="Python script defining a data loader (function `load_data` by default).")
@multi_option("--golden", "--load-outputs", "--load-results", "golden", type=PathOrUri(exists=True),
              help="Golden outputs: a directory of .npz files named as the dataset's files, or saved "
              "RunResults (JSON/.npz, or a per-iteration directory) in dataset order.")
@OnnxrtArgs.options(providers_help="ONNX-Runtime execution providers in priority order.")
@OnnxLoadArgs.options()
@ComparisonArgs.tolerance_options()
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Comparison threads of a run in one process. Default: 2 (and one process: see --processes).")
@click.option("--processes", type=click.IntRange(min=1), default=None,
              help="Worker processes, each with its own loaded runner and its share of the CPUs (the runs "
              "in one process share Python's interpreter lock, which caps them at a few cores). Needs "
              "--dataset as one local directory of sample files and --golden as one directory (or a "
              "second backend). Default: one per CPU when that holds, ONNX-Runtime runs on the CPU, the "
              "machine has 4 CPUs or more and the dataset 64 samples per process (fewer processes for "
              "fewer samples); otherwise, or with --workers or --infer-threads, one process.")
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
def validate(dataset: Any, data_loader_script: Any, golden: Any, workers: Any, processes: Any, infer_threads: Any, max_failures: Any, batch: Any, prefetch: Any,
             worst_k: Any, report_json: Any, report_html: Any, **kwargs: Any) -> Any:
    """Validate a model over a whole dataset against golden outputs, streaming.

    Memory stays bounded whatever the dataset size. Progress: a line on a terminal, else a log
    line every 5 seconds; its rate and time left are taken over the last 10 seconds of results
    (`?` until half a second of them is in). Exit status: 0 when every sample passed, 1 when a
    sample failed or could not be read, 2 for a usage error.
    """
    from poly.cli.validate.driver import check_sources, pick_engine, run_validation
    from poly.cli.validate.engine import ValidationSources
    from poly.compare.dataset import SampleChecker

    runners = RunnerArgs.from_kwargs(kwargs)
    model = ModelArgs.from_kwargs(kwargs)
    sources = ValidationSources(tuple(dataset or ()), data_loader_script, tuple(golden or ()))
    check_sources(runners, sources)
    if report_html is not None and str(report_html).lower().endswith(".json"):
        G_LOGGER.warning(f"--report {report_html}: --report writes the HTML report; --report-json writes the JSON one")
    comparison = ComparisonArgs.from_kwargs(kwargs)
    ray_args = RayArgs.from_kwargs(kwargs)
    ray_args.check_paths(dataset=dataset, golden=golden)
    engine = pick_engine(ray_args, processes=processes, workers=workers, prefetch=prefetch,
                         infer_threads=infer_threads, sources=sources, runners=runners,
                         onnxrt=OnnxrtArgs.from_kwargs(kwargs))
    tolerances = comparison.tolerances()
    checker = SampleChecker(comparison.simple.verdict_options(), threads=1)
    comparison_config = {"atol": tolerances["atol"], "rtol": tolerances["rtol"],
                         "check_error_stat": tolerances["check_error_stat"] or "elemwise",
                         "error_quantile": tolerances["error_quantile"]}
    return run_validation(engine, sources, model, runners, kwargs, checker, comparison_config,
                          max_failures=max_failures, batch=batch, worst_k=worst_k, report_json=report_json,
                          report_html=report_html)
