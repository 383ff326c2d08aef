"""Polygraphy-compatible import path ``polygraphy.comparator.postprocess``: ``poly.compare.postprocess``."""

from poly.compare.postprocess import *  # noqa: F403
from poly.compare.postprocess import __all__  # noqa: F401
