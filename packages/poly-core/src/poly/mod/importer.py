"""Polygraphy-compatible import path `poly.mod.importer`: lazy imports and script imports, from
`poly.core.optional_import` and `poly.core.backend.scripts`."""

from poly.core.backend.scripts import import_from_script  # noqa: F401
from poly.core.optional_import import LazyModule, has_mod, has_module, lazy_import  # noqa: F401

__all__ = ["lazy_import", "has_mod", "has_module", "LazyModule", "import_from_script"]
