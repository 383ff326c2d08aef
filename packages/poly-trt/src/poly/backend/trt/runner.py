"""Polygraphy-compatible import path `poly.backend.trt.runner`: re-exports the `poly.trt` modules that hold
what Polygraphy keeps there (runner)."""

from poly.trt import runner
from poly.trt.runner import *  # noqa: F401,F403

__all__ = [*runner.__all__]
