"""poly.compare: running backends on the same inputs and comparing their outputs (Polygraphy's
comparator), with every statistic computed by the native engine ``poly._native``."""

from poly.compare.accuracy import AccuracyResult, AccuracyResults
from poly.compare.comparator import Comparator
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
from poly.compare.data_loader import DataLoader, DataLoaderCache, coerce_feed_dict
from poly.compare.data_loader_script import (
    DataLoaderFromScript,
    import_from_script,
    parse_script_and_func_name,
)
from poly.compare.error_stats import DiffStats, ErrorStats, ValueSummary, error_stats
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
from poly.compare.postprocess import BasePostprocessFunc, PostprocessFunc, TopKPostprocessFunc
from poly.compare.results import IterationResult, LazyArray, RunResults
from poly.compare.saved_inputs import StreamingDataLoader, load_inputs, save_inputs
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
    # native statistics
    "error_stats",
    "ErrorStats",
    "DiffStats",
    "ValueSummary",
    # comparator
    "Comparator",
    "CompareFunc",
    "BaseCompareFunc",
    "SimpleCompareFunc",
    "IndicesCompareFunc",
    "L2CompareFunc",
    "CosineSimilarityCompareFunc",
    "PsnrCompareFunc",
    "SnrCompareFunc",
    "DistanceMetricsCompareFunc",
    "QualityMetricsCompareFunc",
    "PerceptualMetricsCompareFunc",
    "default_find_output_func",
    "run_comparison",
    "metric_fields_for_func",
    # per-output results and thresholds
    "CompareResult",
    "OutputCompareResult",
    "L2Result",
    "CosineSimilarityResult",
    "PsnrResult",
    "SnrResult",
    "PerceptualMetricsResult",
    "DistanceMetricsResult",
    "QualityMetricsResult",
    "Threshold",
    "SimpleThreshold",
    "L2Threshold",
    "CosineSimilarityThreshold",
    "PsnrThreshold",
    "SnrThreshold",
    "LpipsThreshold",
    "DistanceMetricsThreshold",
    "QualityMetricsThreshold",
    # results
    "RunResults",
    "IterationResult",
    "LazyArray",
    "AccuracyResult",
    "AccuracyResults",
    # inputs
    "DataLoader",
    "DataLoaderCache",
    "coerce_feed_dict",
    "StreamingDataLoader",
    "DataLoaderFromScript",
    "import_from_script",
    "parse_script_and_func_name",
    "load_inputs",
    "save_inputs",
    # post-processing
    "PostprocessFunc",
    "BasePostprocessFunc",
    "TopKPostprocessFunc",
]
