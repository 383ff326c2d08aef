"""Verdicts: thresholds (``thresholds``), per-output results (``output_results``), the simple
comparison's options and verdict function (``simple_comparison``) and accuracy results over iterations and
runner pairs (``accuracy``)."""

from poly.compare.verdicts import accuracy, output_results, simple_comparison, thresholds
from poly.compare.verdicts.accuracy import *  # noqa: F403
from poly.compare.verdicts.output_results import *  # noqa: F403
from poly.compare.verdicts.simple_comparison import *  # noqa: F403
from poly.compare.verdicts.thresholds import *  # noqa: F403

__all__ = [*thresholds.__all__, *output_results.__all__, *simple_comparison.__all__, *accuracy.__all__]
