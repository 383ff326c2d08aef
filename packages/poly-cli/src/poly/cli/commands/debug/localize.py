"""`poly debug localize`: which node is to blame when a candidate's outputs diverge from a
reference's, found in one command, in bounded memory."""

from __future__ import annotations

import os
import resource
import sys
import time
from typing import Any

import click

from poly.cli.args.comparison import ComparisonArgs
from poly.cli.args.data.data_loader import DataLoaderArgs
from poly.cli.args.data.samples import samples as _samples
from poly.cli.args.logging import LoggingArgs
from poly.cli.args.onnx.onnxrt import OnnxrtArgs
from poly.cli.args.runners import RunnerArgs
from poly.cli.errors import EXIT_FAIL, EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand
from poly.cli.multi_option import multi_option
from poly.cli.validate.progress import format_duration
from poly.cli.value_parsing import parse_num_bytes

_BACKEND = {"onnxrt": "onnxrt", "onnx_ref": "onnx-ref", "trt": "trt"}


def _usage(message: str, hint: str | None = None) -> click.UsageError:
    return click.BadParameter(message, param_hint=hint) if hint else click.UsageError(message)


class _Progress:
    """One line on a TTY (rewritten), else a log line every 5 s."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.start = time.time()
        self._last = -1e9

    def __call__(self, status: str) -> None:
        elapsed = time.time() - self.start
        if self.tty:
            sys.stderr.write(f"\r\033[K[I] localize | {status} | {format_duration(elapsed)}")
            sys.stderr.flush()
        elif elapsed - self._last >= 5:
            self._last = elapsed
            sys.stderr.write(f"[I] localize | {status} | {format_duration(elapsed)}\n")

    def done(self) -> None:
        if self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _load_model(path: str, flag: str | None = None) -> Any:
    import onnx

    try:
        return onnx.load(path, load_external_data=False)
    except Exception as err:  # noqa: BLE001 - one line naming the file
        raise _usage(f"cannot load ONNX model {path!r}: {str(err).splitlines()[0] if str(err) else type(err).__name__}",
                     flag) from None


def _trt_candidate(model_file: str, plan: Any, no_shadow: bool) -> tuple[Any, Any, Any]:
    """The TensorRT candidate: an engine of MODEL with every tensor ONNX names marked as a debug tensor
    (read back a segment at a time: the engine checked is the one that ships, no output marking), built
    with detailed layer information (to name layers after ONNX nodes), and the shadow runs' executor."""
    from poly.debug.localize import TrtExecutor, TrtSource, debug_marked_network
    from poly.trt import CreateConfig, EngineFromNetwork, NetworkFromOnnxPath

    config = CreateConfig(profiling_verbosity="detailed")
    network = debug_marked_network(NetworkFromOnnxPath(model_file), plan.producer)
    source = TrtSource(EngineFromNetwork(network, config=config), plan.producer)
    return source, source, None if no_shadow else TrtExecutor(config)


def _name_trt_layers(report: Any, source: Any, model: Any) -> None:
    layer_map = source.layer_map(model)
    if layer_map is None:
        return
    for record in report.nodes:
        record.trt_layers = list(layer_map.layers_of(record.name)) or None


def _summary(report: Any, candidate: str, reference: str) -> list[str]:
    lines = []
    ranking = report.ranking
    if not ranking:
        lines.append(f"No node of the candidate ({candidate}) diverges from the reference ({reference}) "
                     f"over {report.samples} sample(s).")
        return lines
    lines.append(f"Most to blame: {ranking[0]} | first divergent: {report.first_divergent} | "
                 f"first non-finite: {report.first_nonfinite or '-'}")
    lines.append(f"{len(ranking)} divergent node(s) of {len(report.nodes)} compared, ranked by own error "
                 "(the node alone on the reference's inputs):")
    for rank, name in enumerate(ranking[:10], 1):
        node = report.node(name).to_dict()
        own = node["own"]["worst"]["severity"] if node["own"] else None
        full = node["error"]["worst"]["severity"]
        if own is None:
            own_text = "own error unknown (its shadow run failed)"
        elif own <= 1:
            own_text = f"own error within tolerance ({own:.3g}x), inherited"
        else:
            own_text = f"own error {own:.3g}x the tolerance"
        lines.append(f"  {rank:>2}. {name} ({node['op']}) | {own_text} | seen {full:.3g}x")
    if len(ranking) > 10:
        lines.append(f"  ... and {len(ranking) - 10} more (the whole ranking is in --report-json / --report)")
    return lines


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model_file", metavar="MODEL", type=click.Path(exists=True, dir_okay=False))
@RunnerArgs.options(
    onnxrt_help="Run with ONNX-Runtime. The first backend given is the candidate, a second one the reference.",
    onnx_ref_help="Run with the ONNX reference evaluator (usually the reference: give it second).")
