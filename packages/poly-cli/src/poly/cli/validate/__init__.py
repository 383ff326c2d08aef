"""
The engines of `poly validate` and the driver that runs one. Every engine implements
``ValidationEngine`` (``engine``): threads in this process (``threads``), worker processes
(``processes``) and Ray actors (``ray/``); the distributed two share ``BatchEngine``. The
command picks an engine and runs it with ``driver``; ``progress`` is the progress line. What
every engine shares beyond that (listing the dataset, reading samples, golden outputs, the
pipeline, the per-worker validator, the reports) is in ``poly.compare.dataset``.
"""

from poly.cli.validate import driver, engine, processes, progress, threads
from poly.cli.validate.driver import *  # noqa: F403
from poly.cli.validate.engine import *  # noqa: F403
from poly.cli.validate.processes import *  # noqa: F403
from poly.cli.validate.progress import *  # noqa: F403
from poly.cli.validate.threads import *  # noqa: F403

__all__ = [*engine.__all__, *threads.__all__, *processes.__all__, *driver.__all__, *progress.__all__]
