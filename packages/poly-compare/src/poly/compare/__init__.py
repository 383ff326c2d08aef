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

Its names are imported on first use (``poly.core.optional_import.lazy_exports``), so that a command
imports only the parts it runs (`poly run --help` reads ``SimpleCompareOptions`` without NumPy); the
imports under ``TYPE_CHECKING`` are the same names, for type checkers.
"""

from typing import TYPE_CHECKING

from poly.core.optional_import import lazy_exports

if TYPE_CHECKING:
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
    from poly.compare.stats import (
        DiffStats,
        ErrorStats,
        ValueSummary,
        error_stats,
        has_display,
        resolve_display,
    )
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

__getattr__, __dir__ = lazy_exports(__name__, {
    "concat_data": "poly.compare.combined_data",
    "merge_inputs": "poly.compare.combined_data",
    "Comparator": "poly.compare.comparator",
    "BaseCompareFunc": "poly.compare.funcs",
    "CompareFunc": "poly.compare.funcs",
    "CosineSimilarityCompareFunc": "poly.compare.funcs",
    "DistanceMetricsCompareFunc": "poly.compare.funcs",
    "IndicesCompareFunc": "poly.compare.funcs",
    "L2CompareFunc": "poly.compare.funcs",
    "PerceptualMetricsCompareFunc": "poly.compare.funcs",
    "PsnrCompareFunc": "poly.compare.funcs",
    "QualityMetricsCompareFunc": "poly.compare.funcs",
    "SimpleCompareFunc": "poly.compare.funcs",
    "SnrCompareFunc": "poly.compare.funcs",
    "default_find_output_func": "poly.compare.funcs",
    "metric_fields_for_func": "poly.compare.funcs",
    "run_comparison": "poly.compare.funcs",
    "DataLoader": "poly.compare.io",
    "DataLoaderCache": "poly.compare.io",
    "DataLoaderFromScript": "poly.compare.io",
    "StreamingDataLoader": "poly.compare.io",
    "coerce_feed_dict": "poly.compare.io",
    "import_from_script": "poly.compare.io",
    "load_inputs": "poly.compare.io",
    "parse_script_and_func_name": "poly.compare.io",
    "save_inputs": "poly.compare.io",
    "BasePostprocessFunc": "poly.compare.postprocess",
    "PostprocessFunc": "poly.compare.postprocess",
    "TopKPostprocessFunc": "poly.compare.postprocess",
    "IterationResult": "poly.compare.results",
    "LazyArray": "poly.compare.results",
    "RunResults": "poly.compare.results",
    "DiffStats": "poly.compare.stats",
    "ErrorStats": "poly.compare.stats",
    "ValueSummary": "poly.compare.stats",
    "error_stats": "poly.compare.stats",
    "has_display": "poly.compare.stats",
    "resolve_display": "poly.compare.stats",
    "AccuracyResult": "poly.compare.verdicts",
    "AccuracyResults": "poly.compare.verdicts",
    "CompareResult": "poly.compare.verdicts",
    "CosineSimilarityResult": "poly.compare.verdicts",
    "CosineSimilarityThreshold": "poly.compare.verdicts",
    "DistanceMetricsResult": "poly.compare.verdicts",
    "DistanceMetricsThreshold": "poly.compare.verdicts",
    "L2Result": "poly.compare.verdicts",
    "L2Threshold": "poly.compare.verdicts",
    "LpipsThreshold": "poly.compare.verdicts",
    "OutputCompareResult": "poly.compare.verdicts",
    "PerceptualMetricsResult": "poly.compare.verdicts",
    "PsnrResult": "poly.compare.verdicts",
    "PsnrThreshold": "poly.compare.verdicts",
    "QualityMetricsResult": "poly.compare.verdicts",
    "QualityMetricsThreshold": "poly.compare.verdicts",
    "SimpleCompareOptions": "poly.compare.verdicts",
    "SimpleThreshold": "poly.compare.verdicts",
    "SnrResult": "poly.compare.verdicts",
    "SnrThreshold": "poly.compare.verdicts",
    "Threshold": "poly.compare.verdicts",
})
