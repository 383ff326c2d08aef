"""Polygraphy-compatible import path: `polygraphy.backend.base` becomes `poly.backend.base`.
The code lives in `poly.core.backend.loader` and `poly.core.backend.runner`; this module only
re-exports them."""

from poly.core.backend import loader, runner
from poly.core.backend.loader import *  # noqa: F401,F403
from poly.core.backend.runner import *  # noqa: F401,F403

__all__ = [*loader.__all__, *runner.__all__]
