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


def test_host_comparisons_leave_the_on_device_statistics_unimported():
    # poly.compare.stats.gpu (kernel sources, NVRTC, its cache) is imported for CUDA arrays only
    code = (
        "import sys\n"
        "import numpy as np\n"
        "import poly.compare as pc\n"
        "assert 'numpy' in sys.modules and 'poly.compare.stats.gpu' not in sys.modules\n"
        "a = np.arange(6, dtype=np.float32).reshape(2, 3)\n"
        "stats = pc.error_stats(a, a + 1e-7)\n"
        "results = [pc.IterationResult({'y': a}, runner_name='r0'), pc.IterationResult({'y': a * 1.5}, runner_name='r1')]\n"
        "for func in (pc.CompareFunc.simple(), pc.CompareFunc.distance_metrics()):\n"
        "    func(results[0], results[0]); func(results[0], results[1])\n"
        "print(stats.absdiff.max < 1e-6, sorted(m for m in sys.modules if m.startswith('poly.compare.stats.gpu')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[-2] == "True []", out
    # and the gate is the same as the on-device path's own: host arrays never go there
    import numpy as np

    from poly.compare.stats.on_device import is_device_output, may_compare_on_device

    host = np.zeros(3, np.float32)
    assert not may_compare_on_device(host, host) and not is_device_output(host)

    class CudaLike:  # what the on-device path takes: an object with __cuda_array_interface__
        __cuda_array_interface__ = {"shape": (3,), "typestr": "<f4", "data": (0, False), "version": 3}

    assert may_compare_on_device(CudaLike(), CudaLike()) and not may_compare_on_device(CudaLike(), host)
