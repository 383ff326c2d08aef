"""
Tensor sources: where ``poly debug localize`` gets the value of a tensor for one sample.

- ``ModelSource``: runs an ONNX model segment by segment (``GraphPlan``) on an executor and keeps
  only what is still needed: the tensors its own later segments read, and those the caller
  asked to keep until it ``release``\\ s them.
- ``SavedSource``: the tensors of one iteration of saved results (a layer-wise golden written
  by ``poly run --onnx-outputs mark all --save-outputs``), plus the sample's inputs.

Each has ``start(feed)`` (a new sample), ``provides(name)``, ``values(names)`` (name -> array for
the names it provides, running what it must) and ``release(names)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from poly.core import PolyException, lazy_import
from poly.debug.localize.graph_plan import GraphPlan

np = lazy_import("numpy")
onnx = lazy_import("onnx")

__all__ = ["ModelSource", "SavedSource", "cast_feed"]


def cast_feed(feed: Mapping[str, Any], dtypes: Mapping[str, Any]) -> dict[str, Any]:
    """``feed`` with each array cast to ``dtypes[name]`` where that differs (numeric types only)."""
    out = {}
    for name, value in feed.items():
        array = np.asarray(value)
        dtype = dtypes.get(name)
        if dtype is not None and array.dtype != dtype and array.dtype.kind in "biuf" and np.dtype(dtype).kind in "biuf":
            array = array.astype(dtype)
        out[name] = array
    return out


def _input_dtypes(model: Any, initializers: set[str]) -> dict[str, Any]:
    dtypes = {}
    for vi in model.graph.input:
        if vi.name in initializers or not vi.type.HasField("tensor_type"):
            continue
        try:
            dtypes[vi.name] = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type))
        except Exception:  # noqa: BLE001 - unknown element type: fed as given
            continue
    return dtypes


class ModelSource:
    """
    The tensors of an ONNX model run segment by segment.

    Example::

        source = ModelSource(GraphPlan(model), OnnxExecutor("onnx-ref"), keep={"conv1_out"})
        source.start({"x": x})
        values = source.values(["conv1_out"])
    """

    def __init__(self, plan: GraphPlan, executor: Any, keep: Iterable[str] = (), label: str | None = None) -> None:
        """
        Args:
            plan (GraphPlan): The model's plan.
            executor (OnnxExecutor): What runs its segments.
            keep (Iterable[str]): Names the caller may ask for later: kept once produced until
                    released (other tensors are dropped as soon as no later segment reads them).
            label (str): How reports name this source; defaults to the executor's backend.
        """
        self.plan = plan
        self.executor = executor
        self.keep = set(keep)
        self.label = label or getattr(executor, "kind", "model")
        self._input_dtypes = _input_dtypes(plan.model, plan.initializers)
        self._known = set(plan.producer) | set(plan.graph_inputs)
        self._store: dict[str, Any] = {}
        self._next = 0
        self._released: set[str] = set()
        self._produced: set[str] = set()

    def __repr__(self) -> str:
        return f"ModelSource({self.label!r})"

    def start(self, feed: Mapping[str, Any]) -> None:
        """Begins a sample: ``feed`` holds the model's inputs."""
        missing = [name for name in self.plan.graph_inputs if name not in feed]
        if missing:
            raise PolyException(f"{self.label}: the sample has no value for input(s) {', '.join(missing)}")
        self._store = cast_feed({name: feed[name] for name in self.plan.graph_inputs}, self._input_dtypes)
        self._next = 0
        self._released = set()
        self._produced = set(self._store)

    def provides(self, name: str) -> bool:
        return name in self._known

    def values(self, names: Sequence[str]) -> dict[str, Any]:
        """The values of ``names`` this model provides, running its next segments until each is produced."""
        wanted = [name for name in names if name in self._known]
        # run on until each is produced (a name produced earlier and dropped is not produced again)
        while any(name not in self._produced for name in wanted) and self._next < len(self.plan.segments):
            self._run_next(set(wanted))
        return {name: self._store[name] for name in wanted if name in self._store}

    def run_segment(self, index: int) -> dict[str, Any]:
        """Runs segment ``index`` (the next one) and returns every tensor it produced."""
        if index != self._next:
            raise PolyException(f"{self.label}: segment {index} asked for, segment {self._next} is next")
        return self._run_next(set())

    def _run_next(self, wanted: set[str]) -> dict[str, Any]:
        segment = self.plan.segments[self._next]
        feed = {name: self._store[name] for name in segment.reads}
        model = self.plan.segment_model(segment, feed, segment.produces)
        produced = self.executor.run(model, feed, segment.produces)
        self._produced.update(segment.produces)
        last = segment.stop - 1
        self._next += 1
        for name, value in produced.items():
            if name in wanted or (name in self.keep and name not in self._released) or \
                    self.plan.last_read.get(name, -1) > last:
                self._store[name] = value
        self._drop(segment.reads, last)
        return produced

    def _drop(self, names: Iterable[str], last: int) -> None:
        for name in names:
            if self.plan.last_read.get(name, -1) <= last and (name not in self.keep or name in self._released):
                self._store.pop(name, None)

    def release(self, names: Iterable[str]) -> None:
        """The caller no longer needs ``names``: dropped unless a later segment still reads them."""
        names = list(names)
        self._released.update(names)
        current = self.plan.segments[self._next - 1].stop - 1 if self._next else -1
        self._drop(names, current)

    def held(self) -> int:
        """How many tensors are held now."""
        return len(self._store)


class SavedSource:
    """
    The tensors of saved results: iteration ``i`` of one runner's results serves sample ``i``.

    Example::

        source = SavedSource(RunResults.load("layerwise_golden.json"))
    """

    def __init__(self, results: Any, runner_name: str | None = None, label: str | None = None) -> None:
        """
        Args:
            results (RunResults): Saved results; the first runner's unless ``runner_name``.
            runner_name (str): The runner whose iterations to use.
            label (str): How reports name this source.
        """
        items = list(results.items())
        if not items:
            raise PolyException("the saved results hold no runner")
        if runner_name is not None:
            matching = [item for item in items if item[0] == runner_name]
            if not matching:
                raise PolyException(f"the saved results hold no runner named {runner_name!r}")
            items = matching
        self.runner_name, self.iterations = items[0]
        self.label = label or self.runner_name
        self._sample = -1
        self._current: Mapping[str, Any] = {}
        self._feed: Mapping[str, Any] = {}

    def __len__(self) -> int:
        return len(self.iterations)

    def start(self, feed: Mapping[str, Any]) -> None:
        self._sample += 1
        if self._sample >= len(self.iterations):
            raise PolyException(f"{self.label}: the saved results hold {len(self.iterations)} iteration(s); "
                                f"sample {self._sample} has no reference")
        self._current = self.iterations[self._sample]
        self._feed = feed

    def provides(self, name: str) -> bool:
        return name in self._current or name in self._feed

    def values(self, names: Sequence[str]) -> dict[str, Any]:
        out = {}
        for name in names:
            if name in self._current:
                out[name] = np.asarray(self._current[name])
            elif name in self._feed:
                out[name] = np.asarray(self._feed[name])
        return out

    def release(self, names: Iterable[str]) -> None:
        """Nothing to free: saved results are read as a whole."""
