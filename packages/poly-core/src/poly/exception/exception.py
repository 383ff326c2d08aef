"""Polygraphy-compatible import path `poly.exception.exception`. The code lives in
`poly.core.logging.exception`; this module re-exports it, plus Polygraphy's names of its types."""

from poly.core.logging import exception
from poly.core.logging.exception import *  # noqa: F401,F403

#: Polygraphy's name for the same exception, so `except PolygraphyException` keeps working.
PolygraphyException = PolyException  # noqa: F405
#: Polygraphy's name for the internal-invariant error (not a `PolygraphyException`, as there).
PolygraphyInternalException = PolyInternalException  # noqa: F405

__all__ = [*exception.__all__, "PolygraphyException", "PolygraphyInternalException"]
