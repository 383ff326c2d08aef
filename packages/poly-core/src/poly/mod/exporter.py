"""Polygraphy-compatible import path `poly.mod.exporter`. The code lives in `poly.core.exporter`;
this module only re-exports it."""

from poly.core.exporter import *  # noqa: F401,F403
from poly.core.exporter import __all__  # noqa: F401
