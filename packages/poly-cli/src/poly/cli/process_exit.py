"""
How the `poly` console script ends its process: without the interpreter's teardown.

Once a command has returned, CPython still finalizes every module and object it imported
before the process may end: with NumPy, ONNX and ONNX-Runtime loaded that is 0.1 s on a
2-core machine (a fifth of a `poly run` on a small model) spent freeing memory the operating
system reclaims at once anyway. ``exit_process`` runs what an ordinary exit must still do (the
``atexit`` callbacks, which also remove poly's temporary files and flush Python's logging, then
the standard streams) and ends the process with ``os._exit``. It exits the ordinary way while a
thread that is not a daemon still runs (the interpreter waits for it first), and under a
profiler, tracer, debugger or coverage tool (``python -m cProfile``, ``coverage run``: they write
their results once the script has returned).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import Any, NoReturn

__all__ = ["exit_status", "exit_process"]


def exit_status(code: Any) -> int:
    """The process status ``sys.exit(code)`` gives: 0 for None, the integer itself, else 1 (after
    printing ``code`` on stderr, as the interpreter does)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code % 256
    print(code, file=sys.stderr)
    return 1


def _threads_still_running() -> bool:
    main = threading.main_thread()
    return any(t is not main and t.is_alive() and not t.daemon for t in threading.enumerate())


def _observed() -> bool:
    """Whether a profiler, tracer or debugger is attached to this interpreter."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)  # (Python 3.12+: coverage, debuggers, profilers)
    return monitoring is not None and any(monitoring.get_tool(tool) is not None for tool in range(6))


def exit_process(code: Any) -> NoReturn:
    """Ends the process with ``sys.exit(code)``'s status, skipping the interpreter's teardown
    (see the module's docstring). Only for a process's last step: nothing after it runs."""
    if _threads_still_running() or _observed():
        sys.exit(code)
    status = exit_status(code)
    atexit._run_exitfuncs()  # what an ordinary exit runs: temporary files removed, logging flushed
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe (`poly ... | head`) or stream: nothing to keep
            pass
    os._exit(status)
