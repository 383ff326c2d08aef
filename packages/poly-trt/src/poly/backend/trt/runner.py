"""Polygraphy-compatible import path `poly.backend.trt.runner`: re-exports the `poly.trt` modules that hold
what Polygraphy keeps there (runner)."""

from poly.trt.execution import runner
from poly.trt.execution.runner import *  # noqa: F401,F403

__all__ = [*runner.__all__]
