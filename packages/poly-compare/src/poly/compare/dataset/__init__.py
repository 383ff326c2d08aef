"""
Streaming validation of a runner over a dataset against reference outputs (``poly validate``):
samples (``sources``), their reference outputs (``references``), the per-sample verdict
(``sample_check``, the same as ``CompareFunc.simple``'s), the bounded running summary
(``accumulator``), the reader/runner/checker pipeline (``pipeline``) and the JSON/HTML reports
(``report``).
"""

from poly.compare.dataset import accumulator, pipeline, references, report, sample_check, sources
from poly.compare.dataset.accumulator import *  # noqa: F403
from poly.compare.dataset.pipeline import *  # noqa: F403
from poly.compare.dataset.references import *  # noqa: F403
from poly.compare.dataset.report import *  # noqa: F403
from poly.compare.dataset.sample_check import *  # noqa: F403
from poly.compare.dataset.sources import *  # noqa: F403

__all__ = [*sources.__all__, *references.__all__, *sample_check.__all__, *accumulator.__all__, *pipeline.__all__, *report.__all__]
