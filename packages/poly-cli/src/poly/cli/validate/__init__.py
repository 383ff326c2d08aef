"""
The engines of `poly validate` and the driver that runs one. Every engine implements
``ValidationEngine`` (``engine``): threads in this process (``threads``), worker processes
(``processes``) and Ray actors (``ray/``); the distributed two share ``BatchEngine``. The
command picks an engine and runs it with ``driver``; ``progress`` is the progress line. What
every engine shares beyond that (listing the dataset, reading samples, golden outputs, the
pipeline, the per-worker validator, the reports) is in ``poly.compare.dataset``.

Its names are imported on first use (``poly.core.optional_import.lazy_exports``), so that `poly
validate --help` and the commands that borrow a piece (``progress``) import no engine and no NumPy;
the imports under ``TYPE_CHECKING`` are the same names, for type checkers.
"""

from typing import TYPE_CHECKING

from poly.core.optional_import import lazy_exports

if TYPE_CHECKING:
    from poly.cli.validate.driver import (
        check_sources,
        default_processes,
        finish,
        pick_engine,
        report_config,
        run_validation,
    )
    from poly.cli.validate.engine import BatchEngine, ValidationEngine, ValidationJob, ValidationSources
    from poly.cli.validate.processes import ProcessEngine, processes_supported
    from poly.cli.validate.progress import Progress, format_duration
    from poly.cli.validate.threads import ThreadEngine

__all__ = [
    "ValidationSources",
    "ValidationJob",
    "ValidationEngine",
    "BatchEngine",
    "ThreadEngine",
    "ProcessEngine",
    "processes_supported",
    "check_sources",
    "default_processes",
    "pick_engine",
    "run_validation",
    "report_config",
    "finish",
    "Progress",
    "format_duration",
]

__getattr__, __dir__ = lazy_exports(__name__, {
    "ValidationSources": "poly.cli.validate.engine",
    "ValidationJob": "poly.cli.validate.engine",
    "ValidationEngine": "poly.cli.validate.engine",
    "BatchEngine": "poly.cli.validate.engine",
    "ThreadEngine": "poly.cli.validate.threads",
    "ProcessEngine": "poly.cli.validate.processes",
    "processes_supported": "poly.cli.validate.processes",
    "check_sources": "poly.cli.validate.driver",
    "default_processes": "poly.cli.validate.driver",
    "pick_engine": "poly.cli.validate.driver",
    "run_validation": "poly.cli.validate.driver",
    "report_config": "poly.cli.validate.driver",
    "finish": "poly.cli.validate.driver",
    "Progress": "poly.cli.validate.progress",
    "format_duration": "poly.cli.validate.progress",
})
