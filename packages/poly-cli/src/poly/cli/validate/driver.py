"""
Driving a `poly validate` run through the engine interface: the usage checks every engine shares,
the engine picked from the flags, the dataset listed and the reference opened once, the runners
built with the engine's session options, the run, and the reports (whose config is built here
only) and summary.
"""

from __future__ import annotations

import os
from typing import Any

import click

from poly.cli.args.onnx.load import OnnxLoadArgs
from poly.cli.args.onnx.onnxrt import OnnxrtArgs
from poly.cli.args.trt.config import TrtConfigArgs
from poly.cli.args.trt.network import TrtNetworkArgs
from poly.cli.errors import EXIT_FAIL, EXIT_PASS
from poly.cli.validate.engine import ValidationEngine, ValidationJob, ValidationSources
from poly.cli.validate.processes import ProcessEngine, processes_supported
from poly.cli.validate.progress import Progress
from poly.cli.validate.threads import ThreadEngine
from poly.compare.dataset import (
    ListedDataset,
    build_report,
    open_dataset,
    open_reference,
    write_html_report,
    write_json_report,
)
from poly.core import G_LOGGER, PolyException

__all__ = ["check_sources", "default_processes", "pick_engine", "run_validation", "report_config", "finish"]


def check_sources(runners: Any, sources: ValidationSources) -> None:
    """The usage checks of every engine: one or two backends, a dataset, and the golden outputs
    given either as files or as a second backend."""
    if not runners.names:
        raise click.UsageError("Choose a backend: --onnxrt, --onnx-ref or --trt.")
    if len(runners.names) > 2:
        raise click.UsageError("Give one backend to validate, and optionally a second one for the golden outputs.")
    if not sources.dataset and not sources.data_loader_script:
        raise click.UsageError("Missing --dataset (or --load-inputs / --data-loader-script).")
    if sources.dataset and sources.data_loader_script:
        raise click.UsageError("Give either --dataset or --data-loader-script, not both.")
    if bool(sources.golden) == (len(runners.names) == 2):
        raise click.UsageError("Give the golden outputs either as --golden files or as a second backend, "
                               "exactly one of the two.")


# The default engine runs one worker process per usable CPU where threads cannot scale (ONNX-Runtime
# on the CPU: one interpreter lock serialises the reading, the runner's Python side and the
# checks), on a machine of at least AUTO_MIN_CPUS CPUs, and with at least AUTO_SAMPLES_PER_PROCESS
# samples a process (fewer would spend more on starting workers than they save).
AUTO_MIN_CPUS = 4
AUTO_SAMPLES_PER_PROCESS = 64


def _sample_files(directory: str, at_most: int) -> int:
    """The files of ``directory``, counted up to ``at_most``."""
    count = 0
    with os.scandir(directory) as entries:
        for entry in entries:
            if not entry.name.startswith(".") and entry.is_file():
                count += 1
                if count >= at_most:
                    break
    return count


