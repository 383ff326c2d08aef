"""Polygraphy-compatible import path ``polygraphy.comparator.struct``: the result containers
(``RunResults``, ``IterationResult``, ``LazyArray`` from ``poly.compare.results``;
``AccuracyResult(s)`` from ``poly.compare.verdicts.accuracy``)."""

from poly.compare import results
from poly.compare.results import *  # noqa: F403
from poly.compare.verdicts import accuracy
from poly.compare.verdicts.accuracy import *  # noqa: F403

__all__ = [*results.__all__, *accuracy.__all__]
