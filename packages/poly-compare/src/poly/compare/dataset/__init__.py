"""
Streaming validation of a runner over a dataset against reference outputs (``poly validate``),
the parts every engine (threads, processes, Ray) shares: the dataset listed once
(``work_items``), the one sample reader (``sample_reader``), datasets iterated in one process
(``sources``), reference outputs (``references``), the per-sample verdict (``sample_check``, the
same as ``CompareFunc.simple``'s), the bounded running summary (``accumulator``), the
reader/runner/checker pipeline (``pipeline``), the validator of one distributed worker
(``worker``) and the JSON/HTML reports (``report``). Nothing here imports Ray.
"""

from poly.compare.dataset import (
    accumulator,
    pipeline,
    references,
    report,
    sample_check,
    sample_reader,
    sources,
    work_items,
    worker,
)
from poly.compare.dataset.accumulator import *  # noqa: F403
from poly.compare.dataset.pipeline import *  # noqa: F403
from poly.compare.dataset.references import *  # noqa: F403
from poly.compare.dataset.report import *  # noqa: F403
from poly.compare.dataset.sample_check import *  # noqa: F403
from poly.compare.dataset.sample_reader import *  # noqa: F403
from poly.compare.dataset.sources import *  # noqa: F403
from poly.compare.dataset.work_items import *  # noqa: F403
from poly.compare.dataset.worker import *  # noqa: F403

__all__ = [*work_items.__all__, *sample_reader.__all__, *sources.__all__, *references.__all__, *sample_check.__all__,
           *accumulator.__all__, *pipeline.__all__, *worker.__all__, *report.__all__]
