"""
``Localizer``: finds where and why a candidate's outputs diverge from a reference's.

For each sample it walks the candidate model segment by segment (``GraphPlan``), compares every
tensor the segment produced with the reference's tensor of the same name as soon as both exist,
runs each divergent node alone on the reference's inputs (a *shadow run*: its own error), and
drops every value no later node reads. Over the samples it keeps per node the worst and the
median of its full, own and inherited error (``LocalizeReport``), the first divergent node, and
the first node whose outputs hold NaN or Inf although its inputs are finite (and the reference's
outputs are finite).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from poly.core import G_LOGGER, PolyException, lazy_import
from poly.debug.localize.graph_plan import GraphPlan
from poly.debug.localize.report import LocalizeReport, NodeRecord, inherited_figures

np = lazy_import("numpy")

__all__ = ["Localizer", "OWN_SUFFIX", "figures"]

OWN_SUFFIX = "::own"
"""Appended to the output names of nodes in a shadow model."""


def _is_float(array: Any) -> bool:
    return array.dtype.kind in "fc" or array.dtype.name == "bfloat16"


def _all_finite(array: Any) -> bool:
    array = np.asarray(array)
    if not _is_float(array):
        return True
    return bool(np.isfinite(array.astype(np.float32) if array.dtype.name == "bfloat16" else array).all())


def _rel_l2(candidate: Any, reference: Any) -> float:
    try:
        a = np.asarray(candidate, dtype=np.float64)
        b = np.asarray(reference, dtype=np.float64)
        if a.shape != b.shape:
            return math.inf
        denominator = float(np.linalg.norm(b.ravel()))
        numerator = float(np.linalg.norm((a - b).ravel()))
    except (TypeError, ValueError):
        return math.nan
    if math.isnan(numerator):
        return math.inf
    return numerator / denominator if denominator > 0 else (0.0 if numerator == 0 else math.inf)


def figures(check: Any, candidate: Any, reference: Any) -> dict[str, float]:
    """The error figures (``report.FIGURES``) of one output's ``OutputCheck``."""
    return {"severity": float(check.severity), "max_absdiff": float(check.max_absdiff),
            "max_reldiff": float(check.max_reldiff), "rel_l2": _rel_l2(candidate, reference)}


def _worst(per_output: Sequence[dict[str, float]]) -> dict[str, float]:
    """The figures of a node: the worst over its outputs, figure by figure (NaN counts as worst)."""
    out = {}
    for key in per_output[0]:
        values = [f[key] for f in per_output]
        out[key] = math.inf if any(math.isnan(v) and key == "severity" for v in values) else \
            max((v for v in values if not math.isnan(v)), default=math.nan)
    return out


