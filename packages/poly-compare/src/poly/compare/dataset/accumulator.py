"""
The running summary of a validation: pass rate, per-output error distributions (fixed
log-spaced histograms of each sample's largest absolute and relative difference) and the worst
samples. Its size depends on the number of outputs and ``worst_k``, never on the sample count.
"""

from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from poly.compare.dataset.sample_check import OutputCheck

__all__ = ["SampleResult", "LogHistogram", "OutputDistribution", "Accumulator", "HISTOGRAM_EDGES"]

HISTOGRAM_EDGES = np.logspace(-12, 6, 18 * 4 + 1)
"""Bin edges shared by every histogram: 4 bins per decade from 1e-12 to 1e6; below (zero
included) and above (inf included) go to an underflow and an overflow bin."""
_EDGES = HISTOGRAM_EDGES.tolist()  # (bisect on a list: np.searchsorted on one value costs microseconds)


@dataclass
class SampleResult:
    """The outcome of one sample: its output checks, or the error that kept it from being compared."""

    index: int
    name: str | None
    checks: list[OutputCheck] = field(default_factory=list)
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None and bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def severity(self) -> float:
        return max((c.severity for c in self.checks), default=math.inf)

    def summary(self) -> dict:  # type: ignore[type-arg]
        """A small JSON-ready record of this sample."""
        return {
            "index": self.index, "file": self.name, "passed": self.passed,
            "severity": _finite_or_str(self.severity),
            "outputs": {c.name: _check_record(c) for c in self.checks},
        }


def _finite_or_str(value: Any) -> Any:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else str(value)


def _check_record(check: OutputCheck) -> dict:  # type: ignore[type-arg]
    record = {"passed": check.passed, "max_absdiff": _finite_or_str(check.max_absdiff),
              "max_reldiff": _finite_or_str(check.max_reldiff), "checked_stat": check.checked_stat,
              "stat_absdiff": _finite_or_str(check.stat_absdiff), "stat_reldiff": _finite_or_str(check.stat_reldiff),
              "mismatches": check.mismatches}
    if check.error:
        record["error"] = check.error
    return record


class LogHistogram:
    """Counts of values in the fixed log-spaced bins of ``HISTOGRAM_EDGES``, plus NaNs; exact
    zeros (counted in the underflow bin too) and the values of failed checks are also counted
    apart, so that a report can draw zero as zero and the failures in their bins."""

    def __init__(self) -> None:
        self.counts = np.zeros(len(HISTOGRAM_EDGES) + 1, dtype=np.int64)
        self.nan = 0
        self.zeros = 0
        self.failed = np.zeros(len(HISTOGRAM_EDGES) + 1, dtype=np.int64)
        self.failed_nan = 0
        self.failed_zeros = 0
        # the largest value seen, and the largest below the first edge (often exact zeros), so
        # that a quantile's bound never exceeds what was observed
        self.max = -math.inf
        self.under_max = -math.inf

    def add(self, value: float, failed: bool = False) -> None:
        """Counts ``value``; ``failed``: it is the value of a check that failed."""
        if math.isnan(value):
            self.nan += 1
            self.failed_nan += failed
            return
        b = bisect.bisect_right(_EDGES, value)
        self.counts[b] += 1
        self.failed[b] += failed
        if value == 0:
            self.zeros += 1
            self.failed_zeros += failed
        self.max = max(self.max, value)
        if b == 0:
            self.under_max = max(self.under_max, value)

    @property
    def total(self) -> int:
        return int(self.counts.sum()) + self.nan

    def quantile(self, q: float) -> float:
        """An upper bound of the q-quantile: the upper edge of the bin holding it, capped by the
        largest value seen there (NaNs rank last)."""
        n = self.total
        if n == 0:
            return math.nan
        rank = max(1, math.ceil(q * n))
        cumulative = np.cumsum(self.counts)
        if rank > cumulative[-1]:
            return math.nan
        b = int(np.searchsorted(cumulative, rank))
        if b == 0:
            return float(self.under_max)
        if b >= len(HISTOGRAM_EDGES):
            return float(self.max)
        return min(float(HISTOGRAM_EDGES[b]), float(self.max))

    def merge(self, other: LogHistogram) -> None:
        """Adds ``other``'s counts: the result is the histogram of both sets of values."""
        self.counts += other.counts
        self.nan += other.nan
        self.zeros += other.zeros
        self.failed += other.failed
        self.failed_nan += other.failed_nan
        self.failed_zeros += other.failed_zeros
        self.max = max(self.max, other.max)
        self.under_max = max(self.under_max, other.under_max)

    def to_dict(self) -> dict:  # type: ignore[type-arg]
        """``counts`` (underflow bin first, overflow last) and ``nan`` count every value; ``zeros``
        the exact zeros among the underflow bin's; ``failed_*`` the same for failed checks only."""
        return {"edges": [float(e) for e in HISTOGRAM_EDGES], "counts": [int(c) for c in self.counts],
                "nan": self.nan, "zeros": self.zeros, "failed_counts": [int(c) for c in self.failed],
                "failed_nan": self.failed_nan, "failed_zeros": self.failed_zeros}


