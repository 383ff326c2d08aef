"""Polygraphy-compatible import path `poly.backend.trt.calibrator`: re-exports the `poly.trt` modules that hold
what Polygraphy keeps there (calibrator)."""

from poly.trt.builder import calibrator
from poly.trt.builder.calibrator import *  # noqa: F401,F403

__all__ = [*calibrator.__all__]
