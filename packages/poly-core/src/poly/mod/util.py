"""Polygraphy-compatible import path `poly.mod.util`. The code lives in `poly.core.util.versions`;
this module only re-exports it."""

from poly.core.util.versions import *  # noqa: F401,F403
from poly.core.util.versions import __all__  # noqa: F401
