"""
``MixedPrecisionSearch``: the fewest nodes of an ONNX model to keep in float32 so that its float16
conversion still passes the comparison with the float32 model (``poly convert --fp-to-fp16
--keep-accuracy``, ``poly debug precision --onnxrt``).

1. The float32 model runs once on every sample (ONNX-Runtime): the reference outputs.
2. ``evaluate(keep)`` converts the model with ``ConvertToFp16(node_block_list=keep)``, runs it on
   the samples and checks every graph output against the reference (``SampleChecker``); it passes
   when every output of every sample passes. A failing evaluation stops at its first failing
   sample, and that sample is tried first next time.
3. All-float16 passing ends the search (nothing kept); all-float32 failing is an error (the
   tolerance cannot be met by precision alone).
4. Nodes are ranked by measured sensitivity: ``poly debug localize`` of the all-float16 model
   against the float32 one (tensors matched by name), every node that differs at all run alone on
   the float32 model's inputs (its *own* error). The order (``search_order``): nodes whose outputs
   turned NaN/Inf in the float16 run with their readers and producers; nodes whose own error
   fails the tolerance (by severity) with the producers of their inputs; the other measured
   nodes (by own relative L2 error); the remaining candidates in topological order.
5. Galloping then binary search for the shortest prefix of that order that passes.
6. Minimization: a long prefix first loses whole chunks of its least sensitive nodes; then each
   kept node, least sensitive first, is put back into float16 when the model still passes;
   passes repeat until one drops nothing, so the result is 1-minimal (putting any single kept
   node back into float16 makes some sample fail), as the last pass verified. No step assumes
   that more float32 nodes means less error (on ONNX-Runtime's CPU provider it need not).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from poly.core import G_LOGGER, PolyException, lazy_import, save_json

np = lazy_import("numpy")
onnx = lazy_import("onnx")
onnxrt = lazy_import("onnxruntime")

__all__ = [
    "MixedPrecisionSearch",
    "MixedPrecisionResult",
    "Evaluation",
    "MixedPrecisionError",
    "UnreachableTolerance",
    "name_nodes",
    "unknown_node_names",
    "float_precision_problem",
]

CHUNKED_MINIMIZATION = 8
"""From this many kept nodes on, minimization first tries to drop chunks of them."""

_FLOAT = 1  # onnx.TensorProto.FLOAT
_HALF = 10  # onnx.TensorProto.FLOAT16


class MixedPrecisionError(PolyException):
    """The model cannot be searched: it has nothing to convert (already float16, no float nodes)."""


class UnreachableTolerance(PolyException):
    """Even with every convertible node in float32 the outputs fail the comparison."""


# -- the model ------------------------------------------------------------------------------------

def name_nodes(model: Any) -> Any:
    """
    A copy of ``model`` whose top-level nodes all have distinct names: an unnamed node becomes
    ``<op_type>_<index>``, a repeated name gets ``_1``, ``_2``... (deterministic, so names in a
    report refer to the same nodes when the same model is named again). Nodes are kept in float32
    by name, so every node needs one.
    """
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    nodes = copy.graph.node
    taken = {node.name for node in nodes if node.name}
    seen: set[str] = set()
    for index, node in enumerate(nodes):
        if node.name and node.name not in seen:
            seen.add(node.name)
            continue
        base = node.name or f"{node.op_type}_{index}"
        name, suffix = base, 1
        while name in taken or name in seen:
            name = f"{base}_{suffix}"
            suffix += 1
        node.name = name
        taken.add(name)
        seen.add(name)
    return copy


def unknown_node_names(model: Any, names: Iterable[str]) -> list[str]:
    """The names of ``names`` that no top-level node of ``model`` (as ``name_nodes`` names them) has."""
    known = {node.name for node in name_nodes(model).graph.node}
    return [name for name in names if name not in known]


def _tensor_types(model: Any) -> dict[str, int]:
    """Element types of the model's tensors: inputs, outputs, initializers, inferred intermediates."""
    graph = model.graph
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False).graph
    except Exception:  # noqa: BLE001 - what the model itself declares is used instead
        inferred = graph
    types = {}
    for vi in (*inferred.value_info, *graph.input, *graph.output, *inferred.output):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
            types[vi.name] = vi.type.tensor_type.elem_type
    for init in graph.initializer:
        types[init.name] = init.data_type
    for node in graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value" and node.output:
                    types[node.output[0]] = attr.t.data_type
    return types


