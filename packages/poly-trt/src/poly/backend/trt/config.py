"""Polygraphy-compatible import path `poly.backend.trt.config`: re-exports the `poly.trt` modules that hold
what Polygraphy keeps there (config, config_postprocess)."""

from poly.trt.builder import config, config_postprocess
from poly.trt.builder.config import *  # noqa: F401,F403
from poly.trt.builder.config_postprocess import *  # noqa: F401,F403

__all__ = [*config.__all__, *config_postprocess.__all__]
