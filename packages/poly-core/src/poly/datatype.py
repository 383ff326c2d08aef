"""Polygraphy-compatible import path: `polygraphy.datatype` becomes `poly.datatype`. The code lives in
`poly.core.arrays.datatype`; this module only re-exports it."""

from poly.core.arrays.datatype import *  # noqa: F401,F403
from poly.core.arrays.datatype import __all__  # noqa: F401