def float_precision_problem(model: Any) -> str | None:
    """Why ``model`` has nothing to keep in float32 (already float16, no float tensor), or None."""
    kinds = set(_tensor_types(model).values())
    if _FLOAT in kinds:
        return None
    if _HALF in kinds:
        return "the model is already float16 (it holds no float32 tensor): there is nothing to convert"
    return "the model has no float32 tensor: there is nothing to convert to float16"


def _converted_nodes(names: Sequence[str], converted: Any) -> list[str]:
    """Of ``names`` (nodes of the original model), those that read or write a float16 tensor in
    ``converted``: the nodes the conversion put in float16, in ``names``' order."""
    types = {}
    graph = converted.graph
    for vi in (*graph.value_info, *graph.input, *graph.output):
        if vi.type.HasField("tensor_type"):
            types[vi.name] = vi.type.tensor_type.elem_type
    for init in graph.initializer:
        types[init.name] = init.data_type
    half = set()
    for node in graph.node:
        if node.op_type == "Constant" or node.name not in names:
            continue
        if any(types.get(name) == _HALF for name in (*node.input, *node.output) if name):
            half.add(node.name)
    return [name for name in names if name in half]


# -- the result -----------------------------------------------------------------------------------

def _worse(a: float, b: float) -> float:
    """The larger of two figures, NaN counting as the largest."""
    if math.isnan(a) or math.isnan(b):
        return math.inf
    return max(a, b)


@dataclass
class Evaluation:
    """One conversion run on the samples."""

    keep: frozenset
    """The nodes kept in float32."""
    passed: bool
    complete: bool
    """Whether every sample ran (a failing evaluation may stop at its first failing sample)."""
    outputs: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per graph output over the samples run: worst ``severity``, ``max_absdiff``, ``max_reldiff``,
    and ``failed_samples``."""

    def worst(self) -> tuple[str | None, float]:
        """The output with the worst severity and that severity."""
        if not self.outputs:
            return None, math.nan
        name = max(self.outputs, key=lambda n: self.outputs[n]["severity"])
        return name, self.outputs[name]["severity"]


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


@dataclass
class MixedPrecisionResult:
    """What ``MixedPrecisionSearch.run`` found."""

    fp32_nodes: list[str]
    """The nodes kept in float32, most sensitive first."""
    model: Any
    """The mixed-precision ``onnx.ModelProto``."""
    candidates: list[str]
    """The nodes the all-float16 conversion puts in float16, in topological order."""
    ranking: list[str]
    """The order the search tried candidates in, most sensitive first."""
    sensitivity: dict[str, dict[str, Any]]
    """Measured nodes: ``op``, ``own_severity`` and ``own_rel_l2`` (worst over the samples)."""
    before: Evaluation
    """The all-float16 model's evaluation."""
    after: Evaluation
    """The result's evaluation."""
    evaluations: int
    """Conversions run on the samples (the reference run not counted)."""
    phases: dict[str, int]
    """Evaluations per phase: ``bounds`` (all-float16, all-float32), ``prefix``, ``minimize``."""
    localize: dict[str, Any]
    """The ranking's cost: ``segments`` and ``shadow_runs`` run, ``samples`` used, ``time_s``."""
    samples: int
    time_s: float
    minimal: bool
    """Whether a pass of the minimization verified that no single kept node can go back to float16
    (True unless nothing had to be kept)."""
    info: dict[str, Any] = field(default_factory=dict)
    validation: list[dict[str, int]] = field(default_factory=list)
    """The validation rounds: per round, the new ``samples`` checked and how many ``failed`` (those
    joined the search's samples, and the search went on)."""

    def to_dict(self) -> dict[str, Any]:
        return _clean({
            "tool": "poly mixed precision",
            **self.info,
            "fp32_nodes": list(self.fp32_nodes),
            "candidates": len(self.candidates),
            "samples": self.samples,
            "passed_before": self.before.passed,
            "passed_after": self.after.passed,
            "error_before": self.before.outputs,
            "error_after": self.after.outputs,
            "evaluations": self.evaluations,
            "evaluations_by_phase": dict(self.phases),
            "validation": [dict(r) for r in self.validation],
            "one_minimal": self.minimal,
            "time_s": round(self.time_s, 3),
            "localize": dict(self.localize),
            "ranking": list(self.ranking),
            "sensitivity": self.sensitivity,
        })

    def save_json(self, path: str) -> None:
        save_json(self.to_dict(), path, description="mixed precision report")


