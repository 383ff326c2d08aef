"""Polygraphy-compatible import path: `polygraphy.tools` becomes `poly.tools`. Only re-exports
`poly.tools.base`."""

from poly.tools.base import *  # noqa: F401,F403
from poly.tools.base import __all__  # noqa: F401