REPORTED_QUANTILES = (0.5, 0.9, 0.99)

KEPT_CAUSES = 5
"""The distinct errors (missing output, shape mismatch...) an output keeps with their counts; the
others are only counted, so that the summary stays small whatever the dataset."""


class OutputDistribution:
    """The distribution over samples of one output's largest absolute and relative differences."""

    def __init__(self, name: Any) -> None:
        self.name = name
        self.samples = 0
        self.failed = 0
        self.errors = 0
        self.absdiff = LogHistogram()
        self.reldiff = LogHistogram()
        self.max_absdiff = -math.inf
        self.max_reldiff = -math.inf
        self._sum_absdiff = 0.0
        self.atol: float | None = None
        self.rtol: float | None = None
        self.checked_stat: str | None = None
        self.causes: dict[str, list] = {}  # type: ignore[type-arg]  # error -> [count, first index, its file]
        self.other_errors = 0

    def add(self, check: OutputCheck, index: int = -1, name: str | None = None) -> None:
        """Counts ``check`` (of sample ``index``, file ``name``)."""
        self.samples += 1
        self.failed += not check.passed
        if self.atol is None:  # the tolerances the output is checked with, the same for every sample
            self.atol, self.rtol, self.checked_stat = check.atol, check.rtol, check.checked_stat
        if check.error is not None:
            self.errors += 1
            cause = self.causes.get(check.error)
            if cause is not None:
                cause[0] += 1
                if index < cause[1]:  # samples may come out of order (several workers)
                    cause[1:] = [index, name]
            elif len(self.causes) < KEPT_CAUSES:
                self.causes[check.error] = [1, index, name]
            else:
                self.other_errors += 1
            return
        self.absdiff.add(check.max_absdiff, failed=not check.passed)
        self.reldiff.add(check.max_reldiff, failed=not check.passed)
        if not math.isnan(check.max_absdiff):
            self.max_absdiff = max(self.max_absdiff, check.max_absdiff)
            self._sum_absdiff += check.max_absdiff
        if not math.isnan(check.max_reldiff):
            self.max_reldiff = max(self.max_reldiff, check.max_reldiff)

    def merge(self, other: OutputDistribution) -> None:
        """Folds in the distribution of the same output over other samples."""
        self.samples += other.samples
        self.failed += other.failed
        self.errors += other.errors
        self.absdiff.merge(other.absdiff)
        self.reldiff.merge(other.reldiff)
        self.max_absdiff = max(self.max_absdiff, other.max_absdiff)
        self.max_reldiff = max(self.max_reldiff, other.max_reldiff)
        self._sum_absdiff += other._sum_absdiff
        if self.atol is None:
            self.atol, self.rtol, self.checked_stat = other.atol, other.rtol, other.checked_stat
        causes = {k: list(v) for k, v in self.causes.items()}
        for error, (count, index, name) in other.causes.items():
            if error in causes:
                causes[error][0] += count
                if index < causes[error][1]:
                    causes[error][1:] = [index, name]
            else:
                causes[error] = [count, index, name]
        kept = sorted(causes, key=lambda e: causes[e][1])[:KEPT_CAUSES]  # the first seen, by sample index
        self.other_errors += other.other_errors + sum(causes[e][0] for e in causes if e not in kept)
        self.causes = {e: causes[e] for e in kept}

    def to_dict(self) -> dict:  # type: ignore[type-arg]
        compared = self.samples - self.errors
        return {
            "samples": self.samples, "failed": self.failed, "errors": self.errors,
            "atol": _finite_or_str(self.atol), "rtol": _finite_or_str(self.rtol), "checked_stat": self.checked_stat,
            "error_causes": [{"error": e, "samples": c, "first_index": i, "first_file": n}
                             for e, (c, i, n) in sorted(self.causes.items(), key=lambda item: item[1][1])],
            "other_errors": self.other_errors,
            # ``failed`` counts the checks that could not be compared (``errors``) too
            "pass_rate": (self.samples - self.failed) / self.samples if self.samples else None,
            "max_absdiff": _finite_or_str(self.max_absdiff) if compared else None,
            "max_reldiff": _finite_or_str(self.max_reldiff) if compared else None,
            "mean_max_absdiff": self._sum_absdiff / compared if compared else None,
            "absdiff_quantiles": {str(q): _finite_or_str(self.absdiff.quantile(q)) for q in REPORTED_QUANTILES},
            "reldiff_quantiles": {str(q): _finite_or_str(self.reldiff.quantile(q)) for q in REPORTED_QUANTILES},
            "absdiff_histogram": self.absdiff.to_dict(),
            "reldiff_histogram": self.reldiff.to_dict(),
        }


