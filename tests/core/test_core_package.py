import os
import subprocess
import sys

import pytest

import poly.core
from poly.core import constants


def test_constants():
    assert constants.MARK_ALL == poly.core.MARK_ALL == "mark-all"
    assert constants.DEFAULT_SHAPE_VALUE == 1
    assert constants.DEFAULT_SEED == 1
    assert constants.TAB == "    "
    assert constants.TYPE_MARKER == "polygraphy_class"


def test_exceptions():
    assert issubclass(poly.core.DataFormatError, poly.core.PolyException)
    assert issubclass(poly.core.DataFormatError, ValueError)
    assert issubclass(poly.core.DataTypeConversionException, poly.core.PolyException)


def test_public_names_are_exported():
    for name in poly.core.__all__:
        assert hasattr(poly.core, name), name


def test_poly_is_a_namespace_package():
    import poly

    assert getattr(poly, "__file__", None) is None
    src = os.path.dirname(os.path.dirname(os.path.dirname(poly.core.__file__)))
    assert not os.path.exists(os.path.join(src, "poly", "__init__.py"))


def test_import_pulls_in_no_heavy_modules():
    script = (
        "import sys, poly.core\n"
        "heavy = [m for m in ('onnx', 'onnxruntime', 'tensorrt', 'tensorrt_rtx', 'torch', 'ml_dtypes', 'matplotlib')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


def _fresh(script):
    """Runs ``script`` in a fresh interpreter (nothing imported yet) and returns its stdout."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True).stdout


def test_constants_import_no_numpy_and_no_other_submodule():
    # `from poly import constants` and `import poly.core.constants`: poly.core's names come on first use
    out = _fresh(
        "import sys\n"
        "from poly import constants\n"
        "import poly.core.constants\n"
        "assert constants.MARK_ALL == 'mark-all'\n"
        "assert 'numpy' not in sys.modules, 'numpy imported'\n"
        "print(sorted(m for m in sys.modules if m.startswith('poly.')))\n"
    )
    assert eval(out) == ["poly.constants", "poly.core", "poly.core.config", "poly.core.constants", "poly.core.logging",
                         "poly.core.logging.exception", "poly.core.optional_import"]


def test_names_resolve_on_first_use_to_their_modules_objects():
    # every name of __all__, in a fresh process, is the object of the module its TYPE_CHECKING import names
    import ast

    tree = ast.parse(open(poly.core.__file__).read())
    block = next(node for node in tree.body if isinstance(node, ast.If))
    pairs = [(alias.name, node.module) for node in block.body for alias in node.names]
    assert sorted(name for name, _ in pairs) == sorted(poly.core.__all__)
    out = _fresh(
        "import importlib, sys\n"
        "import poly.core\n"
        "assert 'numpy' not in sys.modules\n"
        f"for name, module in {pairs!r}:\n"
        "    if module == 'poly.core':  # `from poly.core import constants`: the submodule\n"
        "        expected = importlib.import_module('poly.core.' + name)\n"
        "    else:\n"
        "        expected = getattr(importlib.import_module(module), name)\n"
        "    assert getattr(poly.core, name) is expected, name\n"
        "    assert vars(poly.core)[name] is expected, name  # stored: the next read costs nothing\n"
        "print('ok')\n"
    )
    assert out.strip() == "ok"


def test_lazy_names_are_the_same_objects_as_their_modules():
    import poly.core.arrays.datatype
    import poly.core.json
    import poly.core.logging.logger
    import poly.core.tensors.metadata

    assert poly.core.DataType is poly.core.arrays.datatype.DataType
    assert poly.core.G_LOGGER is poly.core.logging.logger.G_LOGGER
    assert poly.core.save_json is poly.core.json.save_json
    assert poly.core.TensorMetadata is poly.core.tensors.metadata.TensorMetadata
    assert poly.core.constants is constants
    from poly.core import DataType as imported

    assert imported is poly.core.arrays.datatype.DataType


def test_dir_lists_every_public_name_and_unknown_names_raise():
    listed = dir(poly.core)
    assert set(poly.core.__all__) <= set(listed)
    assert listed == sorted(listed)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        _ = poly.core.no_such_name
    assert not hasattr(poly.core, "__wrapped__")  # protocol lookups import nothing and fail cleanly


def test_a_submodule_not_yet_imported_reads_as_an_attribute():
    # as when the eager __init__ had imported them: `import poly.core; poly.core.json.save_json`
    out = _fresh("import poly.core\nprint(poly.core.json.__name__, poly.core.files.__name__, poly.core.json.save_json.__name__)\n")
    assert out.split() == ["poly.core.json", "poly.core.files", "save_json"]
