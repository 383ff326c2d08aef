"""
Deferred imports of the heavy libraries poly.onnx builds on (onnx, onnx-graphsurgeon,
onnxruntime), so that importing poly.onnx costs nothing until a loader actually runs, and a
missing library is reported as one line naming the ``pip install`` that brings it.
"""

import importlib

from poly.core.exception import PolyException

__all__ = ["LazyModule", "lazy_import"]


class LazyModule:
    """A module stand-in that imports the real module on first attribute access."""

    def __init__(self, name, pip_name=None):
        self._name = name
        self._pip_name = pip_name or name.split(".")[0].replace("_", "-")
        self._module = None

    def load(self):
        """Imports (once) and returns the real module."""
        if self._module is None:
            try:
                self._module = importlib.import_module(self._name)
            except ImportError as err:
                raise PolyException(
                    f"Module '{self._name}' is required but could not be imported ({err}); "
                    f"install it with: python -m pip install {self._pip_name}"
                ) from None
        return self._module

    def __getattr__(self, attr):
        # Protocol lookups (copy, pickle, inspect) must not import the module; metadata may.
        if attr.startswith("__") and attr.endswith("__") and attr not in ("__version__", "__file__"):
            raise AttributeError(attr)
        return getattr(self.load(), attr)

    def __repr__(self):
        state = "loaded" if self._module is not None else "not loaded"
        return f"<LazyModule {self._name} ({state})>"


def lazy_import(name, pip_name=None):
    """
    Returns a ``LazyModule`` for ``name``.

    Args:
        name (str): The module to import, e.g. ``"onnx.shape_inference"``.
        pip_name (str): The distribution that provides it, for the error message.
    """
    return LazyModule(name, pip_name)


onnx = lazy_import("onnx")
numpy_helper = lazy_import("onnx.numpy_helper", "onnx")
shape_inference = lazy_import("onnx.shape_inference", "onnx")
external_data_helper = lazy_import("onnx.external_data_helper", "onnx")
gs = lazy_import("onnx_graphsurgeon", "onnx-graphsurgeon")
onnxrt = lazy_import("onnxruntime")
