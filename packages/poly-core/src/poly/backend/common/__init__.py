"""Polygraphy-compatible import path: `polygraphy.backend.common` becomes `poly.backend.common`.
Only re-exports `poly.backend.common.loader`."""

from poly.backend.common.loader import *  # noqa: F401,F403
from poly.backend.common.loader import __all__  # noqa: F401
