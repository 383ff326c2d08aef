"""
Per-output comparison results: the metric values of one output pair plus the threshold they were
checked against. ``bool(result)`` is the verdict.

Serialized under Polygraphy 0.53's class names and fields (``OutputCompareResult``,
``L2Result``...); ``DistanceMetricsResult`` and ``QualityMetricsResult`` are poly's.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from poly.compare.verdicts.thresholds import (
    CosineSimilarityThreshold,
    DistanceMetricsThreshold,
    L2Threshold,
    LpipsThreshold,
    PsnrThreshold,
    QualityMetricsThreshold,
    SimpleThreshold,
    SnrThreshold,
)
from poly.core.json import Decoder, Encoder

__all__ = [
    "CompareResult",
    "OutputCompareResult",
    "L2Result",
    "CosineSimilarityResult",
    "PsnrResult",
    "SnrResult",
    "PerceptualMetricsResult",
    "DistanceMetricsResult",
    "QualityMetricsResult",
]


def _to_float(value: Any) -> Any:
    return None if value is None else float(value)


class CompareResult:
    """
    Base class of per-output results. The verdict comes from the stored threshold applied to the
    stored metric values, so a saved result can be checked again against another threshold.
    """

    _THRESHOLD_CLASS: Any = None

    def __init__(self, thresholds: Any = None) -> None:
        self.thresholds = thresholds
        """The ``Threshold`` this result is checked against."""
        self.output0_name: Any = None
        """The first runner's output name (set by the comparison)."""
        self.output1_name: Any = None
        """The second runner's output name it was compared with."""

    def __bool__(self) -> bool:
        return bool(self.thresholds.passed(self.metric_values()))

    def set_thresholds(self, thresholds: Any) -> None:
        """Checks this result against ``thresholds`` from now on."""
        self.thresholds = thresholds

    @classmethod
    def metric_fields(cls) -> list[str]:
        """The names of the metric fields of this result type."""
        return cls._THRESHOLD_CLASS.metric_fields() if cls._THRESHOLD_CLASS else []

    def metric_values(self) -> OrderedDict:  # type: ignore[type-arg]
        """Metric field name -> stored value."""
        return OrderedDict((name, getattr(self, name)) for name in self.metric_fields())

    def describe(self) -> Any:
        """A ``(line, passed)`` summary, or None when the threshold has none (``simple``)."""
        return self.thresholds.describe(self.metric_values())

    def __repr__(self) -> str:
        values = ", ".join(f"{key}={value!r}" for key, value in self.metric_values().items())
        return f"{type(self).__name__}({values}, thresholds={self.thresholds!r})"


class OutputCompareResult(CompareResult):
    """The result of the ``simple`` comparison of one output: error statistics and tolerances."""

    _THRESHOLD_CLASS = SimpleThreshold

    def __init__(
        self,
        max_absdiff: Any,
        max_reldiff: Any,
        mean_absdiff: Any,
        mean_reldiff: Any,
        median_absdiff: Any,
        median_reldiff: Any,
        quantile_absdiff: Any,
        quantile_reldiff: Any,
        thresholds: Any = None,
        passed: Any = None,
    ) -> None:
        """
        Args:
            max_absdiff, max_reldiff (float): The largest absolute/relative difference: the
                    smallest tolerances that would have passed.
            mean_absdiff, mean_reldiff (float): The mean differences.
            median_absdiff, median_reldiff (float): The median differences.
            quantile_absdiff, quantile_reldiff (float): The differences at the requested
                    quantile; None unless ``check_error_stat`` was ``quantile``.
            thresholds (SimpleThreshold): The tolerances checked against.
            passed (bool): The stored verdict of an ``elemwise`` check, which statistics cannot
                    reproduce; None lets the threshold decide.
        """
        super().__init__(thresholds=thresholds)
        self._stored_passed = passed
        self.max_absdiff = _to_float(max_absdiff)
        self.max_reldiff = _to_float(max_reldiff)
        self.mean_absdiff = _to_float(mean_absdiff)
        self.mean_reldiff = _to_float(mean_reldiff)
        self.median_absdiff = _to_float(median_absdiff)
        self.median_reldiff = _to_float(median_reldiff)
        self.quantile_absdiff = _to_float(quantile_absdiff)
        self.quantile_reldiff = _to_float(quantile_reldiff)

    @property
    def passed(self) -> bool:
        """Whether the output matched (``bool(self)``)."""
        return bool(self)

    def __bool__(self) -> bool:
        if self._stored_passed is not None:
            return bool(self._stored_passed)
        return super().__bool__()

    def set_thresholds(self, thresholds: Any) -> None:
        super().set_thresholds(thresholds)
        self._stored_passed = None

    def checked_values(self) -> tuple[float | None, float | None]:
        """
        The absolute and relative figures the threshold's ``check_error_stat`` looks at: the
        smallest ``atol``/``rtol`` that would have passed (``elemwise`` reports the maxima).
        """
        stat = self.thresholds.check_error_stat if self.thresholds is not None else "elemwise"
        stat = "max" if stat == "elemwise" else stat
        return getattr(self, f"{stat}_absdiff", None), getattr(self, f"{stat}_reldiff", None)

    def __str__(self) -> str:
        return f"(atol={self.max_absdiff}, rtol={self.max_reldiff})"


