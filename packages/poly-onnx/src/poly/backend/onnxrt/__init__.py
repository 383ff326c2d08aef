"""Polygraphy-compatible import path: `polygraphy.backend.onnxrt` becomes `poly.backend.onnxrt`.
The code lives in `poly.onnx`; this module only re-exports the ONNX-Runtime session loader and runner."""

from poly.onnx.onnxrt_runner import OnnxrtRunner
from poly.onnx.session import SessionFromOnnx, session_from_onnx

__all__ = ["SessionFromOnnx", "session_from_onnx", "OnnxrtRunner"]
