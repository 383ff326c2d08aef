"""Polygraphy-compatible import path: `polygraphy.backend.onnx` becomes `poly.backend.onnx`.
The code lives in `poly.onnx`; this module only re-exports it (the loaders Polygraphy keeps here,
and the rest of `poly.onnx`'s public names), and the `loader` and `util` modules."""

from poly.backend.onnx import loader, util  # noqa: F401
from poly.onnx import *  # noqa: F401,F403
from poly.onnx import __all__  # noqa: F401
