"""Polygraphy-compatible import path: `polygraphy.datatype` becomes `poly.datatype`. The code lives in
`poly.core.datatype`; this module only re-exports it."""

from poly.core.datatype import *  # noqa: F401,F403
from poly.core.datatype import __all__  # noqa: F401
