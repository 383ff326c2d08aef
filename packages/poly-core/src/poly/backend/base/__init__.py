"""Polygraphy-compatible import path: `polygraphy.backend.base` becomes `poly.backend.base`.
The code lives in `poly.core`; this module only re-exports it."""

from poly.core.loader import BaseLoader
from poly.core.runner import BaseRunner

__all__ = ["BaseLoader", "BaseRunner"]
