import os
import subprocess
import sys

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
