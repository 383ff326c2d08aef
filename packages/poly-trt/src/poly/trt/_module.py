"""
Which TensorRT poly.trt drives, imported at first use: ``tensorrt`` (full TensorRT), else
``tensorrt_rtx``, else ``tensorrt_rtx_bindings`` (TensorRT-RTX from PyPI). Setting
``POLY_USE_TENSORRT_RTX=1`` skips full TensorRT. A missing TensorRT is one line naming the
``pip install`` that brings it.
"""

import contextlib
import importlib
import os

from poly.core.exception import PolyException

__all__ = ["trt", "flavour", "is_rtx", "has_builder_flag", "use_module", "TensorRTMissingError"]

_FULL = "tensorrt"
_RTX = ("tensorrt_rtx", "tensorrt_rtx_bindings")

_module = None
_override = None


class TensorRTMissingError(PolyException):
    """No TensorRT module could be imported."""


def _candidates():
    if os.environ.get("POLY_USE_TENSORRT_RTX", "0") not in ("", "0"):
        return list(_RTX)
    return [_FULL, *_RTX]


def trt():
    """Returns the TensorRT module (imported once)."""
    global _module
    if _override is not None:
        return _override
    if _module is None:
        errors = []
        for name in _candidates():
            try:
                _module = importlib.import_module(name)
                break
            except ImportError as err:
                errors.append(f"{name}: {err}")
        else:
            raise TensorRTMissingError(
                "TensorRT is not installed (tried " + "; ".join(errors) + "): "
                "pip install tensorrt, or pip install tensorrt-rtx-cu13-bindings tensorrt-rtx-cu13-libs"
            )
    return _module


def is_rtx():
    """True when the module in use is TensorRT-RTX."""
    return "rtx" in trt().__name__


def flavour():
    """``"TensorRT-RTX x.y"`` or ``"TensorRT x.y"``: the module in use and its version."""
    mod = trt()
    return f"{'TensorRT-RTX' if is_rtx() else 'TensorRT'} {getattr(mod, '__version__', '?')}"


def has_builder_flag(name):
    """Whether this TensorRT flavour has ``BuilderFlag.<name>`` (RTX lacks FP16, INT8, ...)."""
    return hasattr(trt().BuilderFlag, name)


@contextlib.contextmanager
def use_module(module):
    """
    Makes poly.trt use ``module`` instead of the installed TensorRT inside the block: for
    test doubles of the execution API on machines that have a GPU but no TensorRT.
    """
    global _override
    previous, _override = _override, module
    try:
        yield module
    finally:
        _override = previous
