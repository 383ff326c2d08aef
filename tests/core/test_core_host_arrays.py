"""
``poly.core.arrays.host.host_array`` and what is built on it: torch tensors, CuPy arrays,
``__cuda_array_interface__`` and ``__dlpack__`` objects are accepted wherever NumPy arrays go
(error statistics, every CompareFunc, top-k postprocessing, JSON). Stand-ins implementing the
interfaces run here; the real-PyTorch/CuPy tests skip unless those are installed (the GPU machine
runs them through tools/run_device_tests.sh).
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import poly.compare as pc
from poly.compare import CompareFunc, PostprocessFunc, error_stats
from poly.compare.results import IterationResult
from poly.core import PolyException
from poly.core.arrays.host import host_array, is_cupy, is_device_array


class _Device:
    def __init__(self, type_):
        self.type = type_


class _FakeTensor:
    """Implements the part of torch.Tensor that host_array uses (detach/cpu/numpy/view)."""

    def __init__(self, array, device="cuda", dtype=None):
        self._array = np.ascontiguousarray(array)
        self.device = _Device(device)
        self.dtype = dtype or f"torch.{self._array.dtype.name}"
        self.copies_to_host = 0

    def detach(self):
        return self

    def cpu(self):
        self.copies_to_host += 1
        return _FakeTensor(self._array, "cpu", self.dtype)

    def contiguous(self):
        return self

    def view(self, dtype):
        return _FakeTensor(self._array.view(dtype), self.device.type)

    def numpy(self):
        if self.device.type != "cpu":
            raise TypeError("can't convert cuda:0 device type tensor to numpy")
        return self._array


_FakeTensor.__module__ = "torch"
_FakeTensor.__name__ = _FakeTensor.__qualname__ = "Tensor"


class _FakeCupyArray:
    def __init__(self, array):
        self._array = array

    def get(self):
        return self._array.copy()

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed (CuPy)")


_FakeCupyArray.__module__ = "cupy._core.core"


class _FakeCudaArray:
    def __init__(self, shape, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "data": (0x1000, False),
                                         "strides": strides, "version": 3}


class _FakeDlpack:
    def __init__(self, array, device=1):
        self._array, self._device = array, device

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (self._device, 0)


def test_numpy_is_returned_as_is():
    arr = np.arange(4.0)
    assert host_array(arr) is arr


def test_cuda_tensor_is_copied_to_host():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    tensor = _FakeTensor(arr)
    assert is_device_array(tensor)
    out = host_array(tensor)
    assert tensor.copies_to_host == 1
    np.testing.assert_array_equal(out, arr)


def test_cpu_tensor_shares_memory():
    arr = np.arange(3, dtype=np.int64)
    tensor = _FakeTensor(arr, device="cpu")
    assert not is_device_array(tensor)
    assert np.shares_memory(host_array(tensor), arr)


def test_bfloat16_tensor_becomes_ml_dtypes_bfloat16(monkeypatch):
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
    values = np.array([1.5, -2.0, 0.25], ml_dtypes.bfloat16)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(int16=np.int16))
    tensor = _FakeTensor(values.view(np.int16), dtype="torch.bfloat16")
    out = host_array(tensor)
    assert out.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out.astype(np.float32), [1.5, -2.0, 0.25])


def test_cupy_array_is_fetched():
    arr = np.arange(5, dtype=np.int32)
    cp_arr = _FakeCupyArray(arr)
    assert is_cupy(cp_arr) and is_device_array(cp_arr)
    np.testing.assert_array_equal(host_array(cp_arr), arr)


def test_cuda_array_interface_needs_cuda_here():
    with pytest.raises(PolyException):  # no GPU on this machine: a clear poly error, no TypeError
        host_array(_FakeCudaArray((2, 2)))


def test_device_view_needs_cuda_here():
    from poly.core.cuda.device_arrays import DeviceView

    view = DeviceView(0x1000, (2,), np.float32)
    assert is_device_array(view)
    with pytest.raises(PolyException, match="Cannot copy a DeviceView from the GPU"):
        host_array(view)


def test_non_contiguous_cuda_array_is_refused():
    with pytest.raises(PolyException, match="non-contiguous"):
        host_array(_FakeCudaArray((2, 2), strides=(4, 8)))


def test_empty_cuda_array_needs_no_copy():
    out = host_array(_FakeCudaArray((0, 3)))
    assert out.shape == (0, 3) and out.dtype == np.float32


def test_cpu_dlpack_object():
    arr = np.arange(4, dtype=np.float64)
    np.testing.assert_array_equal(host_array(_FakeDlpack(arr)), arr)


def test_gpu_dlpack_object_without_cuda_interface_is_refused():
    with pytest.raises(PolyException, match="DLPack device type 2"):
        host_array(_FakeDlpack(np.arange(4.0), device=2))


def _pair():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    return a, (a + rng.uniform(-1e-3, 1e-3, a.shape)).astype(np.float32)


@pytest.mark.parametrize("wrap", [_FakeTensor, _FakeCupyArray, lambda a: _FakeTensor(a, device="cpu")])
def test_error_stats_and_compare_funcs_accept_device_objects(wrap):
    a, b = _pair()
    expected = error_stats(a, b)
    got = error_stats(wrap(a), wrap(b))
    assert got.absdiff.max == expected.absdiff.max and got.mismatches == expected.mismatches

    funcs = [
        CompareFunc.simple(check_error_stat="mean", atol=1e-3), CompareFunc.simple(),
        CompareFunc.indices(), pc.L2CompareFunc(l2_threshold=1e-2), pc.CosineSimilarityCompareFunc(),
        pc.PsnrCompareFunc(), pc.SnrCompareFunc(),
    ]
    for func in funcs:
        on_host = func(IterationResult({"x": a}, runner_name="r0"), IterationResult({"x": b}, runner_name="r1"))
        wrapped = func(IterationResult({"x": wrap(a)}, runner_name="r0"),
                       IterationResult({"x": wrap(b)}, runner_name="r1"))
        assert bool(wrapped["x"]) == bool(on_host["x"]), type(func).__name__
        if hasattr(on_host["x"], "max_absdiff"):
            assert wrapped["x"].max_absdiff == on_host["x"].max_absdiff


def test_top_k_accepts_a_cuda_tensor():
    arr = np.array([[0.1, 0.7, 0.2]], np.float32)
    result = PostprocessFunc.top_k(k=2)(IterationResult({"x": _FakeTensor(arr)}, runner_name="r"))
    np.testing.assert_array_equal(np.asarray(result["x"]), [[1, 2]])


# -- real PyTorch and CuPy (the GPU machine has both) -------------------------------------------


def _torch():
    return pytest.importorskip("torch", reason="torch is not installed")


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype_name", ["float32", "float16", "bfloat16", "int32", "bool"])
def test_real_torch_tensors_compare_like_numpy(device, dtype_name):
    torch = _torch()
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device is available to PyTorch")
    pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
    a32, b32 = _pair()
    ta = torch.from_numpy(a32 * 4).to(getattr(torch, dtype_name)).to(device)
    tb = torch.from_numpy(b32 * 4).to(getattr(torch, dtype_name)).to(device)
    ha, hb = host_array(ta), host_array(tb)
    assert isinstance(ha, np.ndarray) and ha.shape == tuple(ta.shape)
    np.testing.assert_array_equal(ha.astype(np.float32), ta.float().cpu().numpy())
    func = CompareFunc.simple(check_error_stat="max", atol=1e-2)
    on_device = func(IterationResult({"x": ta}, runner_name="r0"), IterationResult({"x": tb}, runner_name="r1"))
    on_host = func(IterationResult({"x": ha}, runner_name="r0"), IterationResult({"x": hb}, runner_name="r1"))
    assert bool(on_device["x"]) == bool(on_host["x"])
    assert on_device["x"].max_absdiff == on_host["x"].max_absdiff


def test_real_torch_tensor_json_round_trip_and_polygraphy_interop():
    torch = _torch()
    from poly.core.json import from_json, to_json

    tensor = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    encoded = to_json({"t": tensor})
    assert '"polygraphy_class": "Tensor"' in encoded
    assert torch.equal(from_json(encoded)["t"], tensor)
    pg_json = pytest.importorskip("polygraphy.json", reason="Polygraphy is not installed")
    assert torch.equal(pg_json.from_json(encoded)["t"], tensor)
    assert torch.equal(from_json(pg_json.to_json({"t": tensor}))["t"], tensor)


def test_real_cupy_arrays_compare_like_numpy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    a, b = _pair()
    stats = error_stats(cupy.asarray(a), cupy.asarray(b))
    assert stats.absdiff.max == error_stats(a, b).absdiff.max
    func = CompareFunc.simple()
    res = func(IterationResult({"x": cupy.asarray(a)}), IterationResult({"x": cupy.asarray(b)}))
    assert bool(res["x"]) == bool(func(IterationResult({"x": a}), IterationResult({"x": b}))["x"])


def test_json_writes_tensors_as_polygraphy_does_and_loads_them_without_running_code(monkeypatch):
    import poly.core.json as poly_json

    calls = {}

    def save(tensor, file):
        file.write(tensor._array.tobytes())

    def load(file, weights_only=False):
        calls["weights_only"] = weights_only
        return np.frombuffer(file.read(), np.float32)

    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(save=save, load=load))
    poly_json.torch.reset()
    try:
        encoded = poly_json.to_json({"t": _FakeTensor(np.arange(3, dtype=np.float32), device="cpu")})
        assert '"polygraphy_class": "Tensor"' in encoded and '"tensor": ' in encoded
        np.testing.assert_array_equal(poly_json.from_json(encoded)["t"], [0, 1, 2])
        assert calls["weights_only"] is True  # torch's restricted loader: no code runs
    finally:
        poly_json.torch.reset()


def test_json_tensor_without_torch_is_one_clear_error():
    import poly.core.json as poly_json

    if poly_json.torch.is_available():
        pytest.skip("torch is installed here")
    with pytest.raises(PolyException, match="(?i)torch") as info:
        poly_json.from_json('{"t": {"tensor": "AAAA", "polygraphy_class": "Tensor"}}')
    assert "Tensor" in str(info.value) and "\n" not in str(info.value).strip()


@pytest.mark.parametrize("wrap", [_FakeTensor, _FakeCupyArray])
def test_comparator_compares_and_validates_device_outputs(wrap):
    from poly.compare import Comparator, RunResults

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for b, expected in ((a + 1e-6, True), (a + 1.0, False)):
        results = RunResults([("r0", [IterationResult({"x": wrap(a)}, runner_name="r0")]),
                              ("r1", [IterationResult({"x": wrap(b)}, runner_name="r1")])])
        assert bool(Comparator.compare_accuracy(results, compare_func=CompareFunc.simple())) is expected
    nan = a.copy()
    nan[0, 1] = np.nan
    assert Comparator.validate(RunResults([("r0", [IterationResult({"x": wrap(a)}, runner_name="r0")])]))
    assert not Comparator.validate(RunResults([("r0", [IterationResult({"x": wrap(nan)}, runner_name="r0")])]))
