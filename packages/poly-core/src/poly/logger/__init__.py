"""Polygraphy-compatible import path: `polygraphy.logger` becomes `poly.logger`. Only re-exports
`poly.logger.logger`."""

from poly.logger.logger import *  # noqa: F401,F403
from poly.logger.logger import __all__  # type: ignore[attr-defined]  # noqa: F401
