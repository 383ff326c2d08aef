"""
The TensorRT module poly.trt drives, ``trt``: a ``poly.core.LazyModule`` that imports, at first
use, ``tensorrt`` (full TensorRT), else ``tensorrt_rtx``, else ``tensorrt_rtx_bindings``
(TensorRT-RTX from PyPI). Setting ``POLY_USE_TENSORRT_RTX=1`` skips full TensorRT. Code reads
``trt.Builder``, ``trt.BuilderFlag``...; a missing TensorRT raises ``TensorRTMissingError``, one
line naming the ``pip install`` that brings it.

A test double takes TensorRT's place when it is put in ``sys.modules`` under the first name
of ``trt.candidates()`` and ``trt.reset()`` is called (and ``reset()`` again once it is removed);
the tests' ``tensorrt_double`` fixture does this.
"""

from poly.core.optional_import import MissingModuleError, lazy_import, tensorrt_candidates

__all__ = ["trt", "tensorrt_candidates", "flavour", "is_rtx", "TensorRTMissingError"]


class TensorRTMissingError(MissingModuleError):
    """No TensorRT module could be imported."""


trt = lazy_import(
    tensorrt_candidates,
    install="tensorrt, or pip install tensorrt-rtx-cu13-bindings tensorrt-rtx-cu13-libs",
    purpose="poly.trt",
    error=TensorRTMissingError,
)
"""The TensorRT module in use (imported at first attribute access)."""


def is_rtx() -> bool:
    """True when the module in use is TensorRT-RTX."""
    return "rtx" in trt.__name__


def flavour() -> str:
    """``"TensorRT-RTX x.y"`` or ``"TensorRT x.y"``: the module in use and its version."""
    return f"{'TensorRT-RTX' if is_rtx() else 'TensorRT'} {getattr(trt, '__version__', '?')}"
