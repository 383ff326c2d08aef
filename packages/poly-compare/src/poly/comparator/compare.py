"""Polygraphy-compatible import path ``polygraphy.comparator.compare``: comparison functions,
per-output results and thresholds, re-exported from ``poly.compare``."""

from poly.compare.compare_base import (
    BaseCompareFunc,
    default_find_output_func,
    metric_fields_for_func,
    run_comparison,
)
from poly.compare.compare_func import CompareFunc
from poly.compare.compare_results import (
    CompareResult,
    CosineSimilarityResult,
    DistanceMetricsResult,
    L2Result,
    OutputCompareResult,
    PerceptualMetricsResult,
    PsnrResult,
    QualityMetricsResult,
    SnrResult,
)
from poly.compare.indices import IndicesCompareFunc
from poly.compare.metrics import (
    CosineSimilarityCompareFunc,
    DistanceMetricsCompareFunc,
    L2CompareFunc,
    PsnrCompareFunc,
    QualityMetricsCompareFunc,
    SnrCompareFunc,
)
from poly.compare.perceptual import PerceptualMetricsCompareFunc
from poly.compare.simple import SimpleCompareFunc
from poly.compare.thresholds import (
    CosineSimilarityThreshold,
    DistanceMetricsThreshold,
    L2Threshold,
    LpipsThreshold,
    PsnrThreshold,
    QualityMetricsThreshold,
    SimpleThreshold,
    SnrThreshold,
    Threshold,
)

__all__ = [
    "BaseCompareFunc", "default_find_output_func", "metric_fields_for_func", "run_comparison", "CompareFunc",
    "CompareResult", "CosineSimilarityResult", "DistanceMetricsResult", "L2Result", "OutputCompareResult",
    "PerceptualMetricsResult", "PsnrResult", "QualityMetricsResult", "SnrResult", "IndicesCompareFunc",
    "CosineSimilarityCompareFunc", "DistanceMetricsCompareFunc", "L2CompareFunc", "PsnrCompareFunc",
    "QualityMetricsCompareFunc", "SnrCompareFunc", "PerceptualMetricsCompareFunc", "SimpleCompareFunc",
    "CosineSimilarityThreshold", "DistanceMetricsThreshold", "L2Threshold", "LpipsThreshold", "PsnrThreshold",
    "QualityMetricsThreshold", "SimpleThreshold", "SnrThreshold", "Threshold",
]
