"""Polygraphy-compatible import path `poly.common.interface`: re-exports `poly.core.typed_containers`."""

from poly.core.typed_containers import *  # noqa: F401,F403
from poly.core.typed_containers import __all__  # noqa: F401
