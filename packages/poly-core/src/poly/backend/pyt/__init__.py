"""Polygraphy-compatible import path: `polygraphy.backend.pyt` becomes `poly.backend.pyt`.
The code lives in `poly.core.backend.pyt_runner`; this module only re-exports it. Importing it
needs no torch; creating a ``PytRunner`` does."""

from poly.core.backend.pyt_runner import *  # noqa: F401,F403
from poly.core.backend.pyt_runner import __all__  # noqa: F401