class Accumulator:
    """
    Folds ``SampleResult`` s into a summary. Keeps the ``worst_k`` worst samples (failed first,
    then by how far over tolerance) in a heap, and the first ``keep_failed`` failed and
    ``keep_errors`` unreadable samples; everything else is counts and fixed-size histograms.
    Not thread-safe: the pipeline calls ``add`` under its own lock.
    """

    def __init__(self, worst_k: int = 10, keep_failed: int = 100, keep_errors: int = 100) -> None:
        self.worst_k = worst_k
        self.keep_failed = keep_failed
        self.keep_errors = keep_errors
        self.samples = 0
        self.passed = 0
        self.failed = 0
        self.errors = 0
        self.outputs: dict[str, OutputDistribution] = {}
        self.failed_samples: list[dict] = []  # type: ignore[type-arg]
        self.error_samples: list[dict] = []  # type: ignore[type-arg]
        self._worst: list[tuple] = []  # type: ignore[type-arg]  # min-heap of (failed, severity, -index, summary)

    @property
    def compared(self) -> int:
        return self.passed + self.failed

    @property
    def pass_rate(self) -> float | None:
        """The samples that passed among all samples, unreadable ones included (they did not pass):
        the rate agrees with the verdict's "passed/samples"; None before any sample."""
        return self.passed / self.samples if self.samples else None

    def add(self, result: SampleResult) -> None:
        self.samples += 1
        if result.error is not None:
            self.errors += 1
            if len(self.error_samples) < self.keep_errors:
                self.error_samples.append({"index": result.index, "file": result.name, "error": result.error})
            return
        if result.passed:
            self.passed += 1
        else:
            self.failed += 1
        for check in result.checks:
            dist = self.outputs.get(check.name)
            if dist is None:
                dist = self.outputs[check.name] = OutputDistribution(check.name)
            dist.add(check, result.index, result.name)
        summary = None
        if not result.passed and len(self.failed_samples) < self.keep_failed:
            summary = result.summary()
            self.failed_samples.append({"index": result.index, "file": result.name})
        severity = result.severity
        key = (not result.passed, severity if not math.isnan(severity) else math.inf, -result.index)
        if self.worst_k <= 0:
            return
        if len(self._worst) < self.worst_k:
            heapq.heappush(self._worst, (*key, summary or result.summary()))
        elif key > self._worst[0][:3]:
            heapq.heapreplace(self._worst, (*key, summary or result.summary()))

    def merge(self, other: Accumulator) -> None:
        """
        Folds in the accumulator of other samples (another worker's share of the dataset): counts
        and histograms add, the worst samples are the worst of both, and the kept failed and
        unreadable samples are the first by sample index. Merging the accumulators of disjoint
        shares gives what one accumulator fed every sample gives (the mean up to float rounding).
        """
        self.samples += other.samples
        self.passed += other.passed
        self.failed += other.failed
        self.errors += other.errors
        for name, dist in other.outputs.items():
            if name not in self.outputs:
                self.outputs[name] = OutputDistribution(name)
            self.outputs[name].merge(dist)
        self.failed_samples = sorted(self.failed_samples + other.failed_samples,
                                     key=lambda s: s["index"])[:self.keep_failed]
        self.error_samples = sorted(self.error_samples + other.error_samples,
                                    key=lambda s: s["index"])[:self.keep_errors]
        for entry in other._worst:
            if self.worst_k <= 0:
                break
            if len(self._worst) < self.worst_k:
                heapq.heappush(self._worst, entry)
            elif entry[:3] > self._worst[0][:3]:
                heapq.heapreplace(self._worst, entry)

    def worst(self) -> list[dict]:  # type: ignore[type-arg]
        """The worst samples, worst first."""
        return [entry[3] for entry in sorted(self._worst, key=lambda e: e[:3], reverse=True)]

    def to_dict(self) -> dict:  # type: ignore[type-arg]
        return {
            "samples": self.samples, "compared": self.compared, "passed": self.passed, "failed": self.failed,
            "errors": self.errors, "pass_rate": self.pass_rate,
            "outputs": {name: dist.to_dict() for name, dist in self.outputs.items()},
            "worst_samples": self.worst(),
            "failed_samples": self.failed_samples, "failed_samples_truncated": self.failed > len(self.failed_samples),
            "error_samples": self.error_samples, "error_samples_truncated": self.errors > len(self.error_samples),
        }
