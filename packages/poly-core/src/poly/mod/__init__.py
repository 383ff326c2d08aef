"""Polygraphy-compatible import path: `polygraphy.mod` becomes `poly.mod`. Only re-exports
`poly.mod.importer`, `poly.mod.exporter` and `poly.mod.util`."""

from poly.mod import exporter, importer, util
from poly.mod.exporter import *  # noqa: F401,F403
from poly.mod.importer import *  # noqa: F401,F403
from poly.mod.util import *  # noqa: F401,F403

__all__ = [*importer.__all__, *exporter.__all__, *util.__all__]  # type: ignore[attr-defined]
