"""
poly.compare: running backends on the same inputs and comparing their outputs (Polygraphy's
comparator), with every statistic computed by the native engine ``poly._native``.

Where things live: ``comparator`` (``Comparator``), ``results`` (``RunResults``,
``IterationResult``), ``funcs/`` (the comparison functions), ``verdicts/`` (thresholds, per-output
and accuracy results, the simple comparison's options and verdict), ``stats/`` (native
statistics, Polygraphy's figures and tolerances at its precision, report lines, plots, the NaN/Inf
check), ``io/`` (data loaders, saved inputs, ``.npz``), ``dataset/``
(streaming validation of a dataset, ``poly validate``) and ``postprocess`` (``PostprocessFunc``).
Options given per output name and ``try_match_shape`` come from poly-core
(``poly.core.tensors.per_output``, ``poly.core.tensors.fit_shape``).
"""

from poly.compare.combined_data import concat_data, merge_inputs
from poly.compare.comparator import Comparator
from poly.compare.funcs import (
    BaseCompareFunc,
    CompareFunc,
    CosineSimilarityCompareFunc,
    DistanceMetricsCompareFunc,
    IndicesCompareFunc,
    L2CompareFunc,
    PerceptualMetricsCompareFunc,
    PsnrCompareFunc,
    QualityMetricsCompareFunc,
    SimpleCompareFunc,
    SnrCompareFunc,
    default_find_output_func,
    metric_fields_for_func,
    run_comparison,
)
from poly.compare.io import (
    DataLoader,
    DataLoaderCache,
    DataLoaderFromScript,
    StreamingDataLoader,
    coerce_feed_dict,
    import_from_script,
    load_inputs,
    parse_script_and_func_name,
    save_inputs,
)
from poly.compare.postprocess import BasePostprocessFunc, PostprocessFunc, TopKPostprocessFunc
from poly.compare.results import IterationResult, LazyArray, RunResults
from poly.compare.stats import DiffStats, ErrorStats, ValueSummary, error_stats, has_display, resolve_display
from poly.compare.verdicts import (
    AccuracyResult,
    AccuracyResults,
    CompareResult,
    CosineSimilarityResult,
    CosineSimilarityThreshold,
    DistanceMetricsResult,
    DistanceMetricsThreshold,
    L2Result,
    L2Threshold,
    LpipsThreshold,
    OutputCompareResult,
    PerceptualMetricsResult,
    PsnrResult,
    PsnrThreshold,
    QualityMetricsResult,
    QualityMetricsThreshold,
    SimpleCompareOptions,
    SimpleThreshold,
    SnrResult,
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
    "SimpleCompareOptions",
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
    "merge_inputs",
    "concat_data",
    # showing plots, or saving them where nothing can be shown
    "has_display",
    "resolve_display",
    # post-processing
    "PostprocessFunc",
    "BasePostprocessFunc",
    "TopKPostprocessFunc",
]
