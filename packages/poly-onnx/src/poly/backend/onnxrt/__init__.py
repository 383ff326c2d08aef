"""Polygraphy-compatible import path: `polygraphy.backend.onnxrt` becomes `poly.backend.onnxrt`.
The code lives in `poly.onnx`; this module only re-exports the `__all__` of its ONNX-Runtime
session loader (`poly.onnx.runners.session`) and runner (`poly.onnx.runners.onnxrt_runner`)."""

from poly.onnx.runners import onnxrt_runner, session
from poly.onnx.runners.onnxrt_runner import *  # noqa: F401,F403
from poly.onnx.runners.session import *  # noqa: F401,F403

__all__ = [*session.__all__, *onnxrt_runner.__all__]
