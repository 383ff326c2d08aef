"""Polygraphy-compatible import path: `polygraphy.exception` becomes `poly.exception`. The code lives in
`poly.core.exception`; this module only re-exports it."""

from poly.core.exception import *  # noqa: F401,F403
from poly.core.exception import __all__  # noqa: F401

#: Polygraphy's name for the same exception, so `except PolygraphyException` keeps working.
PolygraphyException = PolyException  # noqa: F405
