"""poly.trt's concept folders (networks/, builder/, engines/, execution/, inspection/): the
folder packages re-export nothing (their modules import across folders), and every public name
of poly.trt is the object one of their modules, or the two top-level ones, owns."""

import importlib
import pkgutil

import pytest

import poly.trt

FOLDERS = ["networks", "builder", "engines", "execution", "inspection"]
TOP_MODULES = ["poly.trt.tensorrt_module", "poly.trt.trt_logger"]


def _modules(folder):
    package = importlib.import_module(f"poly.trt.{folder}")
    return package, [importlib.import_module(info.name)
                     for info in pkgutil.iter_modules(package.__path__, prefix=package.__name__ + ".")]


@pytest.mark.parametrize("folder", FOLDERS)
def test_a_folder_package_holds_modules_and_exports_nothing(folder):
    package, modules = _modules(folder)
    assert modules, folder
    assert not hasattr(package, "__all__")
    assert package.__doc__ and package.__doc__.strip().startswith(f"poly.trt.{folder}:")


def test_every_public_name_of_poly_trt_is_the_object_its_module_owns():
    modules = [importlib.import_module(name) for name in TOP_MODULES]
    modules += [module for folder in FOLDERS for module in _modules(folder)[1]]
    homes = {name: module for module in modules for name in module.__all__}
    assert [name for name in poly.trt.__all__ if name not in homes] == []
    for name in poly.trt.__all__:
        assert getattr(poly.trt, name) is getattr(homes[name], name), name

