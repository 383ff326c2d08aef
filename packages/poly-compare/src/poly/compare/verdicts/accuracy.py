"""
Accuracy results: ``AccuracyResult`` (every iteration's per-output verdicts of one comparison
function, per runner pair) and ``AccuracyResults`` (one per comparison function), in Polygraphy
0.53's JSON format.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any

from poly.core import G_LOGGER
from poly.core.json import Decoder, Encoder, from_json, load_json, save_json, to_json
from poly.core.tensors.per_output import value_or_from_dict
from poly.core.util.sequences import unique_list

__all__ = ["AccuracyResult", "AccuracyResults"]


def _checked(obj: Any, cls: Any) -> Any:
    if not isinstance(obj, cls):
        G_LOGGER.critical(
            f"Provided JSON cannot be decoded into a {cls.__name__}. Note: JSON was decoded into a {type(obj).__name__}"
        )
    return obj


class AccuracyResult:
    """
    The verdicts of one comparison function: runner pair ``(name0, name1)`` -> one dict per
    iteration of output name -> result (``bool(result)`` is the verdict; ``OutputCompareResult``
    and friends carry the statistics)::

        match = bool(accuracy_result[("runner0", "runner1")][iteration]["output0"])

    ``bool(accuracy_result)`` is True when everything passed; ``percentage(pair)`` and
    ``stats(pair)`` give the pass rate of a pair.
    """

    def __init__(self, dct: Any = None, aggregation: str = "per_sample") -> None:
        """
        Args:
            dct (Mapping[Tuple[str, str], List[Mapping[str, Any]]]): Initial contents.
            aggregation (str): ``"per_sample"`` (every iteration must pass) or ``"average"``
                    (each output's metrics averaged over iterations must pass).
        """
        self.dct: Any = OrderedDict()
        for key, value in (dct or {}).items():
            self[key] = value
        self.aggregation = aggregation

    # -- mapping interface ----------------------------------------------------------------------

    def keys(self) -> Any:
        """The runner pairs."""
        return self.dct.keys()

    def values(self) -> Any:
        """Each pair's list of per-iteration results."""
        return self.dct.values()

    def items(self) -> Any:
        """``(runner pair, per-iteration results)`` pairs."""
        return self.dct.items()

    def update(self, other: Any) -> None:
        """Adds or replaces runner pairs from a mapping."""
        for key, value in other.items():
            self[key] = value

    def __contains__(self, key: Any) -> bool:
        return key in self.dct

    def __getitem__(self, key: Any) -> Any:
        return self.dct[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        if not (isinstance(key, tuple) and len(key) == 2):
            G_LOGGER.critical(f"AccuracyResult keys are (runner0, runner1) tuples, not: {key!r}")
        if not isinstance(value, list):
            G_LOGGER.critical(f"AccuracyResult values are lists of per-iteration results, not: {type(value).__name__}")
        self.dct[key] = value

    def __iter__(self) -> Any:
        return iter(self.dct)

    def __len__(self) -> int:
        return len(self.dct)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AccuracyResult):
            return NotImplemented
        return self.dct == other.dct and self.aggregation == other.aggregation

    __hash__: Any = None

    def __repr__(self) -> str:
        return f"AccuracyResult({dict(self.dct)!r}, aggregation={self.aggregation!r})"

    # -- verdicts -------------------------------------------------------------------------------

    def __bool__(self) -> bool:
        if self.aggregation == "average":
            return all(bool(match) for pair in self.keys() for match in self.average_results(pair).values())
        return all(bool(match) for its in self.values() for it in its for match in it.values())

    def _get_runner_pair(self, runner_pair: Any) -> Any:
        if runner_pair is not None:
            return tuple(runner_pair)
        if not self.dct:
            G_LOGGER.critical("This AccuracyResult holds no runner pairs")
        return next(iter(self.dct))

    def stats(self, runner_pair: Any = None) -> tuple[Any, ...]:
        """
        Per-iteration counts of a pair (whatever the aggregation mode).

        Args:
            runner_pair (Tuple[str, str]): The pair; defaults to the first.

        Returns:
            Tuple[int, int, int]: Iterations that matched, mismatched, and in total.
        """
        its = self[self._get_runner_pair(runner_pair)]
        matched = sum(all(bool(m) for m in it.values()) for it in its)
        return matched, len(its) - matched, len(its)

    def percentage(self, runner_pair: Any = None) -> Any:
        """
        The fraction (0.0 to 1.0) of a pair's iterations in which every output matched; 1.0 when
        there is nothing to compare.
        """
        if not self.dct:
            return 1.0
        matched, _, total = self.stats(runner_pair)
        return float(matched) / float(total) if total else 1.0

    def pass_rates(self) -> Any:
        """Runner pair -> fraction of iterations that passed, for every pair."""
        return OrderedDict((pair, self.percentage(pair)) for pair in self.keys())

    @staticmethod
    def _collect_output_names(iterations: Any) -> Any:
        return unique_list(name for it in iterations for name in it.keys())

    def output_names(self) -> Any:
        """The compared output names, in order of first appearance, over every pair."""
        return unique_list(name for its in self.values() for name in self._collect_output_names(its))

    def _result_metric_fields(self) -> list[Any]:
        for its in self.values():
            for it in its:
                for result in it.values():
                    if not isinstance(result, bool):
                        return list(result.metric_fields())
        return []

    @staticmethod
    def _average_output_fields(iterations: Any, output_name: Any, fields: Any) -> Any:
        results = [it[output_name] for it in iterations if output_name in it]
        if any(not hasattr(result, f) for result in results for f in fields):
            G_LOGGER.critical(
                f"Output: {output_name} | Cannot compute an averaged comparison because at "
                f"least one iteration produced no comparable metrics (e.g. a shape "
                f"mismatch). Averaging over only the comparable iterations would be "
                f"misleading, so the comparison cannot be evaluated with check_average=True. "
                f"Re-run without check_average to see the per-iteration results."
            )
        averaged = OrderedDict()
        for name in fields:
            values = [v for v in (getattr(r, name, None) for r in results) if v is not None]
            if values:
                averaged[name] = sum(values) / len(values)
        return averaged

    def average_results(self, runner_pair: Any = None) -> Any:
        """
        Per output, a result whose metrics are the averages over iterations, checked against the
        same thresholds (NaN propagates; an iteration without metrics is an error).

        Returns:
            OrderedDict[str, CompareResult]
        """
        pair = self._get_runner_pair(runner_pair)
        fields = self._result_metric_fields()
        iterations = self[pair]
        results = OrderedDict()
        for output_name in self._collect_output_names(iterations):
            averaged = self._average_output_fields(iterations, output_name, fields)
            sample = next(it[output_name] for it in iterations if output_name in it)
            results[output_name] = type(sample)(
                **{name: averaged.get(name) for name in fields}, thresholds=sample.thresholds
            )
        return results

    def describe_average(self, runner_pair: Any = None) -> Any:
        """Output name -> ``(line, passed)`` describing each averaged metric check."""
        described = OrderedDict()
        for output_name, result in self.average_results(runner_pair).items():
            description = result.describe()
            if description is not None:
                described[output_name] = description
        return described

    @staticmethod
    def _check_rethresholdable(result: Any, threshold: Any, output_name: Any) -> None:
        if isinstance(result, bool) or not result.metric_fields():
            G_LOGGER.critical(
                f"Output: '{output_name}' has no re-thresholdable metrics (e.g. it was a shape "
                f"mismatch or an 'indices' comparison), so it cannot be re-evaluated against new "
                f"thresholds.\nNote: Re-run the comparison from saved raw outputs "
                f"(run --save-outputs / --load-outputs) for such comparisons."
            )
        have, needed = result.metric_fields(), threshold.metric_fields()
        missing = [name for name in needed if name not in have]
        if missing:
            G_LOGGER.critical(
                f"The requested comparison expects metric field(s) {missing} which are not present "
                f"in the saved results for output: '{output_name}' (it has: {have})."
            )

    def reevaluate(self, thresholds: Any, aggregation: Any = None) -> Any:
        """
        Checks every stored result again against ``thresholds`` (one ``Threshold``, or a dict by
        output name with ``""`` as the default), in place.

        Returns:
            AccuracyResult: self.
        """
        if aggregation is not None:
            self.aggregation = aggregation
        for pair in list(self.keys()):
            for it in self[pair]:
                for output_name, result in it.items():
                    threshold = value_or_from_dict(thresholds, output_name)
                    if threshold is None:
                        G_LOGGER.critical(f"No threshold was provided for output: '{output_name}'.")
                    self._check_rethresholdable(result, threshold, output_name)
                    result.set_thresholds(threshold)
        return self

    # -- files ----------------------------------------------------------------------------------

    def to_json(self) -> Any:
        """This instance as JSON text."""
        return to_json(self)

    @staticmethod
    def from_json(src: Any) -> Any:
        """Decodes JSON text (an ``AccuracyResult``, or ``AccuracyResults`` holding one)."""
        return AccuracyResult._single(from_json(src))

    def save(self, dest: Any) -> None:
        """Saves as JSON to a path (atomically) or file-like object."""
        save_json(self, dest, description="accuracy results")

    @staticmethod
    def load(src: Any) -> Any:
        """Loads an ``AccuracyResult`` (or an ``AccuracyResults`` holding exactly one)."""
        return AccuracyResult._single(load_json(src, description="accuracy results"))

    @staticmethod
    def _single(obj: Any) -> Any:
        if isinstance(obj, AccuracyResults) and len(obj) == 1:
            return obj[0]
        return _checked(obj, AccuracyResult)


class AccuracyResults:
    """
    One ``AccuracyResult`` per comparison function, as ``compare_accuracy`` returns for a list of
    them; ``bool(results)`` is True when every one passed.
    """

    def __init__(self, lst: Any = None) -> None:
        self.lst: list[Any] = []
        for item in lst or []:
            self.append(item)

    def append(self, item: Any) -> None:
        """Appends an ``AccuracyResult``."""
        if not isinstance(item, AccuracyResult):
            G_LOGGER.critical(f"AccuracyResults holds AccuracyResult objects, not {type(item).__name__}")
        self.lst.append(item)

    def extend(self, items: Any) -> None:
        """Appends several ``AccuracyResult`` s."""
        for item in items:
            self.append(item)

    def __getitem__(self, index: Any) -> Any:
        return self.lst[index]

    def __setitem__(self, index: Any, item: Any) -> None:
        if not isinstance(item, AccuracyResult):
            G_LOGGER.critical(f"AccuracyResults holds AccuracyResult objects, not {type(item).__name__}")
        self.lst[index] = item

    def __iter__(self) -> Any:
        return iter(self.lst)

    def __len__(self) -> int:
        return len(self.lst)

    def __contains__(self, item: Any) -> bool:
        return item in self.lst

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AccuracyResults):
            return NotImplemented
        return self.lst == other.lst

    __hash__: Any = None

    def __repr__(self) -> str:
        return f"AccuracyResults({self.lst!r})"

    def __bool__(self) -> bool:
        return all(bool(result) for result in self.lst)

    def output_names(self) -> Any:
        """Every compared output name, in order of first appearance."""
        return unique_list(name for result in self.lst for name in result.output_names())

    @staticmethod
    def _threshold_metric_fields(threshold: Any) -> list[Any]:
        if isinstance(threshold, dict):
            if not threshold:
                G_LOGGER.critical("A per-output threshold dictionary cannot be empty.")
            threshold = next(iter(threshold.values()))
        return list(threshold.metric_fields())

    def reevaluate(self, thresholds: Any, aggregation: Any = None) -> Any:
        """
        Checks the saved comparisons again: each threshold (or per-output dict) re-checks the saved
        comparison with the same metric fields; comparisons no threshold selects are dropped.

        Returns:
            AccuracyResults: self.
        """
        threshold_list = list(thresholds) if isinstance(thresholds, (list, tuple)) else [thresholds]
        remaining = list(self.lst)
        checked = []
        for threshold in threshold_list:
            fields = self._threshold_metric_fields(threshold)
            match = next((r for r in remaining if list(r._result_metric_fields()) == fields), None)
            if match is None:
                G_LOGGER.critical(
                    f"No saved comparison results match the requested threshold (metric fields: {fields}).\n"
                    f"Note: the saved results contain these metric fields: "
                    f"{[r._result_metric_fields() for r in self.lst]}."
                )
            remaining.remove(match)
            match.reevaluate(threshold, aggregation=aggregation)
            checked.append(match)
        for result in remaining:
            G_LOGGER.info(
                f"Ignoring saved comparison with metric fields {result._result_metric_fields()}: "
                f"no matching threshold was requested."
            )
        self.lst = checked
        return self

    def to_json(self) -> Any:
        """This instance as JSON text, in Polygraphy 0.53's format."""
        return to_json(self)

    @staticmethod
    def from_json(src: Any) -> Any:
        """Decodes JSON text (an ``AccuracyResults``, or a single ``AccuracyResult``)."""
        return AccuracyResults._wrap(from_json(src))

    def save(self, dest: Any) -> None:
        """Saves as JSON to a path (atomically) or file-like object."""
        save_json(self, dest, description="accuracy results")

    @staticmethod
    def load(src: Any) -> Any:
        """Loads an ``AccuracyResults`` (a file holding a single ``AccuracyResult`` is wrapped)."""
        if isinstance(src, (str, os.PathLike)) and not os.path.exists(src):
            G_LOGGER.critical(f"Could not load accuracy results: '{src}' does not exist")
        return AccuracyResults._wrap(load_json(src, description="accuracy results"))

    @staticmethod
    def _wrap(obj: Any) -> Any:
        if isinstance(obj, AccuracyResult):
            return AccuracyResults([obj])
        return _checked(obj, AccuracyResults)


@Encoder.register(AccuracyResult)
def _encode_accuracy_result(result: Any) -> dict[Any, Any]:
    return {
        "lst": [[list(pair), iterations] for pair, iterations in result.dct.items()],
        "aggregation": result.aggregation,
    }


@Decoder.register(AccuracyResult)
def _decode_accuracy_result(dct: Any) -> Any:
    data = OrderedDict((tuple(pair), list(iterations)) for pair, iterations in dct["lst"])
    return AccuracyResult(data, aggregation=dct.get("aggregation", "per_sample"))


@Encoder.register(AccuracyResults)
def _encode_accuracy_results(results: Any) -> dict[Any, Any]:
    return {"lst": results.lst}


@Decoder.register(AccuracyResults)
def _decode_accuracy_results(dct: Any) -> Any:
    return AccuracyResults(dct["lst"])
