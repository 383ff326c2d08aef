"""Polygraphy-compatible import path: `polygraphy.backend.trt` becomes `poly.backend.trt`.
The code lives in `poly.trt`; this module only re-exports it."""

from poly.trt import *  # noqa: F401,F403
from poly.trt import __all__  # noqa: F401
