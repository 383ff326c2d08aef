"""Polygraphy-compatible import path `poly.backend.tensorrt_rtx.config`. The code lives in
`poly.trt.builder.config_rtx`; this module only re-exports it."""

from poly.trt.builder.config_rtx import *  # noqa: F401,F403
from poly.trt.builder.config_rtx import __all__  # noqa: F401
