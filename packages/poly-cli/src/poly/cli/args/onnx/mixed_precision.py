"""The mixed-precision group of `poly convert --fp-to-fp16` and `poly debug precision --onnxrt`:
--keep-accuracy (search the fewest nodes to keep in float32 for the float16 model to pass the
comparison with the float32 model), --fp32-nodes (keep named nodes in float32), --dataset and
--report-json; and the search run from them (``poly.debug.mixed_precision``)."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.args.comparison import ComparisonArgs
from poly.cli.args.data.data_loader import DataLoaderArgs
from poly.cli.args.data.samples import samples
from poly.cli.args.onnx.onnxrt import OnnxrtArgs
from poly.cli.multi_option import multi_option, stack_options

DEFAULT_SEARCH_ITERATIONS = 8
"""Synthetic samples the search checks when no --iterations (nor input files) are given."""

VALIDATION_ROUNDS = 2
"""With synthetic inputs, the found set is checked on this many batches of new inputs (each as many
as the search's), taken further along the data loader's sequence; inputs that fail join the search."""

LITTLE_MARGIN = 0.9
"""A result whose worst output is past this fraction of its tolerance is said to have little margin."""

_SEARCH_ONLY = ("report_json", "dataset", "providers", "atol", "rtol", "check_error_stat", "error_quantile")
"""The options (click parameter names) only the search reads."""

KEEP_ACCURACY_HELP = (
    "With --fp-to-fp16: keep in float32 the fewest nodes (a 1-minimal set: putting any one of them back into "
    "float16 makes some input fail) for the outputs to pass the comparison with the float32 model on every input "
    "of the data flags (--load-inputs, --data-loader-script, --iterations: 8 synthetic inputs by default; or "
    "--dataset). With synthetic inputs the set found is then checked on up to 2 batches of new ones (further along "
    "the same sequence); inputs that fail join the search, which goes on. Both models run with ONNX-Runtime "
    "(--providers; CPU by default); outputs are judged by --atol/--rtol/--check-error-stat. "
    "Nodes are tried by their measured float16 error (each run alone on the float32 model's inputs, as `poly debug "
    "localize` does); the kept nodes, the error before and after and the model evaluations spent are logged and "
    "written by --report-json. The set is minimal for the inputs checked: give inputs like those the model will see, "
    "and the --providers it will run on (ONNX-Runtime's CPU provider runs most float16 ops in float32).")


@dataclass(frozen=True)
class MixedPrecisionArgs:
    """Which nodes stay float32 when an ONNX model is converted to float16."""

    keep_accuracy: bool = False
    """--keep-accuracy: search the nodes."""
    fp32_nodes: tuple[str, ...] = ()
    """--fp32-nodes: nodes kept in float32 (with --keep-accuracy: kept, and the search adds to them)."""
    dataset: str | None = None
    report_json: str | None = None

    @classmethod
    def options(cls, keep_accuracy: bool = True, search: str = "--keep-accuracy") -> Any:
        """--keep-accuracy (with ``keep_accuracy``: for commands where the search is a choice),
        --fp32-nodes, --dataset, --report-json, --providers and the comparison's tolerances; the
        help says they work with ``search`` (the flag that asks for the search)."""
        options = [click.option("--keep-accuracy", is_flag=True, help=KEEP_ACCURACY_HELP)] if keep_accuracy else []
        options += [
            multi_option("--fp32-nodes", "fp32_nodes", metavar="NAME [NAME ...]",
                         help="Nodes to keep in float32 (a --report-json's `fp32_nodes` can be given back here); "
                         f"with {search} they are kept and the search adds to them. Unnamed nodes are named "
                         "`<op>_<index>`."),
            click.option("--dataset", type=click.Path(exists=True),
                         help=f"With {search}: a directory of samples (.npz feed dicts, .json inputs, .npy arrays "
                         "for a one-input model) or a Parquet file, as `poly validate` reads them, instead of the "
                         "data flags."),
            click.option("--report-json", type=click.Path(dir_okay=False),
                         help=f"With {search}: write its report here: `fp32_nodes`, the error per output before "
                         "(all float16) and after, `evaluations`, `time_s`, the ranking and each node's measured "
                         "float16 error."),
            OnnxrtArgs.options(providers_help=f"With {search}: ONNX-Runtime execution providers both models run on, "
                               "in priority order (default: CPU)."),
            ComparisonArgs.tolerance_options(),
        ]
        return stack_options(options, section="ONNX Mixed Precision")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping, keep_accuracy: bool | None = None) -> MixedPrecisionArgs:
        """The group's options; ``keep_accuracy`` overrides --keep-accuracy (True where the command
        always searches)."""
        return cls(
            keep_accuracy=bool(kwargs.get("keep_accuracy")) if keep_accuracy is None else keep_accuracy,
            fp32_nodes=tuple(kwargs.get("fp32_nodes") or ()),
            dataset=kwargs.get("dataset"),
            report_json=kwargs.get("report_json"),
        )

    @property
    def given(self) -> bool:
        """Whether the model is converted by name or searched (not plainly converted)."""
        return self.keep_accuracy or bool(self.fp32_nodes)

    def check_usage(self, kwargs: Mapping, search: str = "--keep-accuracy") -> None:
        """Flags that only the search reads, given without it (``search``: the flag that asks for
        it), are a usage error."""
        if self.keep_accuracy:
            return
        for name in _SEARCH_ONLY:
            if kwargs.get(name):
                raise click.UsageError(f"--{name.replace('_', '-')} needs {search}")

    def _check_model(self, model: Any) -> Any:
        """``model`` with every node named; a model with nothing to convert fails (exit 1), an
        unknown --fp32-nodes name is a usage error."""
        from poly.core import PolyException
        from poly.debug.mixed_precision import float_precision_problem, name_nodes, unknown_node_names

        problem = float_precision_problem(model)
        if problem:
            raise PolyException(f"MODEL: {problem}")
        unknown = unknown_node_names(model, self.fp32_nodes)
        if unknown:
            names = ", ".join(repr(name) for name in unknown)
            raise click.BadParameter(f"MODEL has no node named {names}", param_hint="'--fp32-nodes'")
        return name_nodes(model)

    def convert(self, model: Any, kwargs: Mapping, model_path: str | None = None) -> Any:
        """
        The float16 model: ``model`` (an ``onnx.ModelProto``) converted with --fp32-nodes in
        float32, and with --keep-accuracy the nodes the search finds.

        Returns:
            (onnx.ModelProto, MixedPrecisionResult or None)
        """
        from poly.onnx import ConvertToFp16

        model = self._check_model(model)
        if not self.keep_accuracy:
            return ConvertToFp16(model, node_block_list=list(self.fp32_nodes))(), None
        result = self.search(model, kwargs, model_path)
        return result.model, result

    def search(self, model: Any, kwargs: Mapping, model_path: str | None = None) -> Any:
        """Runs ``MixedPrecisionSearch`` on ``model`` with the data, comparison and ONNX-Runtime
        flags of ``kwargs``; logs its outcome and writes --report-json."""
        from poly.compare.dataset import SampleChecker
        from poly.core import G_LOGGER
        from poly.debug.mixed_precision import MixedPrecisionSearch

        data = DataLoaderArgs.from_kwargs(kwargs)
        synthetic = not (self.dataset or data.load_inputs or data.script)
        base = data.iterations or DEFAULT_SEARCH_ITERATIONS
        if synthetic:
            # the search's inputs, then the validation rounds' further along the same sequence: a
            # search on N inputs that took R batches used exactly those of --iterations N*(1+R)
            data = dataclasses.replace(data, iterations=base * (1 + VALIDATION_ROUNDS))
        comparison = ComparisonArgs.from_kwargs(kwargs)
        tolerances = comparison.tolerances()
        if tolerances["atol"] is None and tolerances["rtol"] is None:
            G_LOGGER.warning("No --atol/--rtol: the default tolerances are far tighter than float16's precision, so "
                             "most nodes will stay float32; give the accuracy the model needs")
        checker = SampleChecker(comparison.simple.verdict_options(), threads=0)
        providers = list(OnnxrtArgs.from_kwargs(kwargs).providers) or None
        feeds = list(samples(data, model, self.dataset))
        validation: list[list[Any]] = []
        if synthetic:
            feeds, rest = feeds[:base], feeds[base:]
            validation = [rest[i:i + base] for i in range(0, len(rest), base)]
        model_dir = os.path.dirname(os.path.abspath(model_path)) if model_path else None
        search = MixedPrecisionSearch(model, feeds, checker, providers=providers, fp32_nodes=self.fp32_nodes,
                                      model_dir=model_dir, validation=validation)
        result = search.run()
        result.info.update({
            "model": model_path, "providers": providers or ["cpu"],
            "options": {"atol": tolerances["atol"], "rtol": tolerances["rtol"],
                        "check_error_stat": tolerances["check_error_stat"] or "elemwise",
                        "error_quantile": tolerances["error_quantile"]},
        })
        for line in summary(result):
            G_LOGGER.finish(line)
        name, severity = result.after.worst()
        if result.fp32_nodes and name is not None and severity > LITTLE_MARGIN:
            G_LOGGER.warning(f"The mixed model passes the inputs given with little margin ({severity:.3g}x the "
                             f"tolerance on {name!r}): other inputs may fail; search with more inputs like the ones "
                             "the model will see")
        if self.report_json:
            result.save_json(self.report_json)
        return result


def _worst_line(evaluation: Any) -> str:
    name, severity = evaluation.worst()
    if name is None:
        return "-"
    figures = evaluation.outputs[name]
    over = f"{severity:.3g}x its tolerance" if math.isfinite(severity) else "NaN/Inf or past the tolerance"
    return f"output {name!r} {over} (max abs diff {figures['max_absdiff']:.3g})"


def summary(result: Any) -> list[str]:
    """The lines a search's outcome is logged as."""
    nodes = ", ".join(result.fp32_nodes[:20]) if result.fp32_nodes else "none"
    if len(result.fp32_nodes) > 20:
        nodes += f" ... and {len(result.fp32_nodes) - 20} more (all in --report-json)"
    total = len(result.candidates) + len(set(result.fp32_nodes) - set(result.candidates))
    lines = [
        f"Kept {len(result.fp32_nodes)} of {total} float16 node(s) in float32: {nodes}",
        f"Error all float16: {_worst_line(result.before)} | after: {_worst_line(result.after)}",
        f"{result.evaluations} model evaluation(s) on {result.samples} sample(s) in {result.time_s:.1f}s",
    ]
    if result.validation:
        rounds = ", ".join(f"{r['failed']} of {r['samples']} failed" if r["failed"] else f"{r['samples']} passed"
                           for r in result.validation)
        lines.append(f"Validation on new inputs (round by round): {rounds}; the set is 1-minimal on all "
                     f"{result.samples} sample(s)")
    return lines
