"""Polygraphy-compatible import path: `polygraphy.json` becomes `poly.json`. The code lives in
`poly.core.json`; this module only re-exports it."""

from poly.core.json import *  # noqa: F401,F403
from poly.core.json import __all__  # noqa: F401
