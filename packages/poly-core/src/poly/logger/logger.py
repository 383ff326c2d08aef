"""Polygraphy-compatible import path `poly.logger.logger`. The code lives in `poly.core.logging.logger`;
this module only re-exports it."""

from poly.core.logging.logger import *  # noqa: F401,F403
from poly.core.logging.logger import __all__  # noqa: F401