# -- the ranking's tensor sources ------------------------------------------------------------------

class _AnyDifference:
    """The ranking's checker: a tensor counts as divergent (so its node is run alone) as soon as it
    differs at all; the figures are the real checker's."""

    def __init__(self, checker: Any) -> None:
        self.checker = checker

    def check_output(self, name: Any, output: Any, reference: Any) -> Any:
        check = self.checker.check_output(name, output, reference)
        same = check.error is None and check.max_absdiff == 0
        return dataclasses.replace(check, passed=same)


class _AliasedSource:
    """A tensor source (the float32 model's) answering for tensors of the float16 model that hold
    the same values under other names: the Casts the conversion inserts, and the renamed producers
    of graph outputs."""

    def __init__(self, inner: Any, alias: Mapping[str, str]) -> None:
        self.inner = inner
        self.alias = dict(alias)
        self._readers: dict[str, set[str]] = {}
        for name, target in self.alias.items():
            self._readers.setdefault(target, {target}).add(name)
        self._released: set[str] = set()

    def _target(self, name: str) -> str:
        return self.alias.get(name, name)

    def start(self, feed: Mapping[str, Any]) -> None:
        self._released = set()
        self.inner.start(feed)

    def provides(self, name: str) -> bool:
        return self.inner.provides(self._target(name))

    def values(self, names: Sequence[str]) -> dict[str, Any]:
        got = self.inner.values(list(dict.fromkeys(self._target(n) for n in names)))
        return {n: got[self._target(n)] for n in names if self._target(n) in got}

    def release(self, names: Iterable[str]) -> None:
        done = []
        for name in names:
            self._released.add(name)
            target = self._target(name)
            if self._readers.get(target, {target}) <= self._released:
                done.append(target)
        self.inner.release(done)


def _aliases(converted: Any, original_nodes: set[str], reference_tensors: set[str]) -> dict[str, str]:
    """Tensors of the converted model -> the reference tensor holding the same value (up to type)."""
    alias: dict[str, str] = {}
    for node in converted.graph.node:
        if node.op_type != "Cast" or node.name in original_nodes or not node.input or not node.output:
            continue
        source, target = node.input[0], node.output[0]
        if target in reference_tensors and source not in reference_tensors:
            alias[source] = target  # a graph output's producer, renamed; the Cast writes the output
        elif target not in reference_tensors:
            resolved = alias.get(source, source)
            if resolved in reference_tensors:
                alias[target] = resolved
    return alias


# -- the search -----------------------------------------------------------------------------------

