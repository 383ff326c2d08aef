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


def test_polygraphy_comparator_paths_re_export_the_same_objects():
    import importlib

    import poly.compare as pc
    from poly.compare import funcs, io, postprocess, results, verdicts

    sources = {
        "poly.comparator": [pc],
        "poly.comparator.compare": [funcs, verdicts],
        "poly.comparator.struct": [results, verdicts.accuracy],
        "poly.comparator.data_loader": [io],
        "poly.comparator.postprocess": [postprocess],
    }
    for path, modules in sources.items():
        shim = importlib.import_module(path)
        expected = [name for module in modules for name in module.__all__]
        assert list(shim.__all__) == expected, path
        for module in modules:
            for name in module.__all__:
                assert getattr(shim, name) is getattr(module, name), f"{path}.{name}"
    # the names Polygraphy users import from these paths
    from poly.comparator.compare import CompareFunc, OutputCompareResult
    from poly.comparator.data_loader import DataLoader, DataLoaderCache
    from poly.comparator.struct import AccuracyResult, RunResults

    assert (CompareFunc, OutputCompareResult, DataLoader, DataLoaderCache, AccuracyResult, RunResults) == (
        pc.CompareFunc, pc.OutputCompareResult, pc.DataLoader, pc.DataLoaderCache, pc.AccuracyResult, pc.RunResults,
    )
