"""
Distance and quality metrics of output pairs: L2 norm, cosine similarity, PSNR and SNR, each
from one native ``error_stats`` pass. Polygraphy 0.53's single-metric functions
(``L2CompareFunc``...) and poly's combined ones (``CompareFunc.distance_metrics`` and
``quality_metrics``) share these definitions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from poly.compare.funcs.base import BaseCompareFunc
from poly.compare.stats.native import ErrorStats, error_stats
from poly.compare.stats.on_device import is_device_output
from poly.compare.stats.polygraphy_precision import near_bound, polygraphy_metric
from poly.compare.verdicts.output_results import (
    CosineSimilarityResult,
    DistanceMetricsResult,
    L2Result,
    PsnrResult,
    QualityMetricsResult,
    SnrResult,
)
from poly.compare.verdicts.thresholds import (
    CosineSimilarityThreshold,
    DistanceMetricsThreshold,
    L2Threshold,
    PsnrThreshold,
    QualityMetricsThreshold,
    SnrThreshold,
)
from poly.core import G_LOGGER
from poly.core.arrays.host import host_array
from poly.core.tensors.per_output import value_or_from_dict
from poly.core.util.sequences import default

__all__ = [
    "SingleMetricCompareFunc",
    "metric_stats",
    "l2_norm",
    "cosine_similarity",
    "psnr",
    "at_polygraphy_precision",
    "snr",
    "L2CompareFunc",
    "CosineSimilarityCompareFunc",
    "PsnrCompareFunc",
    "SnrCompareFunc",
    "DistanceMetricsCompareFunc",
    "QualityMetricsCompareFunc",
]


def metric_stats(out0: Any, out1: Any) -> ErrorStats:
    """The native statistics the metrics are derived from (no order statistics needed)."""
    if not is_device_output(out0) or not is_device_output(out1):
        out0, out1 = host_array(out0), host_array(out1)
    try:
        return error_stats(out0, out1, median=False)
    except ValueError as err:
        G_LOGGER.critical(f"Cannot compare outputs of dtypes {out0.dtype} and {out1.dtype}: {err}")


_DECIBELS_MARGIN = 1e-3  # PSNR and SNR: log10 of a float32 mean, off by far less than this


def at_polygraphy_precision(field: str, value: float, bound: float, out0: Any, out1: Any) -> float:
    """``value`` (metric ``field`` of two outputs, from the native float64 figures), or Polygraphy's
    own figure (``polygraphy_metric``) when ``value`` lies so close to ``bound`` that the two
    could give different verdicts."""
    if not is_device_output(out0):
        out0, out1 = np.asarray(out0), np.asarray(out1)
    margin = _DECIBELS_MARGIN if field in ("psnr", "snr") else 0.0
    if near_bound(value, bound, out0.size, (out0.dtype, out1.dtype), absolute_margin=margin):
        return polygraphy_metric(field, np.asarray(out0), np.asarray(out1))  # a host copy, next to a bound only
    return value


def l2_norm(stats: ErrorStats) -> float:
    """``||out0 - out1||_2``."""
    return float(stats.l2)


def cosine_similarity(stats: ErrorStats) -> float:
    """
    Cosine similarity of the flattened outputs, clamped to [-1, 1]: 1.0 when both are all zeros,
    0.0 when only one is; NaN (which fails any threshold) for non-finite data.
    """
    zero0, zero1 = stats.a.mean_square == 0, stats.b.mean_square == 0
    if zero0 and zero1:
        return 1.0
    if zero0 or zero1:
        return 0.0
    value = float(stats.cosine)
    if math.isnan(value):
        return value
    return max(-1.0, min(1.0, value))


def psnr(stats: ErrorStats) -> float:
    """
    Peak signal-to-noise ratio in dB, Polygraphy's way: the peak is the largest value of the first
    output (1.0 when that is not positive); infinite for identical outputs.
    """
    mse = stats.mse
    if mse == 0:
        return math.inf
    peak = stats.a.max
    if peak <= 0:
        peak = 1.0
    with np.errstate(all="ignore"):
        return float(20 * np.log10(float(peak)) - 10 * np.log10(float(mse)))


def snr(stats: ErrorStats) -> float:
    """
    Signal-to-noise ratio in dB: the mean square of the first output over the mean square of the
    difference; +inf for identical outputs, -inf when the first output is all zeros.
    """
    signal_power, noise_power = stats.a.mean_square, stats.mse
    if noise_power == 0:
        return math.inf
    if signal_power == 0:
        return -math.inf
    with np.errstate(all="ignore"):
        return float(10 * np.log10(float(signal_power / noise_power)))


class SingleMetricCompareFunc(BaseCompareFunc):
    """One scalar metric per output pair against a (per-output) threshold."""

    _RESULT_CLASS: Any = None
    _THRESHOLD_CLASS: Any = None
    _DEFAULT_THRESHOLD: Any = None
    _THRESHOLD_ARG = "threshold"

    def __init__(self, threshold: Any = None, check_shapes: Any = None, fail_fast: Any = None, find_output_func: Any = None) -> None:
        self.threshold = default(threshold, self._DEFAULT_THRESHOLD)
        self.check_shapes = default(check_shapes, True)
        self.fail_fast = default(fail_fast, False)
        self.find_output_func = find_output_func

    def _summary_label(self) -> Any:
        return self._THRESHOLD_CLASS._METRIC_LABEL

    def _compute_metric(self, out0: Any, out1: Any) -> float:
        raise NotImplementedError()

    def thresholds_for(self, output_name: Any) -> Any:
        return self._THRESHOLD_CLASS(value_or_from_dict(self.threshold, output_name, self._DEFAULT_THRESHOLD))

    def _check_outputs_match(self, out0: Any, out1: Any, threshold: Any) -> Any:
        value = float(self._compute_metric(out0, out1))
        value = at_polygraphy_precision(threshold._METRIC_FIELD, value, threshold.threshold, out0, out1)
        result = self._RESULT_CLASS(value, thresholds=threshold)
        msg, passed = result.describe()
        (G_LOGGER.finish if passed else G_LOGGER.error)(msg)
        return result

    def __call__(self, iter_result0: Any, iter_result1: Any) -> Any:
        """
        Returns:
            OrderedDict[str, CompareResult]: By output name of ``iter_result0``; a shape mismatch
            gives ``False``.
        """
        valid_keys = set(iter_result0.keys()) | set(iter_result1.keys()) | {""}
        self._warn_on_unknown_keys(self.threshold, f"the {self._THRESHOLD_ARG} dictionary", valid_keys)

        def match(out0_name: Any, output0: Any, out1_name: Any, output1: Any) -> Any:
            G_LOGGER.extra_verbose(f"Note: Comparing {iter_result0.runner_name} vs. {iter_result1.runner_name}")
            aligned = self._align_shapes(out0_name, output0, output1)
            if aligned is None:
                return False
            return self._check_outputs_match(*aligned, self.thresholds_for(out0_name))  # type: ignore[call-arg]

        return self._run_comparison(iter_result0, iter_result1, match)


class L2CompareFunc(SingleMetricCompareFunc):
    """Passes outputs whose difference has an L2 norm of at most ``l2_threshold``."""

    _RESULT_CLASS = L2Result
    _THRESHOLD_CLASS = L2Threshold
    _DEFAULT_THRESHOLD = 1e-5
    _THRESHOLD_ARG = "l2_threshold"

    def __init__(self, l2_threshold: Any = None, check_shapes: Any = None, fail_fast: Any = None, find_output_func: Any = None) -> None:
        """
        Args:
            l2_threshold (Union[float, Dict[str, float]]): The largest L2 norm allowed; per output
                    as a dict with ``""`` as the default. Defaults to 1e-5.
            check_shapes (bool): Require identical shapes. Defaults to True.
            fail_fast (bool): Stop at the first failure. Defaults to False.
            find_output_func (Callable): Pairs outputs, as for ``SimpleCompareFunc``.
        """
        super().__init__(l2_threshold, check_shapes, fail_fast, find_output_func)

    def _compute_metric(self, out0: Any, out1: Any) -> Any:
        return l2_norm(metric_stats(out0, out1))


class CosineSimilarityCompareFunc(SingleMetricCompareFunc):
    """Passes outputs whose cosine similarity is at least ``cosine_similarity_threshold``."""

    _RESULT_CLASS = CosineSimilarityResult
    _THRESHOLD_CLASS = CosineSimilarityThreshold
    _DEFAULT_THRESHOLD = 0.997
    _THRESHOLD_ARG = "cosine_similarity_threshold"

    def __init__(self, cosine_similarity_threshold: Any = None, check_shapes: Any = None, fail_fast: Any = None, find_output_func: Any = None) -> None:
        """
        Args:
            cosine_similarity_threshold (Union[float, Dict[str, float]]): The smallest similarity
                    allowed, in [-1, 1]; per output as a dict. Defaults to 0.997.
            check_shapes (bool): Require identical shapes. Defaults to True.
            fail_fast (bool): Stop at the first failure. Defaults to False.
            find_output_func (Callable): Pairs outputs, as for ``SimpleCompareFunc``.
        """
        super().__init__(cosine_similarity_threshold, check_shapes, fail_fast, find_output_func)

    def _compute_metric(self, out0: Any, out1: Any) -> Any:
        return cosine_similarity(metric_stats(out0, out1))


class PsnrCompareFunc(SingleMetricCompareFunc):
    """Passes outputs whose PSNR is at least ``psnr_threshold`` dB."""

    _RESULT_CLASS = PsnrResult
    _THRESHOLD_CLASS = PsnrThreshold
    _DEFAULT_THRESHOLD = 30.0
    _THRESHOLD_ARG = "psnr_threshold"

    def __init__(self, psnr_threshold: Any = None, check_shapes: Any = None, fail_fast: Any = None, find_output_func: Any = None) -> None:
        """
        Args:
            psnr_threshold (Union[float, Dict[str, float]]): The smallest PSNR (dB) allowed; per
                    output as a dict. Defaults to 30.
            check_shapes (bool): Require identical shapes. Defaults to True.
            fail_fast (bool): Stop at the first failure. Defaults to False.
            find_output_func (Callable): Pairs outputs, as for ``SimpleCompareFunc``.
        """
        super().__init__(psnr_threshold, check_shapes, fail_fast, find_output_func)

    def _compute_metric(self, out0: Any, out1: Any) -> Any:
        return psnr(metric_stats(out0, out1))


class SnrCompareFunc(SingleMetricCompareFunc):
    """Passes outputs whose SNR is at least ``snr_threshold`` dB."""

    _RESULT_CLASS = SnrResult
    _THRESHOLD_CLASS = SnrThreshold
    _DEFAULT_THRESHOLD = 20.0
    _THRESHOLD_ARG = "snr_threshold"

    def __init__(self, snr_threshold: Any = None, check_shapes: Any = None, fail_fast: Any = None, find_output_func: Any = None) -> None:
        """
        Args:
            snr_threshold (Union[float, Dict[str, float]]): The smallest SNR (dB) allowed; per
                    output as a dict. Defaults to 20.
            check_shapes (bool): Require identical shapes. Defaults to True.
            fail_fast (bool): Stop at the first failure. Defaults to False.
            find_output_func (Callable): Pairs outputs, as for ``SimpleCompareFunc``.
        """
        super().__init__(snr_threshold, check_shapes, fail_fast, find_output_func)

    def _compute_metric(self, out0: Any, out1: Any) -> Any:
        return snr(metric_stats(out0, out1))


class _CombinedMetricsCompareFunc(BaseCompareFunc):
    """Several metrics per output pair from one native pass; an output passes when all do."""

    _RESULT_CLASS: Any = None
    _THRESHOLD_CLASS: Any = None
    _DEFAULTS: dict[str, float] = {}

    def __init__(self, bounds: Any, check_shapes: Any = None, fail_fast: Any = None, find_output_func: Any = None) -> None:
        self.bounds = {name: default(value, self._DEFAULTS[name]) for name, value in bounds.items()}
        self.check_shapes = default(check_shapes, True)
        self.fail_fast = default(fail_fast, False)
        self.find_output_func = find_output_func

    def thresholds_for(self, output_name: Any) -> Any:
        return self._THRESHOLD_CLASS(
            **{name: value_or_from_dict(value, output_name, self._DEFAULTS[name]) for name, value in self.bounds.items()}
        )

    def _metrics(self, stats: ErrorStats) -> dict[str, float]:
        raise NotImplementedError()

    def __call__(self, iter_result0: Any, iter_result1: Any) -> Any:
        """
        Returns:
            OrderedDict[str, CompareResult]: By output name of ``iter_result0``; a shape mismatch
            gives ``False``.
        """
        valid_keys = set(iter_result0.keys()) | set(iter_result1.keys()) | {""}
        for name, value in self.bounds.items():
            self._warn_on_unknown_keys(value, f"the {name} dictionary", valid_keys)

        def match(out0_name: Any, output0: Any, out1_name: Any, output1: Any) -> Any:
            threshold = self.thresholds_for(out0_name)
            parts = threshold.parts()
            G_LOGGER.info(
                "Tolerance: ["
                + ", ".join(
                    f"{part._METRIC_LABEL} {'min' if part._HIGHER_IS_BETTER else 'max'}={part.threshold:.5g}"
                    for part in parts
                )
                + "]"
            )
            G_LOGGER.extra_verbose(f"Note: Comparing {iter_result0.runner_name} vs. {iter_result1.runner_name}")
            aligned = self._align_shapes(out0_name, output0, output1)
            if aligned is None:
                return False
            values = self._metrics(metric_stats(*aligned))
            for part in parts:
                field = part._METRIC_FIELD
                values[field] = at_polygraphy_precision(field, values[field], part.threshold, *aligned)
            result = self._RESULT_CLASS(**values, thresholds=threshold)
            failed = []
            for part in parts:
                line, ok = part.describe(values)
                (G_LOGGER.finish if ok else G_LOGGER.error)(line)
                if not ok:
                    failed.append(part._METRIC_LABEL)
            if failed:
                G_LOGGER.error(f"FAILED | Output: '{out0_name}' | Failed metrics: {', '.join(failed)}")
            else:
                G_LOGGER.finish(
                    f"PASSED | Output: '{out0_name}' | All metrics passed: "
                    f"{', '.join(part._METRIC_LABEL for part in parts)}"
                )
            return result

        return self._run_comparison(iter_result0, iter_result1, match)


class DistanceMetricsCompareFunc(_CombinedMetricsCompareFunc):
    """L2 norm and cosine similarity together (``CompareFunc.distance_metrics``)."""

    _RESULT_CLASS = DistanceMetricsResult
    _THRESHOLD_CLASS = DistanceMetricsThreshold
    _SUMMARY_LABEL = "distance"
    _DEFAULTS = {"l2_tolerance": 1e-5, "cosine_similarity_threshold": 0.997}

    def __init__(
        self, l2_tolerance: Any = None, cosine_similarity_threshold: Any = None, check_shapes: Any = None, fail_fast: Any = None,
        find_output_func: Any = None,
    ) -> None:
        """
        Args:
            l2_tolerance (Union[float, Dict[str, float]]): The largest L2 norm of the difference
                    allowed; per output as a dict with ``""`` as the default. Defaults to 1e-5.
            cosine_similarity_threshold (Union[float, Dict[str, float]]): The smallest cosine
                    similarity allowed; per output as a dict. Defaults to 0.997.
            check_shapes (bool): Require identical shapes. Defaults to True.
            fail_fast (bool): Stop at the first failure. Defaults to False.
            find_output_func (Callable): Pairs outputs, as for ``SimpleCompareFunc``.
        """
        super().__init__(
            {"l2_tolerance": l2_tolerance, "cosine_similarity_threshold": cosine_similarity_threshold},
            check_shapes, fail_fast, find_output_func,
        )

    def _metrics(self, stats: Any) -> dict[Any, Any]:
        return {"l2_norm": l2_norm(stats), "cosine_similarity": cosine_similarity(stats)}


class QualityMetricsCompareFunc(_CombinedMetricsCompareFunc):
    """PSNR and SNR together (``CompareFunc.quality_metrics``)."""

    _RESULT_CLASS = QualityMetricsResult
    _THRESHOLD_CLASS = QualityMetricsThreshold
    _SUMMARY_LABEL = "quality"
    _DEFAULTS = {"psnr_tolerance": 30.0, "snr_tolerance": 20.0}

    def __init__(self, psnr_tolerance: Any = None, snr_tolerance: Any = None, check_shapes: Any = None, fail_fast: Any = None, find_output_func: Any = None) -> None:
        """
        Args:
            psnr_tolerance (Union[float, Dict[str, float]]): The smallest PSNR (dB) allowed; per
                    output as a dict with ``""`` as the default. Defaults to 30.
            snr_tolerance (Union[float, Dict[str, float]]): The smallest SNR (dB) allowed; per
                    output as a dict. Defaults to 20.
            check_shapes (bool): Require identical shapes. Defaults to True.
            fail_fast (bool): Stop at the first failure. Defaults to False.
            find_output_func (Callable): Pairs outputs, as for ``SimpleCompareFunc``.
        """
        super().__init__(
            {"psnr_tolerance": psnr_tolerance, "snr_tolerance": snr_tolerance}, check_shapes, fail_fast,
            find_output_func,
        )

    def _metrics(self, stats: Any) -> dict[Any, Any]:
        return {"psnr": psnr(stats), "snr": snr(stats)}
