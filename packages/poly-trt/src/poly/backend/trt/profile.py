"""Polygraphy-compatible import path `poly.backend.trt.profile`: re-exports the `poly.trt` modules that hold
what Polygraphy keeps there (profile)."""

from poly.trt.builder import profile
from poly.trt.builder.profile import *  # noqa: F401,F403

__all__ = [*profile.__all__]
