"""Polygraphy-compatible import path `poly.common.interface`: re-exports `poly.core.util.typed_containers`."""

from poly.core.util.typed_containers import *  # noqa: F401,F403
from poly.core.util.typed_containers import __all__  # noqa: F401
