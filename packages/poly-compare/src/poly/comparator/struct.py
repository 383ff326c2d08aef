"""Polygraphy-compatible import path ``polygraphy.comparator.struct``: result containers,
re-exported from ``poly.compare``."""

from poly.compare.accuracy import AccuracyResult, AccuracyResults
from poly.compare.results import IterationResult, LazyArray, RunResults

__all__ = ["AccuracyResult", "AccuracyResults", "IterationResult", "LazyArray", "RunResults"]
