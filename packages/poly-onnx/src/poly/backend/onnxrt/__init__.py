"""Polygraphy-compatible import path: `polygraphy.backend.onnxrt` becomes `poly.backend.onnxrt`.
The code lives in `poly.onnx`; this module only re-exports the `__all__` of its ONNX-Runtime
session loader (`poly.onnx.session`) and runner (`poly.onnx.onnxrt_runner`)."""

from poly.onnx import onnxrt_runner, session
from poly.onnx.onnxrt_runner import *  # noqa: F401,F403
from poly.onnx.session import *  # noqa: F401,F403

__all__ = [*session.__all__, *onnxrt_runner.__all__]