@RunnerArgs.trt_options()
@click.option("--reference-model", type=click.Path(exists=True, dir_okay=False),
              help="The reference model (matched to MODEL by tensor names), run on the second backend given, "
              "else on the first.")
@multi_option("--load-outputs", "--load-results", "load_outputs", type=click.Path(exists=True, dir_okay=False),
              help="Saved layer-wise reference results (`poly run ... --onnx-outputs mark all --save-outputs F`); "
              "iteration i is the reference of sample i.")
@DataLoaderArgs.options(save_inputs=False)
@click.option("--dataset", type=click.Path(exists=True),
              help="A directory of samples (one per file: .npz feed dicts, .json inputs, .npy arrays for a "
              "one-input model) or a Parquet file, as `poly validate` reads them; every sample is localized "
              "and the figures aggregate over them (worst and median).")
@OnnxrtArgs.options(providers_help="ONNX-Runtime execution providers in priority order (default: CPU).")
@ComparisonArgs.tolerance_options()
@click.option("--segment-memory", default="64M", show_default=True, metavar="SIZE",
              help="Activations one segment of the model may produce before they are compared and dropped "
              "(a number of bytes with an optional K/M/G suffix). Peak memory is about 4 to 5 times this, "
              "plus the model and the tensors later nodes still read.")
@click.option("--no-shadow", is_flag=True, help="Do not run divergent nodes alone on the reference's inputs "
              "(no own/inherited error; faster).")
@click.option("--report-json", type=click.Path(dir_okay=False), help="Write the JSON report here.")
@click.option("--report", "report_html", type=click.Path(dir_okay=False),
              help="Write a self-contained HTML report here.")
