"""Polygraphy-compatible import path `poly.backend.onnx.loader`: the loaders of `poly.onnx`."""

from poly.onnx import *  # noqa: F401,F403
from poly.onnx import __all__  # noqa: F401