class MixedPrecisionSearch:
    """
    Finds a 1-minimal set of nodes to keep in float32 for the float16 model to pass.

    Example::

        from poly.compare.dataset import SampleChecker

        search = MixedPrecisionSearch(onnx.load("model.onnx"), samples, SampleChecker(atol=1e-3, rtol=1e-3))
        result = search.run()
        onnx.save(result.model, "mixed.onnx")
        print(result.fp32_nodes, result.evaluations)
    """

    def __init__(self, model: Any, samples: Iterable[Mapping[str, Any]], checker: Any,
                 providers: Sequence[Any] | None = None, op_block_list: Sequence[str] | None = None,
                 keep_io_types: bool | None = None, fp32_nodes: Iterable[str] = (),
                 rank_samples: int = 2, rank: bool = True, model_dir: str | None = None,
                 progress: Callable[[str], None] | None = None,
                 validation: Iterable[Sequence[Mapping[str, Any]]] = ()) -> None:
        """
        Args:
            model (onnx.ModelProto): The float32 model, its weights loaded. Unnamed nodes are
                    named (``name_nodes``) on a copy.
            samples (Iterable[Dict[str, numpy.ndarray]]): The feed dicts checked.
            checker (SampleChecker): Decides each output's verdict (tolerances, statistic).
            providers (Sequence): ONNX-Runtime execution providers; None: CPU.
            op_block_list (Sequence[str]): ``ConvertToFp16``'s ops kept in float32; None: its default.
            keep_io_types (bool): ``ConvertToFp16``'s: graph inputs and outputs stay float32.
            fp32_nodes (Iterable[str]): Nodes always kept in float32 (not searched).
            rank_samples (int): How many samples the sensitivity ranking measures on.
            rank (bool): Whether to rank by measured sensitivity (else topological order).
            model_dir (str): The directory the model's external data paths are relative to.
            progress: Called with a one-line status after each evaluation.
            validation (Iterable[Sequence[Dict[str, numpy.ndarray]]]): Batches of new samples
                    from the same source, one a round: once a set is found, it is checked on the
                    next batch; the batch joins the samples, and when some of it failed the search
                    goes on from the set found (more nodes, then minimized again) and takes the
                    next batch. The result is 1-minimal on every sample it checked.
        """
        self.model = name_nodes(model)
        self.samples = [dict(sample) for sample in samples]
        if not self.samples:
            raise MixedPrecisionError("no samples to check the conversion with")
        self.checker = checker
        self.providers = list(providers) if providers else None
        self.op_block_list = None if op_block_list is None else list(op_block_list)
        self.keep_io_types = keep_io_types
        self.fixed = frozenset(fp32_nodes)
        unknown = unknown_node_names(self.model, self.fixed)
        if unknown:
            raise MixedPrecisionError(f"the model has no node named {', '.join(map(repr, unknown))}")
        self.rank_samples = max(1, int(rank_samples))
        self.rank = rank
        self.model_dir = model_dir
        self.progress = progress
        self.node_names = [node.name for node in self.model.graph.node]
        self.node_ops = {node.name: node.op_type for node in self.model.graph.node}
        self.validation = iter(validation)
        self.evaluations = 0
        self._cache: dict[frozenset, Evaluation] = {}
        self._order = list(range(len(self.samples)))
        self._reference: list[dict[str, Any]] | None = None
        self._feed_dicts: list[dict[str, Any]] = []
        self._input_types: list[tuple[str, str]] = []

    # -- running ----------------------------------------------------------------------------------

    def _session(self, model: Any) -> Any:
        from poly.onnx import SessionFromOnnx

        options = onnxrt.SessionOptions()
        options.log_severity_level = 3
        with G_LOGGER.verbosity(G_LOGGER.ERROR):
            return SessionFromOnnx(model.SerializeToString(), providers=self.providers, session_options=options)()

    @staticmethod
    def _feeds(session: Any, samples: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        dtypes = {arg.name: np.dtype(_ORT_TYPES[arg.type]) for arg in session.get_inputs() if arg.type in _ORT_TYPES}
        feeds = []
        for sample in samples:
            feed = {}
            for arg in session.get_inputs():
                if arg.name not in sample:
                    raise PolyException(f"the sample has no value for input {arg.name!r}")
                value = np.asarray(sample[arg.name])
                dtype = dtypes.get(arg.name)
                if dtype is not None and value.dtype != dtype and value.dtype.kind in "biuf" and dtype.kind in "biuf":
                    value = value.astype(dtype)
                feed[arg.name] = value
            feeds.append(feed)
        return feeds

    def reference(self) -> list[dict[str, Any]]:
        """The float32 model's outputs on every sample (computed once)."""
        if self._reference is None:
            self._feed_dicts, self._reference = self._run_reference(self.samples)
        return self._reference

    def _run_reference(self, samples: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The feed dicts of ``samples`` and the float32 model's outputs on them."""
        session = self._session(self.model)
        names = [o.name for o in session.get_outputs()]
        feeds = self._feeds(session, samples)
        self._input_types = [(arg.name, arg.type) for arg in session.get_inputs()]
        return feeds, [dict(zip(names, session.run(names, feed), strict=True)) for feed in feeds]

    def add_samples(self, samples: Iterable[Mapping[str, Any]]) -> int:
        """Adds samples to those checked (their reference outputs computed now); earlier
        evaluations are forgotten, as they did not run on them. Returns how many were added."""
        added = [dict(sample) for sample in samples]
        if not added:
            return 0
        references = self.reference()
        feeds, outputs = self._run_reference(added)
        references += outputs
        start = len(self.samples)
        self.samples += added
        self._feed_dicts += feeds
        self._order = list(range(start, len(self.samples))) + self._order  # the new ones first
        self._cache.clear()
        return len(added)

    def convert(self, keep: Iterable[str]) -> Any:
        """The model converted to float16 with ``keep`` (and the fixed nodes) in float32."""
        from poly.onnx import ConvertToFp16

        with G_LOGGER.verbosity(G_LOGGER.ERROR):
            return ConvertToFp16(self.model, keep_io_types=self.keep_io_types, op_block_list=self.op_block_list,
                                 node_block_list=sorted(set(keep) | self.fixed))()

    def evaluate(self, keep: Iterable[str], complete: bool = False) -> Evaluation:
        """
        Converts with ``keep`` in float32 and checks every graph output on the samples.

        Args:
            keep (Iterable[str]): Nodes kept in float32 (the fixed ones are added).
            complete (bool): Whether to run every sample even after one fails (for its figures).
        """
        key = frozenset(keep) | self.fixed
        cached = self._cache.get(key)
        if cached is not None and (cached.complete or not complete):
            return cached
        references = self.reference()
        self.evaluations += 1
        session = self._session(self.convert(key))
        names = [o.name for o in session.get_outputs()]
        same_inputs = [(arg.name, arg.type) for arg in session.get_inputs()] == self._input_types
        feeds = self._feed_dicts if same_inputs else self._feeds(session, self.samples)
        evaluation = Evaluation(key, True, True)
        for position, index in enumerate(list(self._order)):
            values = session.run(names, feeds[index])
            sample_passed = True
            for name, value in zip(names, values, strict=True):
                check = self.checker.check_output(name, value, references[index].get(name))
                figures = evaluation.outputs.setdefault(
                    name, {"severity": 0.0, "max_absdiff": 0.0, "max_reldiff": 0.0, "failed_samples": 0})
                figures["severity"] = _worse(figures["severity"], float(check.severity))
                figures["max_absdiff"] = _worse(figures["max_absdiff"], float(check.max_absdiff))
                figures["max_reldiff"] = _worse(figures["max_reldiff"], float(check.max_reldiff))
                if not check.passed:
                    figures["failed_samples"] += 1
                    sample_passed = False
            if not sample_passed:
                if evaluation.passed:  # the first failing sample goes first next time
                    self._order.remove(index)
                    self._order.insert(0, index)
                evaluation.passed = False
                if not complete and position < len(self._order) - 1:
                    evaluation.complete = False
                    break
        self._cache[key] = evaluation
        status = "passes" if evaluation.passed else "fails"
        G_LOGGER.verbose(f"Evaluation {self.evaluations}: {len(key)} node(s) in float32 {status}")
        if self.progress is not None:
            self.progress(f"evaluation {self.evaluations}: {len(key)} node(s) in float32 {status}")
        return evaluation

    # -- ranking ------------------------------------------------------------------------------------

    def measure(self, converted: Any) -> tuple[list[str], dict[str, dict[str, Any]], dict[str, Any]]:
        """
        Own error of every node of ``converted`` (the all-float16 model) that differs from the
        float32 model: ``poly debug localize`` with each such node run alone on the float32
        model's inputs.

        Returns:
            (ranked node names, sensitivity per node, cost)
        """
        from poly.debug.localize import GraphPlan, Localizer, ModelSource, OnnxExecutor

        start = time.time()
        candidate_model = onnx.ModelProto()
        candidate_model.CopyFrom(converted)
        reference_model = onnx.ModelProto()
        reference_model.CopyFrom(self.model)
        plan = GraphPlan(candidate_model)
        ref_plan = GraphPlan(reference_model)
        reference_tensors = set(ref_plan.producer) | set(ref_plan.graph_inputs)
        alias = _aliases(plan.model, set(self.node_names), reference_tensors)
        keep = {alias.get(name, name) for name in plan.producer} & reference_tensors

        def executor() -> Any:
            return OnnxExecutor("onnxrt", providers=self.providers, model_dir=self.model_dir)

        candidate = ModelSource(plan, executor(), label="float16")
        reference = _AliasedSource(ModelSource(ref_plan, executor(), keep=keep, label="float32"), alias)
        localizer = Localizer(plan, candidate, reference, _AnyDifference(self.checker), shadow_executor=executor())
        samples = self.samples[:self.rank_samples]
        # float32 values past float16's range become inf when fed to a float16 node: that is its error
        with G_LOGGER.verbosity(G_LOGGER.ERROR), np.errstate(over="ignore", invalid="ignore"):
            report = localizer.run(samples)
        sensitivity: dict[str, dict[str, Any]] = {}
        for record in report.nodes:
            nonfinite = bool(record.nonfinite_from_finite_inputs)
            if record.name not in self.node_ops or not (record.own or nonfinite):
                continue
            own_severity = max((_worse(0.0, f["severity"]) for f in record.own), default=math.nan)
            own_rel_l2 = max((_worse(0.0, f["rel_l2"]) for f in record.own), default=math.nan)
            sensitivity[record.name] = {"op": record.op, "nonfinite": nonfinite, "own_severity": own_severity,
                                        "own_rel_l2": own_rel_l2, "index": record.index}

        float32_kernels = self._float32_only_ops()

        def key(name: str) -> tuple[Any, ...]:
            figures = sensitivity[name]
            severity = 0.0 if math.isnan(figures["own_severity"]) else figures["own_severity"]
            rel_l2 = 0.0 if math.isnan(figures["own_rel_l2"]) else figures["own_rel_l2"]
            if figures["nonfinite"]:
                return (0, 0.0, False, 0.0, figures["index"])
            # among equal errors, ops the provider runs in float16 first: it computes the others in
            # float32 between Casts, so only their weights are float16 there
            slow = figures["op"] in float32_kernels
            if severity > 1:
                return (1, -severity, slow, -rel_l2, figures["index"])
            return (2, -rel_l2, slow, -severity, figures["index"])

        ranked = sorted(sensitivity, key=key)
        for figures in sensitivity.values():
            del figures["index"]
        cost = {"samples": len(samples), "segments": localizer.candidate.executor.runs,
                "shadow_runs": localizer.shadow_runs, "time_s": round(time.time() - start, 3)}
        return ranked, sensitivity, cost

    def _float32_only_ops(self) -> set[str]:
        """Ops the execution provider has no float16 kernels for (ONNX-Runtime's CPU provider only;
        other providers: none known)."""
        from poly.onnx import onnxruntime_fp16_op_block_list

        names = [p for p in (self.providers or ["cpu"]) if isinstance(p, str)]
        if not names or not all(name.lower().startswith("cpu") for name in names):
            return set()
        try:
            return set(onnxruntime_fp16_op_block_list("CPUExecutionProvider"))
        except Exception:  # noqa: BLE001 - a ranking detail
            return set()

    # -- the search ---------------------------------------------------------------------------------

    @staticmethod
    def _drop_chunks(kept: list[str], passes: Callable[[list[str]], bool]) -> list[str]:
        """Drops chunks of ``kept`` (least sensitive half first, then halves of a chunk that could
        not go) while ``passes``; single nodes are tried too. Returns what is left, in order."""
        current = list(kept)

        def drop(chunk: list[str]) -> None:
            nonlocal current
            chunk = [name for name in chunk if name in current]
            if not chunk:
                return
            trial = [name for name in current if name not in set(chunk)]
            if trial and passes(trial):
                current = trial
                return
            if len(chunk) > 1:
                half = len(chunk) // 2
                drop(chunk[:half])
                drop(chunk[half:])

        least_first = current[::-1]
        half = len(least_first) // 2
        drop(least_first[:half])
        drop(least_first[half:])
        return current

    def search_order(self, ranking: Sequence[str], sensitivity: Mapping[str, Mapping[str, Any]],
                     candidates: Sequence[str]) -> list[str]:
        """
        The order nodes are kept in float32: the measured ranking, where a node whose outputs
        turned NaN/Inf in the float16 run is followed by the candidates reading and producing them
        (a value past float16's range overflows wherever it is stored in float16), and a node whose
        own error fails the tolerance by the candidates producing its inputs (its own error
        includes their float16 rounding, which keeping it alone in float32 does not remove); then
        the unmeasured candidates in topological order.
        """
        candidate_set = set(candidates)
        producer = {output: node.name for node in self.model.graph.node for output in node.output if output}
        inputs = {node.name: list(node.input) for node in self.model.graph.node}
        readers: dict[str, list[str]] = {}
        for node in self.model.graph.node:
            for tensor in node.input:
                readers.setdefault(tensor, []).append(node.name)
        outputs = {node.name: [o for o in node.output if o] for node in self.model.graph.node}
        order: list[str] = []
        added: set[str] = set()

        def add(name: str | None) -> None:
            if name in candidate_set and name not in added:
                order.append(name)
                added.add(name)

        for name in ranking:
            add(name)
            figures = sensitivity.get(name, {})
            if figures.get("nonfinite"):
                for tensor in outputs.get(name, ()):
                    for reader in readers.get(tensor, ()):
                        add(reader)
            if figures.get("nonfinite") or figures.get("own_severity", 0.0) > 1:
                for tensor in inputs.get(name, ()):
                    add(producer.get(tensor))
        for name in candidates:
            add(name)
        return order

    def run(self) -> MixedPrecisionResult:
        """
        Returns:
            MixedPrecisionResult

        Raises:
            MixedPrecisionError: If the model has nothing to convert.
            UnreachableTolerance: If the model fails even with every convertible node in float32.
        """
        start = time.time()
        problem = float_precision_problem(self.model)
        if problem:
            raise MixedPrecisionError(problem)
        self.reference()
        with G_LOGGER.verbosity(G_LOGGER.WARNING):  # a weight out of float16's range is said once
            from poly.onnx import ConvertToFp16

            all_half = ConvertToFp16(self.model, keep_io_types=self.keep_io_types, op_block_list=self.op_block_list,
                                     node_block_list=sorted(self.fixed))()
        candidates = [name for name in _converted_nodes(self.node_names, all_half) if name not in self.fixed]
        if not candidates:
            raise MixedPrecisionError("no node of the model converts to float16 (its float nodes are all of ops "
                                      "kept in float32, or the fixed float32 nodes)")
        G_LOGGER.info(f"Searching the nodes to keep in float32: {len(candidates)} candidate node(s), "
                      f"{len(self.samples)} sample(s)")
        phases = {"bounds": 0, "prefix": 0, "minimize": 0}

        def counted(phase: str, keep: Iterable[str], complete: bool = False) -> Evaluation:
            before = self.evaluations
            evaluation = self.evaluate(keep, complete)
            phases[phase] += self.evaluations - before
            return evaluation

        before = counted("bounds", (), complete=True)
        empty: dict[str, Any] = {}

        def result(kept: list[str], after: Evaluation, ranking: list[str], sensitivity: dict, localize: dict,
                   minimal: bool) -> MixedPrecisionResult:
            fixed = [name for name in self.node_names if name in self.fixed]
            return MixedPrecisionResult(
                fp32_nodes=fixed + kept, model=self.convert(kept), candidates=candidates, ranking=ranking,
                sensitivity=sensitivity, before=before, after=after, evaluations=self.evaluations,
                phases=phases, localize=localize, samples=len(self.samples), time_s=time.time() - start,
                minimal=minimal)

        if before.passed:
            G_LOGGER.info("The all-float16 model passes: no node needs float32")
            return result([], before, [], empty, empty, True)
        every = counted("bounds", candidates, complete=True)
        if not every.passed:
            output, severity = every.worst()
            how = "holds NaN or cannot be compared: float16 is not what fails" if not math.isfinite(severity) else \
                f"is {severity:.3g}x its tolerance: float16 is not what fails; loosen --atol/--rtol"
            raise UnreachableTolerance(
                f"even with every node in float32 the outputs fail the comparison with the float32 model (output "
                f"{output!r} {how})")

        ranking: list[Any] = []
        sensitivity: dict[Any, Any] = {}
        localize: dict[Any, Any] = {}
        if self.rank:
            try:
                ranking, sensitivity, localize = self.measure(all_half)
            except Exception as err:  # noqa: BLE001 - the search still works in topological order
                G_LOGGER.warning(f"Measuring each node's float16 error failed ({str(err).splitlines()[0]}); "
                                 "trying nodes in topological order")
        order = self.search_order(ranking, sensitivity, candidates)
        G_LOGGER.info(f"Ranked {len(sensitivity)} measured node(s); most sensitive: {', '.join(order[:5])}")

        kept = self._shortest_passing_prefix([], order, lambda keep: counted("prefix", keep).passed)
        G_LOGGER.info(f"The {len(kept)} most sensitive node(s) in float32 pass; minimizing")
        kept = self._minimize(kept, lambda keep: counted("minimize", keep).passed)
        validation: list[dict[str, int]] = []
        for batch in self.validation:
            added = self.add_samples(batch)
            if not added:
                break
            check = self.evaluate(kept, complete=True)
            failed = max((figures["failed_samples"] for figures in check.outputs.values()), default=0)
            validation.append({"samples": added, "failed": int(failed) if not check.passed else 0})
            if check.passed:
                G_LOGGER.info(f"Validated on {added} new sample(s): all pass")
                break
            G_LOGGER.info(f"Validation: {added} new sample(s) checked, some fail; searching on all "
                          f"{len(self.samples)} sample(s)")
            rest = [name for name in order if name not in kept]
            kept = self._shortest_passing_prefix(kept, rest, lambda keep: counted("prefix", keep).passed)
            kept = self._minimize(kept, lambda keep: counted("minimize", keep).passed)
        after = self.evaluate(kept, complete=True)
        G_LOGGER.info(f"{len(kept)} node(s) kept in float32 after {self.evaluations} evaluation(s)")
        found = result(kept, after, order, sensitivity, localize, True)
        found.validation = validation
        return found

    @staticmethod
    def _shortest_passing_prefix(base: list[str], order: list[str],
                                 passes: Callable[[list[str]], bool]) -> list[str]:
        """``base`` plus the shortest prefix of ``order`` with which it passes (``base`` plus all of
        ``order`` is known to): galloping, then bisection."""
        if passes(base):
            return list(base)
        lo, hi, k = 0, len(order), 1
        while k < hi:
            if passes(base + order[:k]):
                hi = k
                break
            lo, k = k, k * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if passes(base + order[:mid]):
                hi = mid
            else:
                lo = mid
        return base + order[:hi]

    def _minimize(self, kept: list[str], passes: Callable[[list[str]], bool]) -> list[str]:
        """1-minimal: drops kept nodes (least sensitive first) while the model passes; a long set
        first loses whole chunks (halves, then their halves...), as a poor ranking leaves many
        nodes in it that are not needed."""
        if len(kept) >= CHUNKED_MINIMIZATION:
            kept = self._drop_chunks(kept, passes)
        while True:
            dropped = False
            for name in reversed(list(kept)):
                trial = [n for n in kept if n != name]
                if passes(trial):
                    kept = trial
                    dropped = True
            if not dropped:
                return kept


_ORT_TYPES = {
    "tensor(float)": "float32", "tensor(float16)": "float16", "tensor(double)": "float64",
    "tensor(int64)": "int64", "tensor(int32)": "int32", "tensor(int16)": "int16", "tensor(int8)": "int8",
    "tensor(uint8)": "uint8", "tensor(uint16)": "uint16", "tensor(uint32)": "uint32", "tensor(uint64)": "uint64",
    "tensor(bool)": "bool",
}
"""ONNX-Runtime's input type strings -> NumPy dtypes (the types samples are cast to)."""
