"""Polygraphy-compatible import path: `polygraphy.common` becomes `poly.common`. Only re-exports
`poly.common.struct`, `poly.common.interface` and, as Polygraphy's does, `poly.exception`."""

from poly import exception
from poly.common import interface, struct
from poly.common.interface import *  # noqa: F401,F403
from poly.common.struct import *  # noqa: F401,F403
from poly.exception import *  # noqa: F401,F403

__all__ = [*struct.__all__, *interface.__all__, *exception.__all__]  # type: ignore[attr-defined]
