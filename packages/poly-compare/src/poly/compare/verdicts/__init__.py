"""Verdicts: thresholds (``thresholds``), per-output results (``output_results``), the simple
comparison's options and verdict function (``simple_comparison``) and accuracy results over iterations and
runner pairs (``accuracy``).

Its names are imported on first use (``poly.core.optional_import.lazy_exports``): the simple
comparison's options are read without NumPy (`poly run --help`); the imports under
``TYPE_CHECKING`` are the same names, for type checkers."""

from typing import TYPE_CHECKING

from poly.core.optional_import import lazy_exports

if TYPE_CHECKING:
    from poly.compare.verdicts.accuracy import AccuracyResult, AccuracyResults
    from poly.compare.verdicts.output_results import (
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
    from poly.compare.verdicts.simple_comparison import (
        DEFAULT_ATOL,
        DEFAULT_CHECK_ERROR_STAT,
        DEFAULT_ERROR_QUANTILE,
        DEFAULT_RTOL,
        OptionDeclaration,
        SimpleCompareOptions,
        SimpleOptions,
        require_output_names,
        simple_verdict,
    )
    from poly.compare.verdicts.thresholds import (
        SCALAR_ERROR_STATS,
        VALID_CHECK_ERROR_STATS,
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
    "CompareResult",
    "OutputCompareResult",
    "L2Result",
    "CosineSimilarityResult",
    "PsnrResult",
    "SnrResult",
    "PerceptualMetricsResult",
    "DistanceMetricsResult",
    "QualityMetricsResult",
    "SimpleCompareOptions",
    "OptionDeclaration",
    "DEFAULT_ATOL",
    "DEFAULT_RTOL",
    "DEFAULT_CHECK_ERROR_STAT",
    "DEFAULT_ERROR_QUANTILE",
    "SimpleOptions",
    "simple_verdict",
    "require_output_names",
    "AccuracyResult",
    "AccuracyResults",
]

__getattr__, __dir__ = lazy_exports(__name__, {
    "Threshold": "poly.compare.verdicts.thresholds",
    "SimpleThreshold": "poly.compare.verdicts.thresholds",
    "L2Threshold": "poly.compare.verdicts.thresholds",
    "CosineSimilarityThreshold": "poly.compare.verdicts.thresholds",
    "PsnrThreshold": "poly.compare.verdicts.thresholds",
    "SnrThreshold": "poly.compare.verdicts.thresholds",
    "LpipsThreshold": "poly.compare.verdicts.thresholds",
    "DistanceMetricsThreshold": "poly.compare.verdicts.thresholds",
    "QualityMetricsThreshold": "poly.compare.verdicts.thresholds",
    "SCALAR_ERROR_STATS": "poly.compare.verdicts.thresholds",
    "VALID_CHECK_ERROR_STATS": "poly.compare.verdicts.thresholds",
    "CompareResult": "poly.compare.verdicts.output_results",
    "OutputCompareResult": "poly.compare.verdicts.output_results",
    "L2Result": "poly.compare.verdicts.output_results",
    "CosineSimilarityResult": "poly.compare.verdicts.output_results",
    "PsnrResult": "poly.compare.verdicts.output_results",
    "SnrResult": "poly.compare.verdicts.output_results",
    "PerceptualMetricsResult": "poly.compare.verdicts.output_results",
    "DistanceMetricsResult": "poly.compare.verdicts.output_results",
    "QualityMetricsResult": "poly.compare.verdicts.output_results",
    "SimpleCompareOptions": "poly.compare.verdicts.simple_comparison",
    "OptionDeclaration": "poly.compare.verdicts.simple_comparison",
    "DEFAULT_ATOL": "poly.compare.verdicts.simple_comparison",
    "DEFAULT_RTOL": "poly.compare.verdicts.simple_comparison",
    "DEFAULT_CHECK_ERROR_STAT": "poly.compare.verdicts.simple_comparison",
    "DEFAULT_ERROR_QUANTILE": "poly.compare.verdicts.simple_comparison",
    "SimpleOptions": "poly.compare.verdicts.simple_comparison",
    "simple_verdict": "poly.compare.verdicts.simple_comparison",
    "require_output_names": "poly.compare.verdicts.simple_comparison",
    "AccuracyResult": "poly.compare.verdicts.accuracy",
    "AccuracyResults": "poly.compare.verdicts.accuracy",
})