class _SingleMetricResult(CompareResult):
    def __init__(self, value: Any, thresholds: Any = None) -> None:
        super().__init__(thresholds=thresholds)
        setattr(self, self.metric_fields()[0], value)

    @property
    def passed(self) -> bool:
        """Whether the output matched (``bool(self)``)."""
        return bool(self)


class L2Result(_SingleMetricResult):
    """The L2 norm of the difference of one output pair."""

    _THRESHOLD_CLASS = L2Threshold

    def __init__(self, l2_norm: Any, thresholds: Any = None) -> None:
        super().__init__(l2_norm, thresholds)


class CosineSimilarityResult(_SingleMetricResult):
    """The cosine similarity of one output pair."""

    _THRESHOLD_CLASS = CosineSimilarityThreshold

    def __init__(self, cosine_similarity: Any, thresholds: Any = None) -> None:
        super().__init__(cosine_similarity, thresholds)


class PsnrResult(_SingleMetricResult):
    """The PSNR (dB) of one output pair."""

    _THRESHOLD_CLASS = PsnrThreshold

    def __init__(self, psnr: Any, thresholds: Any = None) -> None:
        super().__init__(psnr, thresholds)


class SnrResult(_SingleMetricResult):
    """The SNR (dB) of one output pair."""

    _THRESHOLD_CLASS = SnrThreshold

    def __init__(self, snr: Any, thresholds: Any = None) -> None:
        super().__init__(snr, thresholds)


class PerceptualMetricsResult(_SingleMetricResult):
    """The LPIPS distance of one output pair (None when it could not be computed)."""

    _THRESHOLD_CLASS = LpipsThreshold

    def __init__(self, lpips: Any = None, thresholds: Any = None) -> None:
        super().__init__(lpips, thresholds)


class _MultiMetricResult(CompareResult):
    @property
    def passed(self) -> bool:
        """Whether every metric passed (``bool(self)``)."""
        return bool(self)

    def __bool__(self) -> bool:
        if self.thresholds is None:
            return bool(self._stored_passed)  # type: ignore[attr-defined]
        return super().__bool__()


class DistanceMetricsResult(_MultiMetricResult):
    """L2 norm and cosine similarity of one output pair (``CompareFunc.distance_metrics``)."""

    _THRESHOLD_CLASS = DistanceMetricsThreshold

    def __init__(self, l2_norm: Any, cosine_similarity: Any, thresholds: Any = None, passed: Any = None) -> None:
        super().__init__(thresholds=thresholds)
        self.l2_norm = _to_float(l2_norm)
        self.cosine_similarity = _to_float(cosine_similarity)
        self._stored_passed = passed


class QualityMetricsResult(_MultiMetricResult):
    """PSNR and SNR of one output pair (``CompareFunc.quality_metrics``)."""

    _THRESHOLD_CLASS = QualityMetricsThreshold

    def __init__(self, psnr: Any, snr: Any, thresholds: Any = None, passed: Any = None) -> None:
        super().__init__(thresholds=thresholds)
        self.psnr = _to_float(psnr)
        self.snr = _to_float(snr)
        self._stored_passed = passed


@Encoder.register(OutputCompareResult)
def _encode_output_compare_result(result: Any) -> Any:
    dct = {name: getattr(result, name) for name in OutputCompareResult.metric_fields()}
    dct["thresholds"] = result.thresholds
    dct["passed"] = result._stored_passed
    return dct


@Decoder.register(OutputCompareResult)
def _decode_output_compare_result(dct: Any) -> Any:
    return OutputCompareResult(  # type: ignore[misc]
        *(dct.get(name) for name in OutputCompareResult.metric_fields()),
        thresholds=dct.get("thresholds"),
        passed=dct.get("passed"),
    )


def _register_single(typ: Any) -> Any:
    (name,) = typ.metric_fields()

    @Encoder.register(typ)
    def encode(result: Any) -> dict[Any, Any]:
        return {name: getattr(result, name), "thresholds": result.thresholds}

    @Decoder.register(typ)
    def decode(dct: Any) -> Any:
        return typ(dct.get(name), thresholds=dct.get("thresholds"))


for _typ in (PerceptualMetricsResult, L2Result, CosineSimilarityResult, PsnrResult, SnrResult):
    _register_single(_typ)


def _register_multi(typ: Any) -> Any:
    names = typ.metric_fields()

    @Encoder.register(typ)
    def encode(result: Any) -> Any:
        dct = {name: getattr(result, name) for name in names}
        dct["thresholds"] = result.thresholds
        dct["passed"] = bool(result)
        return dct

    @Decoder.register(typ)
    def decode(dct: Any) -> Any:
        return typ(*(dct.get(name) for name in names), thresholds=dct.get("thresholds"), passed=dct.get("passed"))


for _typ in (DistanceMetricsResult, QualityMetricsResult):  # type: ignore[assignment]
    _register_multi(_typ)
