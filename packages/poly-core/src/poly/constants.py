"""Polygraphy-compatible import path: `polygraphy.constants` becomes `poly.constants`. The code lives in
`poly.core.constants`; this module only re-exports it."""

from poly.core.constants import *  # noqa: F401,F403
from poly.core.constants import __all__  # noqa: F401
