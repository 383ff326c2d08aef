"""poly.onnx's concept folders (model/, surgery/, runners/, lint/, multi_device/, plugins/): each
folder's ``__init__`` re-exports its modules' public names as the same objects, and every public
name of poly.onnx is the object a module of one of these folders owns."""

import importlib
import pkgutil

import pytest

import poly.onnx

FOLDERS = ["model", "surgery", "runners", "lint", "multi_device", "plugins"]


def _modules(folder):
    package = importlib.import_module(f"poly.onnx.{folder}")
    return package, [importlib.import_module(info.name)
                     for info in pkgutil.iter_modules(package.__path__, prefix=package.__name__ + ".")]


@pytest.mark.parametrize("folder", FOLDERS)
def test_a_folder_re_exports_its_modules_public_names(folder):
    package, modules = _modules(folder)
    assert modules, folder
    owned = {name: module for module in modules for name in module.__all__}
    assert set(package.__all__) <= set(owned)
    for name in package.__all__:
        assert getattr(package, name) is getattr(owned[name], name), (folder, name)


def test_every_public_name_of_poly_onnx_lives_in_a_folder():
    homes = {}
    for folder in FOLDERS:
        for module in _modules(folder)[1]:
            for name in module.__all__:
                homes[name] = module
    missing = [name for name in poly.onnx.__all__ if name not in homes]
    assert missing == []
    for name in poly.onnx.__all__:
        assert getattr(poly.onnx, name) is getattr(homes[name], name), name

