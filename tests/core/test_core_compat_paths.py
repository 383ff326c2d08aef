"""Polygraphy's import paths work with `poly` in place of `polygraphy` (the seeds' code)."""

import importlib

import pytest

from poly import core


@pytest.mark.parametrize(
    "path, names",
    [
        ("poly.constants", ["MARK_ALL"]),
        ("poly.logger", ["G_LOGGER", "LogMode"]),
        ("poly.json", ["save_json", "load_json", "to_json", "from_json"]),
        ("poly.func", ["extend"]),
        ("poly.datatype", ["DataType"]),
        ("poly.exception", ["PolygraphyException", "PolyException"]),
        ("poly.backend.base", ["BaseRunner", "BaseLoader"]),
    ],
)
def test_polygraphy_paths_reexport_poly_core(path, names):
    mod = importlib.import_module(path)
    for name in names:
        obj = getattr(mod, name)
        assert obj is getattr(core, name, obj)


def test_same_objects_not_copies():
    from poly import constants
    from poly.exception import PolygraphyException
    from poly.logger import G_LOGGER

    assert G_LOGGER is core.G_LOGGER
    assert constants.MARK_ALL == "mark-all"
    assert PolygraphyException is core.PolyException
