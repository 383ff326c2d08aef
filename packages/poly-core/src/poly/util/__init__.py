"""Polygraphy-compatible import path: `polygraphy.util` becomes `poly.util`. Only re-exports
`poly.util.util` and the `poly.util.array` module."""

from poly.util import array  # noqa: F401
from poly.util.util import *  # noqa: F401,F403
from poly.util.util import __all__  # noqa: F401
