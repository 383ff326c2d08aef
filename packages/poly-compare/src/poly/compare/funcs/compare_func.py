"""``CompareFunc``: factories of the comparison functions, under Polygraphy's names."""

from __future__ import annotations

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
from poly.compare.verdicts.simple_comparison import SimpleCompareOptions

__all__ = ["CompareFunc"]


def _with_polygraphy_signature(func):
    # the arguments are declared once, in SimpleCompareOptions; help() and IDEs read this signature
    func.__signature__ = SimpleCompareOptions.signature().replace(return_annotation="SimpleCompareFunc")
    return func


class CompareFunc:
    """
    Functions that compare two ``IterationResult`` s, for ``Comparator.compare_accuracy``::

        compare_func = CompareFunc.simple(atol={"logits": 1e-3, "": 1e-5}, check_error_stat="median")
        accuracy = Comparator.compare_accuracy(run_results, compare_func=compare_func)
    """

    @staticmethod
    @_with_polygraphy_signature
    def simple(*args, **kwargs) -> SimpleCompareFunc:
        """Tolerances on an error statistic: Polygraphy's arguments, the options declared in
        ``SimpleCompareOptions``; see ``SimpleCompareFunc``."""
        return SimpleCompareFunc(*args, **kwargs)

    @staticmethod
    def indices(index_tolerance=None, fail_fast=None) -> IndicesCompareFunc:
        """Positions of index values (Top-K outputs); see ``IndicesCompareFunc``."""
        return IndicesCompareFunc(index_tolerance=index_tolerance, fail_fast=fail_fast)

    @staticmethod
    def distance_metrics(
        l2_tolerance=None, cosine_similarity_threshold=None, check_shapes=None, fail_fast=None, find_output_func=None
    ) -> DistanceMetricsCompareFunc:
        """L2 norm and cosine similarity; see ``DistanceMetricsCompareFunc``."""
        return DistanceMetricsCompareFunc(
            l2_tolerance=l2_tolerance,
            cosine_similarity_threshold=cosine_similarity_threshold,
            check_shapes=check_shapes,
            fail_fast=fail_fast,
            find_output_func=find_output_func,
        )

    @staticmethod
    def quality_metrics(
        psnr_tolerance=None, snr_tolerance=None, check_shapes=None, fail_fast=None, find_output_func=None
    ) -> QualityMetricsCompareFunc:
        """PSNR and SNR; see ``QualityMetricsCompareFunc``."""
        return QualityMetricsCompareFunc(
            psnr_tolerance=psnr_tolerance,
            snr_tolerance=snr_tolerance,
            check_shapes=check_shapes,
            fail_fast=fail_fast,
            find_output_func=find_output_func,
        )

    @staticmethod
    def l2(l2_threshold=None, check_shapes=None, fail_fast=None, find_output_func=None) -> L2CompareFunc:
        """L2 norm alone (Polygraphy 0.53's ``L2CompareFunc``)."""
        return L2CompareFunc(l2_threshold, check_shapes, fail_fast, find_output_func)

    @staticmethod
    def cosine_similarity(
        cosine_similarity_threshold=None, check_shapes=None, fail_fast=None, find_output_func=None
    ) -> CosineSimilarityCompareFunc:
        """Cosine similarity alone (Polygraphy 0.53's ``CosineSimilarityCompareFunc``)."""
        return CosineSimilarityCompareFunc(cosine_similarity_threshold, check_shapes, fail_fast, find_output_func)

    @staticmethod
    def psnr(psnr_threshold=None, check_shapes=None, fail_fast=None, find_output_func=None) -> PsnrCompareFunc:
        """PSNR alone (Polygraphy 0.53's ``PsnrCompareFunc``)."""
        return PsnrCompareFunc(psnr_threshold, check_shapes, fail_fast, find_output_func)

    @staticmethod
    def snr(snr_threshold=None, check_shapes=None, fail_fast=None, find_output_func=None) -> SnrCompareFunc:
        """SNR alone (Polygraphy 0.53's ``SnrCompareFunc``)."""
        return SnrCompareFunc(snr_threshold, check_shapes, fail_fast, find_output_func)

    @staticmethod
    def perceptual_metrics(
        lpips_threshold=None, check_shapes=None, fail_fast=None, find_output_func=None
    ) -> PerceptualMetricsCompareFunc:
        """LPIPS distance (needs torch and lpips); see ``PerceptualMetricsCompareFunc``."""
        return PerceptualMetricsCompareFunc(
            lpips_threshold=lpips_threshold, check_shapes=check_shapes, fail_fast=fail_fast,
            find_output_func=find_output_func,
        )