class Localizer:
    """
    Compares a candidate with a reference node by node, in bounded memory.

    Example::

        plan = GraphPlan(onnx.load("model.onnx"))
        candidate = ModelSource(plan, OnnxExecutor("onnxrt"))
        reference = ModelSource(plan, OnnxExecutor("onnx-ref"), keep=plan.producer)
        report = Localizer(plan, candidate, reference, SampleChecker(atol=1e-4)).run([{"x": x}])
        print(report.first_divergent, report.ranking[:3])
    """

    def __init__(self, plan: GraphPlan, candidate: Any, reference: Any, checker: Any,
                 shadow_executor: Any = None, segment_values: Callable[[Any, int], dict[str, Any]] | None = None,
                 progress: Callable[[str], None] | None = None) -> None:
        """
        Args:
            plan (GraphPlan): The candidate model's plan: its nodes are what is reported.
            candidate: A tensor source (``ModelSource``, or anything with ``start``, ``values``,
                    ``release``) giving the candidate's tensors.
            reference: A tensor source giving the reference's tensors (matched by name).
            checker (SampleChecker): Decides each output's verdict (tolerances, statistic).
            shadow_executor (OnnxExecutor): Runs the shadow models (divergent nodes alone on the
                    reference's inputs) on the candidate's backend; None: no own error.
            segment_values: ``(segment, index) -> values`` giving the candidate's tensors of a
                    segment; None: ``candidate.run_segment(index)`` where it exists, else
                    ``candidate.values(segment.produces)``.
            progress: Called with a one-line status after each segment.
        """
        self.plan = plan
        self.candidate = candidate
        self.reference = reference
        self.checker = checker
        self.shadow_executor = shadow_executor
        self.segment_values = segment_values
        self.progress = progress
        self.shadow_runs = 0
        self.peak_held = 0
        """The most tensor values held at once (candidate and reference, per sample)."""
        self._records: dict[int, NodeRecord] = {}

    # -- one sample -------------------------------------------------------------------------------

    def _candidate_segment(self, segment: Any, index: int) -> dict[str, Any]:
        if self.segment_values is not None:
            return self.segment_values(segment, index)
        if hasattr(self.candidate, "run_segment"):
            return self.candidate.run_segment(index)
        return self.candidate.values(segment.produces)

    def _record(self, index: int) -> NodeRecord:
        record = self._records.get(index)
        if record is None:
            node = self.plan.nodes[index]
            record = NodeRecord(self.plan.node_label(index), node.op_type, index, [o for o in node.output if o])
            self._records[index] = record
        return record

    def _run_sample(self, sample: int, feed: Mapping[str, Any]) -> tuple[int | None, int | None]:
        plan = self.plan
        self.candidate.start(feed)
        self.reference.start(feed)
        cand_live: dict[str, Any] = {name: np.asarray(feed[name]) for name in plan.graph_inputs if name in feed}
        ref_live: dict[str, Any] = {}
        finite: dict[str, bool] = {name: _all_finite(value) for name, value in cand_live.items()}
        first_divergent = first_nonfinite = None
        for seg_index, segment in enumerate(plan.segments):
            produced = self._candidate_segment(segment, seg_index)
            cand_live.update(produced)
            wanted = [n for n in (*segment.produces, *segment.reads)
                      if n not in ref_live and self.reference.provides(n)]
            ref_live.update(self.reference.values(wanted))
            failing = []
            for index in segment.indices:
                outputs = [o for o in plan.nodes[index].output if o and o in produced]
                for name in outputs:
                    finite[name] = _all_finite(produced[name])
                compared = [o for o in outputs if o in ref_live]
                if self._starts_nonfinite(index, outputs, compared, finite, ref_live) and first_nonfinite is None:
                    first_nonfinite = index
                if not compared:
                    continue
                record = self._record(index)
                checks = [(o, self.checker.check_output(o, produced[o], ref_live[o])) for o in compared]
                record.full.append(_worst([figures(c, produced[o], ref_live[o]) for o, c in checks]))
                if not all(c.passed for _, c in checks):
                    record.failed_samples.append(sample)
                    failing.append(index)
                    if first_divergent is None:
                        first_divergent = index
            if failing and self.shadow_executor is not None:
                self._shadow(sample, failing, cand_live, ref_live, produced)
            self.peak_held = max(self.peak_held, len(cand_live) + len(ref_live))
            last = segment.stop - 1
            for live, source in ((cand_live, self.candidate), (ref_live, self.reference)):
                done = [name for name in list(live) if plan.last_read.get(name, -1) <= last]
                for name in done:
                    del live[name]
                source.release(done)
            if self.progress is not None:
                self.progress(f"sample {sample + 1}: segment {seg_index + 1}/{len(plan.segments)} "
                              f"(nodes {segment.first}-{segment.stop - 1}), {len(failing)} divergent")
        return first_divergent, first_nonfinite

    def _starts_nonfinite(self, index: int, outputs: list[str], compared: list[str], finite: dict[str, bool],
                          ref_live: dict[str, Any]) -> bool:
        """Whether node ``index`` makes NaN/Inf in this sample from finite activations (its weights are
        part of the node) while the reference's outputs, where it has them, are finite."""
        if all(finite.get(o, True) for o in outputs):
            return False
        record = self._record(index)
        record.nonfinite_candidate = True
        reference_finite = all(_all_finite(ref_live[o]) for o in compared)
        record.nonfinite_reference = record.nonfinite_reference or not reference_finite
        inputs_finite = all(finite.get(name, True) for name in self.plan.reads[index]
                            if name not in self.plan.initializers)
        if inputs_finite and reference_finite:
            record.nonfinite_from_finite_inputs = True
            return True
        return False

    # -- shadow runs --------------------------------------------------------------------------

    def _shadow_inputs(self, index: int, cand_live: dict[str, Any], ref_live: dict[str, Any]) -> dict[str, Any]:
        feed = {}
        for name in self.plan.reads[index]:
            if name in self.plan.initializers:
                continue
            candidate = cand_live.get(name)
            reference = ref_live.get(name)
            if reference is None:
                if candidate is None:
                    raise PolyException(f"no value for tensor {name!r}")
                feed[name] = candidate
                continue
            reference = np.asarray(reference)
            if candidate is not None and np.asarray(candidate).dtype != reference.dtype:
                reference = reference.astype(np.asarray(candidate).dtype)
            feed[name] = reference
        return feed

    def _shadow_model(self, indices: Sequence[int], feed: dict[str, Any]) -> tuple[Any, list[str]]:
        import copy

        nodes: list[Any] = []
        outputs: list[str] = []
        for index in indices:
            node = copy.deepcopy(self.plan.nodes[index])
            renamed = [f"{o}{OWN_SUFFIX}" if o else "" for o in node.output]
            del node.output[:]
            node.output.extend(renamed)
            node.name = f"{self.plan.node_label(index)}{OWN_SUFFIX}"
            nodes.append(node)
            outputs.extend(o for o in renamed if o)
        return self.plan.build_model(nodes, feed, outputs, "localize_shadow"), outputs

    def _run_shadow(self, indices: Sequence[int], cand_live: dict[str, Any], ref_live: dict[str, Any]) -> dict[str, Any]:
        feed: dict[str, Any] = {}
        for index in indices:
            feed.update(self._shadow_inputs(index, cand_live, ref_live))
        model, outputs = self._shadow_model(indices, feed)
        self.shadow_runs += 1
        return self.shadow_executor.run(model, feed, outputs)

    def _shadow(self, sample: int, failing: Sequence[int], cand_live: dict[str, Any], ref_live: dict[str, Any],
                produced: dict[str, Any]) -> None:
        try:
            own_values = self._run_shadow(failing, cand_live, ref_live)
            per_node = {index: own_values for index in failing}
        except Exception as err:  # noqa: BLE001 - retried node by node, so one bad node costs only itself
            G_LOGGER.verbose(f"The shadow model of {len(failing)} node(s) failed ({err}); running them one by one")
            per_node = {}
            for index in failing:
                try:
                    per_node[index] = self._run_shadow([index], cand_live, ref_live)
                except Exception as node_err:  # noqa: BLE001 - reported on the node
                    self._record(index).shadow_errors.append(str(node_err).strip().splitlines()[0][:300])
        for index, own_values in per_node.items():
            record = self._record(index)
            checks = []
            for name in record.outputs:
                own = own_values.get(f"{name}{OWN_SUFFIX}")
                if own is None or name not in ref_live:
                    continue
                check = self.checker.check_output(name, own, ref_live[name])
                checks.append((check, figures(check, own, ref_live[name])))
            if not checks:
                continue
            own_figures = _worst([f for _, f in checks])
            record.own.append(own_figures)
            record.inherited.append(inherited_figures(record.full[-1], own_figures))
            if not all(c.passed for c, _ in checks):
                record.own_failed_samples.append(sample)

    # -- all samples --------------------------------------------------------------------------

    def run(self, samples: Iterable[Mapping[str, Any]], info: Mapping[str, Any] | None = None) -> LocalizeReport:
        """
        Localizes over ``samples`` (feed dicts: input name -> array).

        Returns:
            LocalizeReport: per node figures, the ranking, the first divergent and the first
            non-finite node (the earliest in topological order over all samples).
        """
        start = time.time()
        first_divergent: int | None = None
        first_nonfinite: int | None = None
        count = 0
        for sample, feed in enumerate(samples):
            divergent, nonfinite = self._run_sample(sample, feed)
            count += 1
            if divergent is not None and (first_divergent is None or divergent < first_divergent):
                first_divergent = divergent
            if nonfinite is not None and (first_nonfinite is None or nonfinite < first_nonfinite):
                first_nonfinite = nonfinite
        if not count:
            raise PolyException("no samples to localize with")
        records = [self._records[i] for i in sorted(self._records)]
        details = dict(info or {})
        details.setdefault("time_s", round(time.time() - start, 3))
        return LocalizeReport(
            records, count,
            None if first_divergent is None else self.plan.node_label(first_divergent),
            None if first_nonfinite is None else self.plan.node_label(first_nonfinite),
            details)
