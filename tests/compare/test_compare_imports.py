"""`import poly.compare` stays light: no onnx, onnxruntime, tensorrt or matplotlib."""

import subprocess
import sys


def test_import_poly_compare_loads_no_heavy_module():
    code = (
        "import sys, poly.compare\n"
        "heavy = [m for m in ('onnx', 'onnxruntime', 'tensorrt', 'tensorrt_rtx', 'matplotlib', 'torch') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"import poly.compare pulled in: {out}"


def test_native_extension_is_the_compiled_one():
    from poly import _native

    assert _native.__file__.endswith((".so", ".pyd"))
    assert set(_native.DTYPE_CODES) >= {"bool", "float16", "bfloat16", "float32", "float64", "int64", "uint64"}
