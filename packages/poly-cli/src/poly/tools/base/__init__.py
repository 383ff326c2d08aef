"""Polygraphy-compatible import path `poly.tools.base`. Only re-exports `poly.tools.base.tool`."""

from poly.tools.base.tool import *  # noqa: F401,F403
from poly.tools.base.tool import __all__  # noqa: F401
