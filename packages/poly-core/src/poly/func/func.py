"""Polygraphy-compatible import path `poly.func.func`. The code lives in `poly.core.func`;
this module only re-exports it."""

from poly.core.func import *  # noqa: F401,F403
from poly.core.func import __all__  # noqa: F401
