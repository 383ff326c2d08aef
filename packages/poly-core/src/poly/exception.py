"""Polygraphy-compatible import path: `polygraphy.exception` becomes `poly.exception`. The code lives in
`poly.core.exception`; this module only re-exports it, plus Polygraphy's name for `PolyException`."""

from poly.core import exception
from poly.core.exception import *  # noqa: F401,F403

#: Polygraphy's name for the same exception, so `except PolygraphyException` keeps working.
PolygraphyException = PolyException  # noqa: F405

__all__ = [*exception.__all__, "PolygraphyException"]
