"""Polygraphy-compatible import path `poly.mod.util`. The code lives in `poly.core.versions`;
this module only re-exports it."""

from poly.core.versions import *  # noqa: F401,F403
from poly.core.versions import __all__  # noqa: F401
