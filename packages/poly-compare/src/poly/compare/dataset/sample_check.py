"""
The verdict on one sample: every output against its reference with the simple comparison's
tolerances, computed exactly as ``CompareFunc.simple`` computes it, on one thread per call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from poly.compare.stats.polygraphy_precision import polygraphy_error_stats
from poly.compare.verdicts.simple_comparison import SimpleCompareOptions, simple_verdict
from poly.compare.verdicts.thresholds import VALID_CHECK_ERROR_STATS
from poly.core.tensors.fit_shape import try_match_shape

__all__ = ["OutputCheck", "SampleChecker"]


@dataclass(frozen=True)
class OutputCheck:
    """The comparison of one output of one sample."""

    name: str
    passed: bool
    max_absdiff: float = math.nan
    max_reldiff: float = math.nan
    checked_stat: str = "elemwise"
    stat_absdiff: float = math.nan
    stat_reldiff: float = math.nan
    atol: float = math.nan
    rtol: float = math.nan
    mismatches: int | None = None
    size: int = 0
    error: str | None = None

    @property
    def severity(self) -> Any:
        """How many times over its tolerance the output is: the smaller of the absolute and the
        relative ratio (a sample fails when both exceed 1); inf for NaN or an error."""
        if self.error is not None:
            return math.inf

        def ratio(value: Any, tol: Any) -> Any:
            if math.isnan(value):
                return math.inf
            if tol <= 0:
                return math.inf if value > 0 else 0.0
            return value / tol

        return min(ratio(self.stat_absdiff, self.atol), ratio(self.stat_reldiff, self.rtol))


class SampleChecker:
    """
    Compares the outputs of one sample with their reference. The options are the simple
    comparison's (``SimpleCompareOptions``, or its options as keyword arguments: ``atol``,
    ``rtol``, ``check_error_stat``, ``error_quantile``, ``infinities_compare_equal``,
    ``check_shapes``), and the verdict is the one ``CompareFunc.simple`` gives for the same pair,
    output by output.
    """

    def __init__(self, options: SimpleCompareOptions | None = None, threads: int = 1, **option_values: Any) -> None:
        self.options = (options or SimpleCompareOptions(**option_values)).with_defaults()
        """The ``SimpleCompareOptions`` checked with, the defaults filled in."""
        self.threads = threads
        self._resolved: dict[Any, tuple[SimpleCompareOptions, SimpleCompareOptions]] = {}

    def options_for(self, name: Any) -> SimpleCompareOptions:
        """The options output ``name`` is checked with (per-output dicts resolved), resolved once
        per output name (a validation asks for them at every sample)."""
        known = self._resolved.get(name)
        if known is None or known[0] is not self.options:
            known = self._resolved[name] = (self.options, self.options.for_output(name))
        return known[1]

    def check_output(self, name: Any, output: Any, reference: Any) -> OutputCheck:
        """Compares one output with its reference."""
        options = self.options_for(name)
        if options.check_error_stat not in VALID_CHECK_ERROR_STATS:
            raise ValueError(
                f"invalid check_error_stat {options.check_error_stat!r}: choose from {list(VALID_CHECK_ERROR_STATS)}"
            )
        base = {"name": name, "checked_stat": options.check_error_stat, "atol": float(options.atol),  # type: ignore[arg-type]
                "rtol": float(options.rtol)}  # type: ignore[arg-type]
        if reference is None:
            return OutputCheck(passed=False, error="missing from the reference", **base)
        out0, out1 = np.asarray(output), np.asarray(reference)
        if out0.shape != out1.shape:
            aligned = None
            if not self.options.check_shapes:
                out1 = try_match_shape(out1, out0.shape)
                try:
                    aligned = (out0.reshape(out1.shape), out1)
                except ValueError:
                    aligned = None
            if aligned is None:
                return OutputCheck(passed=False, size=int(out0.size),
                                   error=f"shape {out0.shape} differs from the reference's {np.asarray(reference).shape}",
                                   **base)
            out0, out1 = aligned
        try:
            stats, absd, rel = polygraphy_error_stats(out0, out1, options, options.infinities_compare_equal,  # type: ignore[arg-type]
                                                      threads=self.threads)
        except Exception as err:  # noqa: BLE001 - a bad pair fails this sample, not the run
            return OutputCheck(passed=False, size=int(out0.size), error=str(err).splitlines()[0], **base)
        result = simple_verdict(stats, absd, rel, options)
        stat_abs, stat_rel = result.checked_values()
        return OutputCheck(passed=bool(result), max_absdiff=float(absd.max), max_reldiff=float(rel.max),
                           stat_absdiff=float(stat_abs), stat_reldiff=float(stat_rel),  # type: ignore[arg-type]
                           mismatches=int(stats.mismatches), size=int(stats.size), **base)

    def check(self, outputs: Any, reference: Any) -> list[OutputCheck]:
        """Compares every output (name -> array) with the reference output of the same name."""
        return [self.check_output(name, arr, reference.get(name)) for name, arr in outputs.items()]
