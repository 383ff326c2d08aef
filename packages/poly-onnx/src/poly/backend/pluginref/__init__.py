"""Polygraphy-compatible import path: `polygraphy.backend.pluginref` becomes
`poly.backend.pluginref`. The code lives in `poly.onnx.runners.pluginref_runner`; this module only
re-exports it."""

from poly.onnx.runners.pluginref_runner import *  # noqa: F401,F403
from poly.onnx.runners.pluginref_runner import __all__  # noqa: F401
