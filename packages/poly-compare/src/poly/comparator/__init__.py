"""Polygraphy-compatible import path: ``polygraphy.comparator`` becomes ``poly.comparator``. The
code lives in ``poly.compare``; this package only re-exports it."""

from poly.compare import *  # noqa: F401,F403
from poly.compare import __all__  # noqa: F401
