"""Polygraphy-compatible import path `poly.mod.exporter`. The code lives in `poly.core.util.exporter`;
this module only re-exports it."""

from poly.core.util.exporter import *  # noqa: F401,F403
from poly.core.util.exporter import __all__  # noqa: F401
