"""Polygraphy-compatible import path `poly.backend.trt.algorithm_selector`: re-exports the `poly.trt` modules that hold
what Polygraphy keeps there (tactic_selectors, tactics)."""

from poly.trt.builder import tactic_selectors, tactics
from poly.trt.builder.tactic_selectors import *  # noqa: F401,F403
from poly.trt.builder.tactics import *  # noqa: F401,F403

__all__ = [*tactic_selectors.__all__, *tactics.__all__]