def default_processes(sources: ValidationSources, runners: Any, onnxrt: Any) -> int | None:
    """
    The worker processes the default engine runs, or None for threads in this process: one per
    usable CPU when only ONNX-Runtime on the CPU runs, over one local directory of samples
    (golden outputs a directory or a second backend), on a machine of ``AUTO_MIN_CPUS`` CPUs or
    more, and fewer when the dataset has fewer than ``AUTO_SAMPLES_PER_PROCESS`` samples each.
    """
    from poly.onnx.runners import usable_cpus

    if not processes_supported() or not runners.names or any(name != "onnxrt" for name in runners.names):
        return None
    if onnxrt is None or not onnxrt.cpu_only or sources.data_loader_script:
        return None
    if len(sources.dataset) != 1 or not os.path.isdir(sources.dataset[0]):
        return None
    if sources.golden and (len(sources.golden) != 1 or not os.path.isdir(sources.golden[0])):
        return None
    cpus = usable_cpus()
    if cpus < AUTO_MIN_CPUS:
        return None
    samples = _sample_files(sources.dataset[0], cpus * AUTO_SAMPLES_PER_PROCESS)
    count = min(cpus, samples // AUTO_SAMPLES_PER_PROCESS)
    return count if count >= 2 else None


def pick_engine(ray_args: Any, processes: Any = None, workers: Any = None, prefetch: int = 8, infer_threads: Any = None,
                sources: ValidationSources | None = None, runners: Any = None, onnxrt: Any = None) -> ValidationEngine:
    """The engine the flags ask for: Ray (``--ray``), worker processes (``--processes`` above 1),
    threads in this process (``--workers``, ``--infer-threads`` or ``--processes 1``); without any
    of them, ``default_processes`` decides between processes and threads."""
    if ray_args.enabled:
        from poly.cli.validate.ray.engine import RayEngine

        return RayEngine(ray_args)
    if processes is None and workers is None and infer_threads is None and sources is not None:
        processes = default_processes(sources, runners, onnxrt)
    if processes is not None and processes > 1:
        return ProcessEngine(processes)
    return ThreadEngine(workers=2 if workers is None else workers, prefetch=prefetch, infer_threads=infer_threads)


def report_config(model: Any, runner: Any, reference: Any, sources: ValidationSources, comparison: dict, engine: Any, batch: Any) -> dict:
    """The report's ``config``: what was validated, against what, with which tolerances
    (``comparison``), how wide the engine ran and its own entries."""
    return {"model": str(model.path), "runner": runner.name, "reference": reference.describe(),
            "dataset": sources.describe(), **comparison, **engine.width(), "batch": batch, **engine.run_details()}


def run_validation(engine: ValidationEngine, sources: ValidationSources, model: Any, runners: Any, kwargs: Any, checker: Any,
                   comparison: dict, max_failures: Any = None, batch: int = 1, worst_k: int = 10, report_json: Any = None, report_html: Any = None) -> int:
    """
    Checks ``sources`` for ``engine``, lists the dataset, builds the runners, runs the job on the
    engine, writes the reports and returns the exit status. ``comparison`` holds the tolerances
    the report's config shows (``checker`` applies them).
    """
    engine.check_usage(sources)
    try:
        samples = open_dataset(list(sources.dataset), sources.data_loader_script, listed=engine.listed)
    except ValueError as err:  # a dataset that does not exist or holds no samples
        raise click.UsageError(str(err)) from None
    runners.check_engine_model(model, name_other=False)
    onnxrt = OnnxrtArgs.from_kwargs(kwargs)
    # The TensorRT flags are parsed (and a bad one reported) only when TensorRT runs.
    trt_config = TrtConfigArgs.from_kwargs(kwargs) if runners.uses_trt else None
    built = runners.create_runners(model, OnnxLoadArgs.from_kwargs(kwargs), onnxrt, TrtNetworkArgs.from_kwargs(kwargs),
                                   trt_config, session_options=engine.session_options(runners, onnxrt))  # type: ignore[func-returns-value]
    reference = open_reference(list(sources.golden), by_name=isinstance(samples, ListedDataset),
                               runner=built[1] if len(built) == 2 else None)
    progress = Progress(total=samples.size())
    job = ValidationJob(built[0], samples, reference, checker, max_failures=max_failures, worst_k=worst_k,
                        batch=batch, progress=progress)
    G_LOGGER.start(f"VALIDATING | {built[0].name} on {model.path} against {reference.describe()}{engine.describe()}")
    with engine:
        outcome = engine.run(job)
    progress.finish(outcome.accumulator, outcome.elapsed)
    config = report_config(model, built[0], reference, sources, comparison, engine, batch)
    status = finish(outcome, config, report_json, report_html)
    if outcome.accumulator.samples == 0 and not outcome.interrupted:  # not "0/0 samples passed"
        raise PolyException(f"No samples found: {_no_samples_source(sources, samples)}")
    return status


def _no_samples_source(sources: ValidationSources, samples: Any) -> str:
    """What gave no samples: the data loader, or the dataset's files (named, the first few)."""
    if sources.data_loader_script:
        return f"the data loader of --data-loader-script '{sources.data_loader_script}' gave none"
    files = [os.path.basename(item.path) for item in getattr(samples, "items", ())]
    held = f" ({', '.join(files[:5])}{', ...' if len(files) > 5 else ''} held none)" if files else ""
    return f"--dataset '{', '.join(sources.dataset)}' gave none{held}"


def finish(outcome: Any, config: Any, report_json: Any = None, report_html: Any = None) -> int:
    """Writes the reports of ``outcome``, logs its summary, and returns the exit status."""
    report = build_report(outcome, config)
    if report_json:
        write_json_report(report, report_json)
        G_LOGGER.info(f"Wrote JSON report to {report_json}")
    if report_html:
        write_html_report(report, report_html)
        G_LOGGER.info(f"Wrote HTML report to {report_html}")
    _log_summary(outcome)
    if outcome.interrupted:
        G_LOGGER.error("INTERRUPTED | the report covers the samples done so far")
        return EXIT_FAIL
    return EXIT_PASS if outcome.passed else EXIT_FAIL


def _log_summary(outcome: Any) -> None:
    acc = outcome.accumulator
    rate = f"{100 * acc.pass_rate:.2f}%" if acc.pass_rate is not None else "-"
    G_LOGGER.info(f"Samples: {acc.samples} | passed: {acc.passed} | failed: {acc.failed} | unreadable: {acc.errors} "
                  f"| pass rate: {rate} | {outcome.samples_per_second:.1f} samples/s")
    for entry in acc.error_samples[:10]:
        G_LOGGER.warning(f"Unreadable sample {entry['index']} ({entry['file']}): {entry['error']}")
    for sample in acc.worst()[:5]:
        if sample["passed"]:
            break
        outs = ", ".join(f"{n}: max abs {r['max_absdiff']}, max rel {r['max_reldiff']}"
                         + (f" ({r['error']})" if r.get("error") else "")
                         for n, r in sample["outputs"].items() if not r["passed"])
        G_LOGGER.error(f"FAILED | sample {sample['index']} ({sample['file']}) | {outs}")
    if outcome.stopped_early:
        G_LOGGER.warning(f"Stopped early after {acc.failed} failed samples (--max-failures {outcome.max_failures})")
    if not outcome.interrupted and acc.samples:
        (G_LOGGER.finish if outcome.passed else G_LOGGER.error)(
            f"{'PASSED' if outcome.passed else 'FAILED'} | validate | {acc.passed}/{acc.samples} samples passed")