@LoggingArgs.options()
@handle_errors
def localize(model_file: str, reference_model: str | None, load_outputs: tuple[str, ...], dataset: str | None,
             segment_memory: str,
             no_shadow: bool, report_json: str | None, report_html: str | None, **kwargs: Any) -> Any:
    """Find which node of MODEL is to blame when its outputs diverge from a reference.

    Every tensor of MODEL (the candidate) is compared, in topological order, with the tensor of the
    same name in the reference: a second backend on the same model (`--onnxrt --onnx-ref`), another
    model (`--reference-model`), or saved layer-wise results (`--load-outputs`). Tensors are
    compared as the model is run segment by segment and dropped once no later node reads them, so
    memory stays near one segment plus the live activations. Each divergent node is then run alone
    on the reference's inputs: its own error; the rest of its error is inherited from upstream.
    Nodes are ranked by own error.

    With --trt (the candidate: `--trt --onnxrt`), the engine's tensors are read back as debug tensors
    a segment at a time, so the engine checked is the one that ships, and TensorRT layers are named
    after the ONNX nodes they came from.

    Exit status: 0 when no node diverges, 1 when one does, 2 for a usage error.
    """
    from poly.compare import RunResults
    from poly.compare.dataset import SampleChecker
    from poly.core import G_LOGGER
    from poly.debug.localize import GraphPlan, Localizer, ModelSource, OnnxExecutor, SavedSource

    start = time.time()
    runners = [_BACKEND[name] for name in RunnerArgs.from_kwargs(kwargs).names]
    data = DataLoaderArgs.from_kwargs(kwargs)
    comparison = ComparisonArgs.from_kwargs(kwargs)
    onnxrt = OnnxrtArgs.from_kwargs(kwargs)
    budget = parse_num_bytes("--segment-memory", segment_memory, segment_memory)
    if budget <= 0:
        raise _usage(f"{segment_memory!r} must be a positive number of bytes", "'--segment-memory'")
    if not runners:
        raise _usage("give the candidate's backend: --onnxrt, --onnx-ref or --trt")
    if "trt" in runners[1:]:
        raise _usage("--trt is the candidate: give it first (e.g. --trt --onnxrt)")
    if not (reference_model or load_outputs or len(runners) > 1):
        raise _usage("give a reference: a second backend (e.g. --onnxrt --onnx-ref), --reference-model or "
                     "--load-outputs")
    if load_outputs and (reference_model or len(runners) > 1):
        raise _usage("--load-outputs is the reference: give one backend and no --reference-model")
    if len(runners) > 2:
        raise _usage(f"give at most two backends (candidate, reference), not {len(runners)}")

    model = _load_model(model_file)
    model_dir = os.path.dirname(os.path.abspath(model_file))
    providers = list(onnxrt.providers) or None
    plan = GraphPlan(model, segment_bytes=budget)
    if runners[0] == "trt":
        candidate, candidate_executor, shadow = _trt_candidate(model_file, plan, no_shadow)
    else:
        candidate_executor = OnnxExecutor(runners[0], providers=providers, model_dir=model_dir)
        candidate = ModelSource(plan, candidate_executor, label=runners[0])
        shadow = None if no_shadow else OnnxExecutor(runners[0], providers=providers, model_dir=model_dir)
    if load_outputs:
        results = RunResults()
        for path in load_outputs:
            results.extend(RunResults.load(path))
        reference: Any = SavedSource(results)
        reference_label = f"outputs {', '.join(load_outputs)}"
        reference_runner = reference.runner_name
    else:
        backend = runners[-1]
        ref_model, ref_dir = model, model_dir
        if reference_model:
            ref_model = _load_model(reference_model, "'--reference-model'")
            ref_dir = os.path.dirname(os.path.abspath(reference_model))
        ref_plan = plan if ref_model is model else GraphPlan(ref_model, segment_bytes=budget)
        reference = ModelSource(ref_plan, OnnxExecutor(backend, providers=providers, model_dir=ref_dir),
                                keep=plan.producer, label=backend)
        reference_label = f"model {reference_model}" if reference_model else backend
        reference_runner = backend
    checker = SampleChecker(comparison.simple.verdict_options(), threads=0)
    progress = _Progress()
    localizer = Localizer(plan, candidate, reference, checker, shadow_executor=shadow, progress=progress)
    G_LOGGER.start(f"Localizing {model_file}: {len(plan.nodes)} node(s) in {len(plan.segments)} segment(s) | "
                   f"candidate {runners[0]} | reference {reference_label}")
    tolerances = comparison.tolerances()
    info = {
        "model": model_file, "reference": reference_label,
        "candidate_runner": runners[0], "reference_runner": reference_runner,
        "options": {"atol": tolerances["atol"], "rtol": tolerances["rtol"],
                    "check_error_stat": tolerances["check_error_stat"] or "elemwise",
                    "error_quantile": tolerances["error_quantile"]},
    }
    try:
        report = localizer.run(_samples(data, model, dataset), info)
    finally:
        progress.done()
    if runners[0] == "trt":
        _name_trt_layers(report, candidate, model)
        candidate.close()
    reference_executor = getattr(reference, "executor", None)
    report.info["evaluations"] = {"segments": candidate_executor.runs,
                                  "reference_segments": reference_executor.runs if reference_executor else None,
                                  "shadow_runs": localizer.shadow_runs}
    report.info["time_s"] = round(time.time() - start, 3)
    report.info["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    for line in _summary(report, runners[0], reference_label):
        (G_LOGGER.info if report.ranking else G_LOGGER.finish)(line)
    if report_json:
        report.save_json(report_json)
    if report_html:
        report.save_html(report_html)
    passed = not report.ranking
    status = "PASSED" if passed else "FAILED"
    (G_LOGGER.finish if passed else G_LOGGER.error)(
        f"{status} | {report.samples} sample(s), {len(report.nodes)} node(s) compared | "
        f"Runtime: {time.time() - start:.3f}s")
    return EXIT_PASS if passed else EXIT_FAIL
