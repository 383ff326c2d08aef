"""
Thresholds: the pass/fail criterion of a comparison, kept apart from the functions that compute
metrics so that saved results can be checked again against new thresholds.

Serialized under Polygraphy 0.53's class names (``SimpleThreshold``, ``L2Threshold``...), so
accuracy results saved by either tool load in the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from poly.compare.stats.polygraphy_precision import exceeds_tolerance
from poly.compare.verdicts.error_stat_names import SCALAR_ERROR_STATS, VALID_CHECK_ERROR_STATS
from poly.core import G_LOGGER
from poly.core.json import Decoder, Encoder

__all__ = [
    "Threshold",
    "SimpleThreshold",
    "L2Threshold",
    "CosineSimilarityThreshold",
    "PsnrThreshold",
    "SnrThreshold",
    "LpipsThreshold",
    "DistanceMetricsThreshold",
    "QualityMetricsThreshold",
    "SCALAR_ERROR_STATS",
    "VALID_CHECK_ERROR_STATS",
]

class Threshold:
    """
    Base class of thresholds: the metric fields a threshold checks (``metric_fields``), the verdict
    on a set of metric values (``passed``) and a one-line description (``describe``).
    """

    METRIC_FIELDS: list[str] = []

    @classmethod
    def metric_fields(cls) -> list[str]:
        """The names of the metric fields this threshold checks."""
        return list(cls.METRIC_FIELDS)

    def passed(self, metric_values: Mapping[str, float]) -> bool:
        """The verdict on ``metric_values`` (metric field name -> value)."""
        raise NotImplementedError()

    def describe(self, metric_values: Mapping[str, float]) -> None:
        """A ``(line, passed)`` summary of the check, or None when there is no one-line summary."""
        return None

    def _fields(self) -> dict[Any, Any]:
        return {}

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._fields() == other._fields()

    __hash__: Any = None

    def __repr__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in self._fields().items())
        return f"{type(self).__name__}({args})"


class SimpleThreshold(Threshold):
    """Absolute and relative tolerances on one error statistic (the ``simple`` comparison)."""

    METRIC_FIELDS = [
        "max_absdiff",
        "max_reldiff",
        "mean_absdiff",
        "mean_reldiff",
        "median_absdiff",
        "median_reldiff",
        "quantile_absdiff",
        "quantile_reldiff",
    ]

    def __init__(self, check_error_stat: Any, atol: Any, rtol: Any) -> None:
        """
        Args:
            check_error_stat (str): ``elemwise``, ``max``, ``mean``, ``median`` or ``quantile``.
            atol (float): The absolute tolerance.
            rtol (float): The relative tolerance.
        """
        self.check_error_stat = check_error_stat
        self.atol = atol
        self.rtol = rtol

    def _fields(self) -> dict[Any, Any]:
        return {"check_error_stat": self.check_error_stat, "atol": self.atol, "rtol": self.rtol}

    def passed(self, metric_values: Any) -> bool:
        """
        Passes unless both the absolute and the relative statistic exceed their tolerances.
        ``elemwise`` cannot be judged from statistics and is refused.
        """
        if self.check_error_stat == "elemwise":
            G_LOGGER.critical(
                "Cannot re-threshold an 'elemwise' comparison: it is a per-element check with no "
                "scalar statistic to threshold.\nNote: Choose an explicit statistic "
                "(--check-error-stat max, mean, median, or quantile), or re-run the comparison from "
                "saved raw outputs (run --save-outputs / --load-outputs)."
            )
        if self.check_error_stat not in SCALAR_ERROR_STATS:
            G_LOGGER.critical(
                f"Invalid choice for check_error_stat: {self.check_error_stat}.\n"
                f"Note: Valid choices are: {list(SCALAR_ERROR_STATS)}"
            )
        abs_val = metric_values.get(f"{self.check_error_stat}_absdiff")
        rel_val = metric_values.get(f"{self.check_error_stat}_reldiff")
        if abs_val is None or rel_val is None:
            G_LOGGER.critical(
                f"The saved results do not contain a '{self.check_error_stat}' statistic, so they "
                f"cannot be checked against it.\nNote: 'quantile' statistics are only saved when the "
                f"original comparison used --check-error-stat quantile. Choose max, mean, or median "
                f"instead, or re-run the comparison from saved raw outputs."
            )
        return not (exceeds_tolerance(abs_val, self.atol) and exceeds_tolerance(rel_val, self.rtol))


def format_pair(value: float, threshold: float) -> tuple[str, str]:
    """Formats a value and its threshold with 5 significant digits, or more when needed to show
    that two different numbers differ."""
    for precision in range(5, 18):
        value_str, threshold_str = f"{value:.{precision}g}", f"{threshold:.{precision}g}"
        if value == threshold or value_str != threshold_str:
            return value_str, threshold_str
    return f"{value:.17g}", f"{threshold:.17g}"


class _MetricThreshold(Threshold):
    """One scalar metric against one bound; subclasses name the metric and its direction."""

    _METRIC_FIELD: str = ""
    _METRIC_LABEL: str = ""
    _METRIC_UNIT = ""
    _HIGHER_IS_BETTER = False

    def __init__(self, threshold: Any) -> None:
        """
        Args:
            threshold (float): The bound the metric is checked against.
        """
        self.threshold = threshold

    def _fields(self) -> dict[Any, Any]:
        return {"threshold": self.threshold}

    @classmethod
    def metric_fields(cls) -> list[Any]:
        return [cls._METRIC_FIELD]

    def passed(self, metric_values: Any) -> bool:
        value = metric_values.get(self._METRIC_FIELD)
        if value is None:
            return False
        return bool(value >= self.threshold if self._HIGHER_IS_BETTER else value <= self.threshold)

    def describe(self, metric_values: Any) -> Any:
        value = metric_values.get(self._METRIC_FIELD)
        if value is None:
            return None
        passed = self.passed(metric_values)
        label = "min required" if self._HIGHER_IS_BETTER else "tolerance"
        value_str, threshold_str = format_pair(value, self.threshold)
        unit = self._METRIC_UNIT
        line = (
            f"{self._METRIC_LABEL}: {value_str}{unit} ({label}: {threshold_str}{unit}) | "
            f"{'PASSED' if passed else 'FAILED'}"
        )
        return line, passed


class L2Threshold(_MetricThreshold):
    """The largest L2 norm of the difference allowed."""

    _METRIC_FIELD = "l2_norm"
    _METRIC_LABEL = "L2 Norm"


class CosineSimilarityThreshold(_MetricThreshold):
    """The smallest cosine similarity allowed."""

    _METRIC_FIELD = "cosine_similarity"
    _METRIC_LABEL = "Cosine Similarity"
    _HIGHER_IS_BETTER = True


class PsnrThreshold(_MetricThreshold):
    """The smallest PSNR (dB) allowed."""

    _METRIC_FIELD = "psnr"
    _METRIC_LABEL = "PSNR"
    _METRIC_UNIT = " dB"
    _HIGHER_IS_BETTER = True


class SnrThreshold(_MetricThreshold):
    """The smallest SNR (dB) allowed."""

    _METRIC_FIELD = "snr"
    _METRIC_LABEL = "SNR"
    _METRIC_UNIT = " dB"
    _HIGHER_IS_BETTER = True


class LpipsThreshold(_MetricThreshold):
    """The largest LPIPS distance allowed; a missing value (not computable) passes, as in Polygraphy."""

    _METRIC_FIELD = "lpips"
    _METRIC_LABEL = "LPIPS"

    def passed(self, metric_values: Any) -> bool:
        value = metric_values.get("lpips")
        return value is None or bool(value <= self.threshold)


class _CombinedThreshold(Threshold):
    """Several single-metric thresholds that must all pass (poly's distance/quality metrics)."""

    _PARTS: dict[str, type] = {}

    def __init__(self, **bounds: Any) -> None:
        for name in self._PARTS:
            setattr(self, name, bounds[name])

    def _fields(self) -> dict[Any, Any]:
        return {name: getattr(self, name) for name in self._PARTS}

    def parts(self) -> list[_MetricThreshold]:
        """The single-metric thresholds, in order."""
        return [typ(getattr(self, name)) for name, typ in self._PARTS.items()]

    @classmethod
    def metric_fields(cls) -> list[Any]:
        return [typ._METRIC_FIELD for typ in cls._PARTS.values()]  # type: ignore[attr-defined]

    def passed(self, metric_values: Any) -> bool:
        return all(part.passed(metric_values) for part in self.parts())

    def describe(self, metric_values: Any) -> Any:
        lines = [part.describe(metric_values) for part in self.parts()]
        lines = [line for line in lines if line is not None]
        if not lines:
            return None
        return " | ".join(line for line, _ in lines), all(ok for _, ok in lines)


class DistanceMetricsThreshold(_CombinedThreshold):
    """L2 norm at most ``l2_tolerance`` and cosine similarity at least
    ``cosine_similarity_threshold`` (``CompareFunc.distance_metrics``)."""

    _PARTS = {"l2_tolerance": L2Threshold, "cosine_similarity_threshold": CosineSimilarityThreshold}

    def __init__(self, l2_tolerance: Any, cosine_similarity_threshold: Any) -> None:
        super().__init__(l2_tolerance=l2_tolerance, cosine_similarity_threshold=cosine_similarity_threshold)


class QualityMetricsThreshold(_CombinedThreshold):
    """PSNR at least ``psnr_tolerance`` and SNR at least ``snr_tolerance`` dB
    (``CompareFunc.quality_metrics``)."""

    _PARTS = {"psnr_tolerance": PsnrThreshold, "snr_tolerance": SnrThreshold}

    def __init__(self, psnr_tolerance: Any, snr_tolerance: Any) -> None:
        super().__init__(psnr_tolerance=psnr_tolerance, snr_tolerance=snr_tolerance)


def _register(typ: Any, fields: Any) -> Any:
    @Encoder.register(typ)
    def encode(threshold: Any) -> dict[Any, Any]:
        return {name: getattr(threshold, name) for name in fields}

    @Decoder.register(typ)
    def decode(dct: Any) -> Any:
        return typ(*(dct[name] for name in fields))


_register(SimpleThreshold, ["check_error_stat", "atol", "rtol"])
for _typ in (L2Threshold, CosineSimilarityThreshold, PsnrThreshold, SnrThreshold, LpipsThreshold):
    _register(_typ, ["threshold"])
_register(DistanceMetricsThreshold, ["l2_tolerance", "cosine_similarity_threshold"])
_register(QualityMetricsThreshold, ["psnr_tolerance", "snr_tolerance"])
