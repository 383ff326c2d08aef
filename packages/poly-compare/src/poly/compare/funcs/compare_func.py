"""``CompareFunc``: factories of the comparison functions, under Polygraphy's names."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from poly.compare.verdicts.simple_comparison import SimpleCompareOptions

if TYPE_CHECKING:
    from poly.compare.funcs.indices import IndicesCompareFunc
    from poly.compare.funcs.metrics import (
        CosineSimilarityCompareFunc,
        DistanceMetricsCompareFunc,
        L2CompareFunc,
        PsnrCompareFunc,
        QualityMetricsCompareFunc,
        SnrCompareFunc,
    )
    from poly.compare.funcs.perceptual import PerceptualMetricsCompareFunc
    from poly.compare.funcs.simple import SimpleCompareFunc

# Each factory imports its function's module when called: a run that compares nothing (one
# runner) or with one function does not load (or, without cached bytecode, compile) the others.

__all__ = ["CompareFunc"]

_F = TypeVar("_F", bound=Callable[..., Any])
PerOutput = float | Mapping[str, float] | None
"""A tolerance: one value, or output name -> value with ``""`` as the default."""
FindOutputFunc = Callable[..., Any] | None
"""``find_output_func(output_name, index, iter_result)`` -> the names to compare with."""


def _with_polygraphy_signature(func: _F) -> _F:
    # the arguments are declared once, in SimpleCompareOptions; help() and IDEs read this signature
    setattr(func, "__signature__",  # noqa: B010
            SimpleCompareOptions.signature().replace(return_annotation="SimpleCompareFunc"))
    return func


class CompareFunc:
    """
    Functions that compare two ``IterationResult`` s, for ``Comparator.compare_accuracy``::

        compare_func = CompareFunc.simple(atol={"logits": 1e-3, "": 1e-5}, check_error_stat="median")
        accuracy = Comparator.compare_accuracy(run_results, compare_func=compare_func)
    """

    if TYPE_CHECKING:
        # What type checkers see: SimpleCompareOptions' fields, in the order of its signature()
        # (tests/test_types.py checks that the two agree).
        @staticmethod
        def simple(check_shapes: bool | None = None, rtol: PerOutput = None, atol: PerOutput = None,
                   fail_fast: bool | None = None, find_output_func: FindOutputFunc = None,
                   check_error_stat: str | Mapping[str, str] | None = None,
                   infinities_compare_equal: bool | None = None, save_heatmaps: str | None = None,
                   show_heatmaps: bool | None = None, save_error_metrics_plot: str | None = None,
                   show_error_metrics_plot: bool | None = None, error_quantile: PerOutput = None,
                   ) -> SimpleCompareFunc:
            """Tolerances on an error statistic; see ``SimpleCompareFunc``."""
    else:
        @staticmethod
        @_with_polygraphy_signature
        def simple(*args: Any, **kwargs: Any) -> SimpleCompareFunc:
            """Tolerances on an error statistic: Polygraphy's arguments, the options declared in
            ``SimpleCompareOptions``; see ``SimpleCompareFunc``."""
            from poly.compare.funcs.simple import SimpleCompareFunc

            return SimpleCompareFunc(*args, **kwargs)

    @staticmethod
    def indices(index_tolerance: int | Mapping[str, int] | None = None, fail_fast: bool | None = None) -> IndicesCompareFunc:
        """Positions of index values (Top-K outputs); see ``IndicesCompareFunc``."""
        from poly.compare.funcs.indices import IndicesCompareFunc

        return IndicesCompareFunc(index_tolerance=index_tolerance, fail_fast=fail_fast)

    @staticmethod
    def distance_metrics(
        l2_tolerance: PerOutput = None, cosine_similarity_threshold: PerOutput = None, check_shapes: bool | None = None, fail_fast: bool | None = None, find_output_func: FindOutputFunc = None
    ) -> DistanceMetricsCompareFunc:
        """L2 norm and cosine similarity; see ``DistanceMetricsCompareFunc``."""
        from poly.compare.funcs.metrics import DistanceMetricsCompareFunc

        return DistanceMetricsCompareFunc(
            l2_tolerance=l2_tolerance,
            cosine_similarity_threshold=cosine_similarity_threshold,
            check_shapes=check_shapes,
            fail_fast=fail_fast,
            find_output_func=find_output_func,
        )

    @staticmethod
    def quality_metrics(
        psnr_tolerance: PerOutput = None, snr_tolerance: PerOutput = None, check_shapes: bool | None = None, fail_fast: bool | None = None, find_output_func: FindOutputFunc = None
    ) -> QualityMetricsCompareFunc:
        """PSNR and SNR; see ``QualityMetricsCompareFunc``."""
        from poly.compare.funcs.metrics import QualityMetricsCompareFunc

        return QualityMetricsCompareFunc(
            psnr_tolerance=psnr_tolerance,
            snr_tolerance=snr_tolerance,
            check_shapes=check_shapes,
            fail_fast=fail_fast,
            find_output_func=find_output_func,
        )

    @staticmethod
    def l2(l2_threshold: PerOutput = None, check_shapes: bool | None = None, fail_fast: bool | None = None, find_output_func: FindOutputFunc = None) -> L2CompareFunc:
        """L2 norm alone (Polygraphy 0.53's ``L2CompareFunc``)."""
        from poly.compare.funcs.metrics import L2CompareFunc

        return L2CompareFunc(l2_threshold, check_shapes, fail_fast, find_output_func)

    @staticmethod
    def cosine_similarity(
        cosine_similarity_threshold: PerOutput = None, check_shapes: bool | None = None, fail_fast: bool | None = None, find_output_func: FindOutputFunc = None
    ) -> CosineSimilarityCompareFunc:
        """Cosine similarity alone (Polygraphy 0.53's ``CosineSimilarityCompareFunc``)."""
        from poly.compare.funcs.metrics import CosineSimilarityCompareFunc

        return CosineSimilarityCompareFunc(cosine_similarity_threshold, check_shapes, fail_fast, find_output_func)

    @staticmethod
    def psnr(psnr_threshold: PerOutput = None, check_shapes: bool | None = None, fail_fast: bool | None = None, find_output_func: FindOutputFunc = None) -> PsnrCompareFunc:
        """PSNR alone (Polygraphy 0.53's ``PsnrCompareFunc``)."""
        from poly.compare.funcs.metrics import PsnrCompareFunc

        return PsnrCompareFunc(psnr_threshold, check_shapes, fail_fast, find_output_func)

    @staticmethod
    def snr(snr_threshold: PerOutput = None, check_shapes: bool | None = None, fail_fast: bool | None = None, find_output_func: FindOutputFunc = None) -> SnrCompareFunc:
        """SNR alone (Polygraphy 0.53's ``SnrCompareFunc``)."""
        from poly.compare.funcs.metrics import SnrCompareFunc

        return SnrCompareFunc(snr_threshold, check_shapes, fail_fast, find_output_func)

    @staticmethod
    def perceptual_metrics(
        lpips_threshold: PerOutput = None, check_shapes: bool | None = None, fail_fast: bool | None = None, find_output_func: FindOutputFunc = None
    ) -> PerceptualMetricsCompareFunc:
        """LPIPS distance (needs torch and lpips); see ``PerceptualMetricsCompareFunc``."""
        from poly.compare.funcs.perceptual import PerceptualMetricsCompareFunc

        return PerceptualMetricsCompareFunc(
            lpips_threshold=lpips_threshold, check_shapes=check_shapes, fail_fast=fail_fast,
            find_output_func=find_output_func,
        )
