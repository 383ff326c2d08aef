"""Polygraphy-compatible import path ``polygraphy.comparator.compare``: the comparison functions,
their per-output results and thresholds (``poly.compare.funcs`` and ``poly.compare.verdicts``)."""

from poly.compare import funcs, verdicts
from poly.compare.funcs import *  # noqa: F403
from poly.compare.verdicts import *  # noqa: F403

__all__ = [*funcs.__all__, *verdicts.__all__]
