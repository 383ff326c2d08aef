"""TensorRT's logger, forwarding its messages to poly's ``G_LOGGER`` at matching severities."""

import contextlib
from collections.abc import Iterator
from typing import Any

from poly.core import G_LOGGER
from poly.trt.tensorrt_module import trt

__all__ = ["get_trt_logger", "errors_as_verbose"]

_LOGGER: Any = None
_DEMOTED = [0]


def get_trt_logger() -> Any:
    """Returns the process-wide ``trt.ILogger`` that writes through ``G_LOGGER``."""
    global _LOGGER
    if _LOGGER is not None:
        return _LOGGER
    severity = trt.ILogger.Severity

    class PolyTrtLogger(trt.ILogger):  # type: ignore[name-defined]
        def __init__(self) -> None:
            trt.ILogger.__init__(self)
            self._dispatch = {
                severity.INTERNAL_ERROR: G_LOGGER.error,
                severity.ERROR: G_LOGGER.error,
                severity.WARNING: G_LOGGER.warning,
                severity.INFO: G_LOGGER.verbose,
                severity.VERBOSE: G_LOGGER.extra_verbose,
            }

        def log(self, sev: Any, msg: Any) -> None:
            if _DEMOTED[0] and sev in (severity.ERROR, severity.INTERNAL_ERROR):
                G_LOGGER.verbose(f"[TRT] {msg}")
                return
            self._dispatch.get(sev, G_LOGGER.info)(f"[TRT] {msg}")

    _LOGGER = PolyTrtLogger()
    return _LOGGER


@contextlib.contextmanager
def errors_as_verbose() -> Iterator[Any]:
    """
    Inside the block TensorRT's errors are logged as verbose messages: for calls whose
    failures poly reports itself, in one line (the ONNX parser's, for example).
    """
    _DEMOTED[0] += 1
    try:
        yield
    finally:
        _DEMOTED[0] -= 1
