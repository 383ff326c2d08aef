"""Polygraphy-compatible import path: `polygraphy.backend.tensorrt_rtx` becomes
`poly.backend.tensorrt_rtx`. Only re-exports `poly.backend.tensorrt_rtx.config`."""

from poly.backend.tensorrt_rtx.config import *  # noqa: F401,F403
from poly.backend.tensorrt_rtx.config import __all__  # noqa: F401
