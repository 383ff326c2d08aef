"""Polygraphy-compatible import path: `polygraphy.backend.base` becomes `poly.backend.base`.
The code lives in `poly.core.loader` and `poly.core.runner`; this module only re-exports them."""

from poly.core import loader, runner
from poly.core.loader import *  # noqa: F401,F403
from poly.core.runner import *  # noqa: F401,F403

__all__ = [*loader.__all__, *runner.__all__]
