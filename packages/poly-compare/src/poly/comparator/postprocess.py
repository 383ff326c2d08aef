"""Polygraphy-compatible import path ``polygraphy.comparator.postprocess``, re-exported from
``poly.compare``."""

from poly.compare.postprocess import BasePostprocessFunc, PostprocessFunc, TopKPostprocessFunc

__all__ = ["BasePostprocessFunc", "PostprocessFunc", "TopKPostprocessFunc"]
