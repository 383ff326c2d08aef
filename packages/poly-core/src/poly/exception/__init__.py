"""Polygraphy-compatible import path: `polygraphy.exception` becomes `poly.exception`. Only
re-exports `poly.exception.exception`."""

from poly.exception.exception import *  # noqa: F401,F403
from poly.exception.exception import __all__  # noqa: F401
