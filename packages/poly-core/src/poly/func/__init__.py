"""Polygraphy-compatible import path: `polygraphy.func` becomes `poly.func`. Only re-exports
`poly.func.func`."""

from poly.func.func import *  # noqa: F401,F403
from poly.func.func import __all__  # type: ignore[attr-defined]  # noqa: F401
