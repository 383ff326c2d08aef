"""Polygraphy-compatible import path `poly.cuda.cuda`. The code lives in `poly.core.cuda.device_arrays`
(over the native buffers of `poly.core.cuda`); this module only re-exports it."""

from poly.core.cuda.device_arrays import *  # noqa: F401,F403
from poly.core.cuda.device_arrays import __all__  # noqa: F401
