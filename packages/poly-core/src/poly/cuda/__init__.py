"""Polygraphy-compatible import path: `polygraphy.cuda` becomes `poly.cuda`. Only re-exports
`poly.cuda.cuda`."""

from poly.cuda.cuda import *  # noqa: F401,F403
from poly.cuda.cuda import __all__  # type: ignore[attr-defined]  # noqa: F401
