"""Polygraphy-compatible import path: `polygraphy.tools.debug` becomes `poly.tools.debug`. Only
re-exports `poly.tools.debug.debug`."""

from poly.tools.debug.debug import *  # noqa: F401,F403
from poly.tools.debug.debug import __all__  # noqa: F401
