"""
The verdict of the simple comparison on one output pair, in one place: the per-output options
(``SimpleOptions``) and the pure function that turns the native statistics into an
``OutputCompareResult`` (``simple_comparison``). ``CompareFunc.simple`` and dataset validation
(``poly validate``) both call it, so they cannot disagree.

The rule, as Polygraphy's: ``elemwise`` passes when no element fails both tolerances
(``absdiff > atol`` and ``reldiff > rtol``, NaN failing); ``max``, ``mean``, ``median`` and
``quantile`` pass unless that statistic of the absolute difference exceeds ``atol`` and the same
statistic of the relative difference exceeds ``rtol`` (``SimpleThreshold``).
"""

from __future__ import annotations

from dataclasses import dataclass

from poly.compare.stats.native import DiffStats, ErrorStats
from poly.compare.verdicts.output_results import OutputCompareResult
from poly.compare.verdicts.thresholds import SimpleThreshold
from poly.core.per_output import value_or_from_dict

__all__ = [
    "DEFAULT_ATOL",
    "DEFAULT_RTOL",
    "DEFAULT_CHECK_ERROR_STAT",
    "DEFAULT_ERROR_QUANTILE",
    "SimpleOptions",
    "simple_verdict",
]

DEFAULT_ATOL = 1e-5
DEFAULT_RTOL = 1e-5
DEFAULT_CHECK_ERROR_STAT = "elemwise"
DEFAULT_ERROR_QUANTILE = 0.99


@dataclass(frozen=True)
class SimpleOptions:
    """The simple comparison's options for one output, with per-output dicts resolved."""

    atol: float = DEFAULT_ATOL
    rtol: float = DEFAULT_RTOL
    check_error_stat: str = DEFAULT_CHECK_ERROR_STAT
    error_quantile: float = DEFAULT_ERROR_QUANTILE

    @classmethod
    def for_output(cls, output_name, atol=None, rtol=None, check_error_stat=None, error_quantile=None):
        """
        Resolves options given as one value or as dicts by output name (``""`` is the default key;
        a name in neither takes the simple comparison's defaults).
        """
        return cls(
            atol=value_or_from_dict(DEFAULT_ATOL if atol is None else atol, output_name, DEFAULT_ATOL),
            rtol=value_or_from_dict(DEFAULT_RTOL if rtol is None else rtol, output_name, DEFAULT_RTOL),
            check_error_stat=value_or_from_dict(
                DEFAULT_CHECK_ERROR_STAT if check_error_stat is None else check_error_stat, output_name,
                DEFAULT_CHECK_ERROR_STAT,
            ),
            error_quantile=value_or_from_dict(
                DEFAULT_ERROR_QUANTILE if error_quantile is None else error_quantile, output_name,
                DEFAULT_ERROR_QUANTILE,
            ),
        )

    @property
    def threshold(self) -> SimpleThreshold:
        """The ``SimpleThreshold`` these options check against."""
        return SimpleThreshold(self.check_error_stat, self.atol, self.rtol)

    def needs_median(self) -> bool:
        """Whether the verdict needs the median (the only statistic that costs a selection pass
        beyond the requested quantiles)."""
        return self.check_error_stat == "median"

    def needed_quantiles(self) -> list[float]:
        """The quantiles the verdict needs."""
        return [self.error_quantile] if self.check_error_stat == "quantile" else []


def simple_verdict(stats: ErrorStats, absdiff: DiffStats, reldiff: DiffStats, options: SimpleOptions
                   ) -> OutputCompareResult:
    """
    The simple comparison's result for one output pair.

    Args:
        stats (ErrorStats): The native statistics of the pair (its ``mismatches`` decide
                ``elemwise``).
        absdiff, reldiff (DiffStats): The absolute and relative difference statistics with
                Polygraphy's semantics (``poly.compare.stats.polygraphy_quirks.simple_error_stats``).
        options (SimpleOptions): The output's options (a valid ``check_error_stat``).

    Returns:
        OutputCompareResult: Truthy when the output passed; its ``checked_values()`` are the figures
        the verdict looked at.
    """
    stat = options.check_error_stat
    quantile = options.error_quantile
    q_abs = absdiff.quantiles.get(quantile) if stat == "quantile" else None
    q_rel = reldiff.quantiles.get(quantile) if stat == "quantile" else None
    return OutputCompareResult(
        absdiff.max, reldiff.max, absdiff.mean, reldiff.mean, absdiff.median, reldiff.median, q_abs, q_rel,
        thresholds=options.threshold,
        # elementwise is decided per element, which no stored statistic can reproduce
        passed=(stats.mismatches == 0) if stat == "elemwise" else None,
    )
