"""
Error statistics of CUDA arrays computed on their GPU (``poly.compare.stats.gpu``): every
``ErrorStats`` field equals the CPU engine's on the same data (exactly for extrema, indices,
counts and order statistics; sums within 1e-12 of their magnitude), for every dtype pair the
engine supports, NaN/Inf/ties/zeros, empty, one-element and strided inputs, CuPy arrays and
torch CUDA tensors; every CompareFunc gives the same verdict as on host copies, values exactly
on a tolerance included; and nothing is copied to the host on the way.

Needs an NVIDIA GPU, cuda-python's NVRTC and CuPy/PyTorch (the GPU machine runs it through
tools/run_device_tests.sh); the fallback test runs where NVRTC is missing.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import poly.compare as pc
from poly.compare import CompareFunc, error_stats
from poly.compare.results import IterationResult
from poly.compare.stats import gpu
from poly.core import G_LOGGER

GPU_REASON = "needs an NVIDIA GPU and cuda-python's NVRTC"


def _cupy():
    try:
        import cupy
    except ImportError:
        return None
    try:
        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:  # noqa: BLE001 - no driver or no device
        return None


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _nvrtc_ok() -> bool:
    try:
        from cuda.bindings import nvrtc

        return int(nvrtc.nvrtcVersion()[0]) == 0
    except Exception:  # noqa: BLE001 - module or library missing
        return False


cp = _cupy()
torch = _torch()
ON_GPU = (cp is not None or torch is not None) and _nvrtc_ok()
needs_gpu = pytest.mark.skipif(not ON_GPU, reason=GPU_REASON)
needs_cupy = pytest.mark.skipif(not ON_GPU or cp is None, reason=GPU_REASON + " (with CuPy)")
needs_torch = pytest.mark.skipif(not ON_GPU or torch is None, reason=GPU_REASON + " (with PyTorch CUDA)")

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

# every dtype with itself, and the mixed pairs that exercise each arithmetic (float32, float64,
# integer wrap-around in int32/int64/uint64, int32/int64 divisors, bool xor)
PAIRS = [(t, t) for t in ("bool", *INTS, *FLOATS)] + [
    ("float16", "float32"), ("bfloat16", "float32"), ("float16", "bfloat16"), ("float32", "float64"),
    ("bool", "float32"), ("float32", "bool"), ("int32", "float32"), ("float32", "int32"), ("float64", "int64"),
    ("int8", "uint8"), ("uint32", "int32"), ("int64", "int32"), ("int32", "int64"), ("uint8", "int64"),
    ("uint64", "bool"), ("int64", "uint64"), ("int16", "uint16"), ("bool", "int8"),
]


def _dtype(name: str) -> np.dtype:
    return BF16 if name == "bfloat16" else np.dtype(name)


def _data(name: str, n: int, rng: np.random.Generator, special: bool, base: np.ndarray | None = None) -> np.ndarray:
    """Random data of dtype ``name`` with ties and zeros (and NaN/Inf for floats when ``special``);
    near ``base`` when given, so that the comparison has small differences too."""
    dt = _dtype(name)
    if name == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if name in INTS:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
        x[: n // 2] = np.clip(rng.integers(-3, 4, n // 2), info.min, info.max).astype(dt)  # ties and zeros
        if n >= 4:
            x[1], x[2] = info.min, info.max  # the wrap-around cases
        return x
    x = rng.standard_normal(n) * 4.0
    if base is not None and (base.dtype.kind == "f" or base.dtype == BF16):
        x = base.astype(np.float64) + rng.standard_normal(n) * 1e-2
    x[::7] = x[0] if n else 0.0  # ties
    x[::11] = 0.0
    x[5::13] = -0.0
    if special and n >= 8:
        idx = rng.choice(n, size=max(3, n // 50), replace=False)
        x[idx[0::3]] = np.nan
        x[idx[1::3]] = np.inf
        x[idx[2::3]] = -np.inf
    return x.astype(dt)


def _to_device(arr: np.ndarray, framework: str):
    if framework == "torch" or arr.dtype == BF16:
        if arr.dtype == BF16:
            return torch.from_numpy(arr.view(np.int16).copy()).view(torch.bfloat16).cuda()
        return torch.from_numpy(np.ascontiguousarray(arr)).cuda()
    return cp.asarray(arr)


def _same(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or x == y


def _close(x: float, y: float, scale: float = 0.0) -> bool:
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y):
        return _same(x, y)
    return abs(x - y) <= 1e-12 * max(abs(x), abs(y), abs(scale)) + 1e-300


def assert_stats_equal(got, want):
    """Every field of two ErrorStats: exact where the engine is exact, sums within 1e-12."""
    assert got.shape == want.shape and got.size == want.size
    assert got.compute_dtype == want.compute_dtype
    assert got.mismatches == want.mismatches
    for name in ("a", "b"):
        g, w = getattr(got, name), getattr(want, name)
        for f in ("min", "max"):
            assert _same(getattr(g, f), getattr(w, f)), (name, f, getattr(g, f), getattr(w, f))
        assert (g.argmin, g.argmax, g.nan_count, g.inf_count) == (w.argmin, w.argmax, w.nan_count, w.inf_count), name
        for f, scale in (("mean", w.mean_abs), ("mean_abs", 0.0), ("mean_square", 0.0), ("var", w.mean_square),
                         ("std", math.sqrt(w.mean_square) if w.mean_square >= 0 else 0.0)):
            assert _close(getattr(g, f), getattr(w, f), scale), (name, f, getattr(g, f), getattr(w, f))
        assert _same(g.median, w.median), (name, "median", g.median, w.median)
    for name in ("absdiff", "reldiff"):
        g, w = getattr(got, name), getattr(want, name)
        for f in ("min", "max", "median"):
            assert _same(getattr(g, f), getattr(w, f)), (name, f, getattr(g, f), getattr(w, f))
        assert (g.argmin, g.argmax, g.nan_count, g.inf_count) == (w.argmin, w.argmax, w.nan_count, w.inf_count), name
        assert g.quantiles.keys() == w.quantiles.keys()
        for q in w.quantiles:
            assert _same(g.quantiles[q], w.quantiles[q]), (name, q, g.quantiles[q], w.quantiles[q])
        scale = max(abs(w.mean), abs(w.max) if math.isfinite(w.max) else 0.0)
        for f in ("mean", "var", "std"):
            assert _close(getattr(g, f), getattr(w, f), scale if f == "mean" else scale * scale if f == "var"
                          else scale), (name, f, getattr(g, f), getattr(w, f))
    for f in ("l2", "mse", "cosine"):
        assert _close(getattr(got, f), getattr(want, f), 1.0 if f == "cosine" else 0.0), (f, getattr(got, f),
                                                                                            getattr(want, f))
    for f in ("psnr", "snr"):
        g, w = getattr(got, f), getattr(want, f)
        assert _same(g, w) or abs(g - w) <= 1e-9 * max(1.0, abs(w)), (f, g, w)


@pytest.fixture(autouse=True)
def _no_graphs_from_other_tests():
    # a run's graph is keyed by its buffers' addresses, which the frameworks' pools hand out again:
    # each test starts with no graph kept and no run seen
    gpu.drop_run_graphs()
    yield
    gpu.drop_run_graphs()


@pytest.fixture
def launched(monkeypatch) -> list[str]:
    """The names of the kernels launched through ``DeviceRun.launch``, in order (clear it between
    comparisons). Repeated runs are not made into graphs here: a replay launches none of them."""
    from poly.compare.stats.gpu import device_run

    monkeypatch.setattr(device_run.DeviceRun, "capture_if_repeated", lambda self, key: False)
    names: list[str] = []
    launch = device_run.DeviceRun.launch
    monkeypatch.setattr(device_run.DeviceRun, "launch", lambda self, name, *a, **k: (names.append(name),
                                                                                   launch(self, name, *a, **k))[1])
    return names


QUANTILES = (0.0, 0.1, 0.5, 0.9, 0.95, 0.99, 1.0)


def _check_pair(a_np, b_np, a_dev, b_dev, **kw):
    want = error_stats(a_np, b_np, quantiles=QUANTILES, threads=1, **kw)
    got = error_stats(a_dev, b_dev, quantiles=QUANTILES, **kw)
    assert_stats_equal(got, want)


@needs_gpu
@pytest.mark.parametrize("special", [False, True], ids=["finite", "nan-inf"])
@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}-{p[1]}")
def test_every_dtype_pair_matches_the_cpu_engine(pair, special):
    if cp is None and not all(t == "bfloat16" for t in pair):
        pytest.skip(GPU_REASON + " (with CuPy)")
    if torch is None and "bfloat16" in pair:
        pytest.skip(GPU_REASON + " (bfloat16 needs PyTorch CUDA)")
    rng = np.random.default_rng(abs(hash(pair)) % 2**32 + special)
    framework = "torch" if "bfloat16" in pair else "cupy"
    for shape in ((0,), (1,), (37, 29)):
        n = math.prod(shape)
        a = _data(pair[0], n, rng, special).reshape(shape)
        b = _data(pair[1], n, rng, special, base=a.reshape(-1)).reshape(shape)
        _check_pair(a, b, _to_device(a, framework), _to_device(b, framework))
        if not special and pair[0] in FLOATS:
            _check_pair(a, b, _to_device(a, framework), _to_device(b, framework), infinities_compare_equal=True,
                        atol=1e-3, rtol=1e-2)


@needs_cupy
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_extrema_held_in_many_blocks_are_the_first_elements(dtype):
    # The statistics pass records an extremum by the sub-chunk holding it and reads again only the
    # sub-chunk each block keeps: with every stream's extreme values held by elements of many
    # blocks, at every place of a sub-chunk, and zeros of both signs as a's minimum, each index is
    # the first such element's and each value its own, as the CPU engine gives them.
    rng = np.random.default_rng(11)
    n = (1 << 20) + 3
    a = rng.uniform(1, 2, n)
    b = a + rng.uniform(-1e-2, 1e-2, n)
    places = rng.permutation(np.arange(1000, n))[:4 * 96].reshape(4, 96)
    first_zero = places[0].min()
    a[places[0]] = 0.0
    a[places[0][places[0] != first_zero][::2]] = -0.0
    a[first_zero] = -0.0  # a's minimum: the first zero, negative
    a[places[1]], b[places[1]] = 7.0, 1.0  # a's maximum, reldiff's maximum (6, exact in every dtype)
    a[places[2]], b[places[2]] = 2.0, 9.0  # b's maximum, absdiff's maximum (7)
    b[places[3]] = a[places[3]]  # absdiff's and reldiff's minimum: 0
    a, b = a.astype(dtype), b.astype(dtype)
    got = error_stats(cp.asarray(a), cp.asarray(b))
    want = error_stats(a, b, threads=1)
    assert (want.a.argmin, want.a.argmax, want.b.argmax) == ((first_zero,), (places[1].min(),), (places[2].min(),))
    assert (want.reldiff.argmax, want.absdiff.argmax) == ((places[1].min(),), (places[2].min(),))
    assert_stats_equal(got, want)
    for name in ("a", "b", "absdiff", "reldiff"):
        g, w = getattr(got, name), getattr(want, name)
        assert (g.argmin, g.argmax) == (w.argmin, w.argmax), name
        assert (math.copysign(1, g.min), math.copysign(1, g.max)) == (math.copysign(1, w.min), math.copysign(1, w.max)), name
    assert math.copysign(1, got.a.min) == -1.0


@needs_cupy
@pytest.mark.parametrize("pair", [("float32", "float32"), ("float16", "float32"), ("float64", "float64"),
                                  ("int64", "int64"), ("uint8", "int32")], ids=lambda p: f"{p[0]}-{p[1]}")
def test_strided_views_match_the_cpu_engine(pair):
    rng = np.random.default_rng(7)
    a = _data(pair[0], 60 * 50, rng, False).reshape(60, 50)
    b = _data(pair[1], 60 * 50, rng, False, base=a.reshape(-1)).reshape(60, 50)
    da, db = cp.asarray(a), cp.asarray(b)
    for view in (lambda x: x[::2, 1::3], lambda x: x.T, lambda x: x[::-1, 5:45]):
        va, vb = view(a), view(b)
        _check_pair(va, vb, view(da), view(db))
    _check_pair(a[::3, ::2], b[:20, :25], da[::3, ::2], cp.ascontiguousarray(db[:20, :25]))


def _numpy_diffs(a: np.ndarray, b: np.ndarray, f32: bool) -> tuple[np.ndarray, np.ndarray]:
    """absdiff and reldiff as the engine forms them (float32 arithmetic for narrow float pairs,
    integer wrap-around for int32/int64 pairs, |INT_MIN| kept negative in the divisor), as float64."""
    with np.errstate(all="ignore"):
        if f32:
            x, y = a.astype(np.float32), b.astype(np.float32)
            ad = np.abs(x - y)
            rd = ad / np.where(y == 0, np.float32(np.finfo(np.float64).eps), np.abs(y))
            return ad.astype(np.float64), rd.astype(np.float64)
        ad = np.abs(a - b).astype(np.float64)  # same-type integer pairs wrap as NumPy's (Polygraphy's) do
        den = np.abs(b).astype(np.float64)
        return ad, ad / np.where(b == 0, np.finfo(np.float64).eps, den)


def _assert_matches_numpy(got, x: np.ndarray, y: np.ndarray):
    """Every field of ``got`` against NumPy on the same data (finite inputs)."""
    f32 = got.compute_dtype == "float32"
    ad, rd = _numpy_diffs(x, y, f32)
    n = x.size
    for name, v in (("a", x.astype(np.float64)), ("b", y.astype(np.float64)), ("absdiff", ad), ("reldiff", rd)):
        s = getattr(got, name)
        assert (s.min, s.max, s.argmin, s.argmax) == (v.min(), v.max(), (int(v.argmin()),), (int(v.argmax()),)), name
        assert (s.nan_count, s.inf_count) == (0, 0), name
        assert _same(s.median, float(np.median(v))), (name, s.median, float(np.median(v)))
        scale = float(np.abs(v).max())
        assert _close(s.mean, float(np.mean(v)), scale), (name, s.mean, float(np.mean(v)))
        assert _close(s.var, float(np.var(v)), scale * scale), (name, s.var, float(np.var(v)))
        if name in ("absdiff", "reldiff"):
            for q in QUANTILES:
                assert _same(s.quantiles[q], float(np.quantile(v, q))), (name, q)
        else:
            assert _close(s.mean_abs, float(np.mean(np.abs(v))), scale), name
            assert _close(s.mean_square, float(np.mean(v * v)), scale * scale), name
    atol = float(np.float32(1e-5)) if f32 else 1e-5
    assert got.mismatches == int(np.count_nonzero(~(ad <= atol) & ~(rd <= atol)))
    xs, ys = x.astype(np.float64), y.astype(np.float64)
    sq = float(np.sum(ad * ad))
    assert _close(got.l2, math.sqrt(sq)) and _close(got.mse, sq / n)
    na, nb = math.sqrt(float(np.sum(xs * xs))), math.sqrt(float(np.sum(ys * ys)))
    cosine = 1.0 if na == 0 and nb == 0 else 0.0 if na == 0 or nb == 0 else float(np.sum(xs * ys)) / (na * nb)
    assert _close(got.cosine, cosine, 1.0)
    if sq == 0:
        assert got.psnr == got.snr == math.inf
    else:
        peak = max(abs(float(ys.min())), abs(float(ys.max()))) or 1.0
        assert abs(got.psnr - (20 * math.log10(peak) - 10 * math.log10(sq / n))) <= 1e-9 * max(1.0, abs(got.psnr))


@needs_cupy
@pytest.mark.parametrize("pair", [("float32", "float32"), ("float16", "float32"), ("float64", "float64"),
                                  ("int64", "int64"), ("int32", "int32")], ids=lambda p: f"{p[0]}-{p[1]}")
def test_large_inputs_take_every_radix_pass(pair, monkeypatch):
    # The host-driven select of larger inputs (the device-side select turned off): the first digit
    # counted in the statistics pass, then a gather and radix passes over the gathered keys.
    # Checked against NumPy on the difference arrays.
    from poly.compare.stats.gpu import order_select

    monkeypatch.setattr(order_select, "SELECT_MAX_READS", 0)
    rng = np.random.default_rng(11)
    n = 700_001
    a = _data(pair[0], n, rng, False)
    b = _data(pair[1], n, rng, False, base=a)
    ties = np.zeros(n, dtype=_dtype(pair[0]))  # two values, one of them nearly everywhere: one bin all the way down
    ties[::1000] = 1
    for x, y in ((a, b), (ties, np.zeros(n, dtype=_dtype(pair[1])))):
        got = error_stats(cp.asarray(x), cp.asarray(y), atol=1e-5, rtol=1e-5, quantiles=QUANTILES)
        _assert_matches_numpy(got, x, y)


SELECT_QUANTILES = (0.0, 0.5, 0.99, 1.0)  # with the median, 20 ranks at most: the device-side select's limit


@needs_cupy
@pytest.mark.parametrize("pair", [("float32", "float32"), ("float16", "float32"), ("float64", "float64"),
                                  ("int32", "int32"), ("int64", "int64"), ("uint8", "int32")],
                         ids=lambda p: f"{p[0]}-{p[1]}")
def test_mid_size_inputs_select_their_ranks_on_the_device(pair, launched):
    # Inputs up to SELECT_MAX_READS: after the statistics pass, passes over the input narrow every
    # rank on the device (no gather, no radix pass over gathered keys, no host pick), giving the
    # CPU engine's order statistics; ties, one element, NaN/Inf and strided views included.
    rng = np.random.default_rng(5)
    for n, kind in ((1, "noise"), (37 * 29, "noise"), (700_001, "noise"), (700_001, "ties"), (5000, "special"),
                    (6000, "strided")):
        a = _data(pair[0], n, rng, kind == "special")
        b = _data(pair[1], n, rng, kind == "special", base=a)
        if kind == "ties":
            a, b = np.zeros_like(a), np.zeros_like(b)
        da, db = cp.asarray(a), cp.asarray(b)
        if kind == "strided":
            a, b, da, db = a[::3], b[1::3], da[::3], db[1::3]
        launched.clear()
        got = error_stats(da, db, quantiles=SELECT_QUANTILES)
        ordered = list(launched)  # (a's and b's medians are computed later, when asked for)
        assert_stats_equal(got, error_stats(a, b, quantiles=SELECT_QUANTILES, threads=1))
        if n == 1:  # its element is every rank: the statistics pass's minimum and maximum, no select
            assert ordered == ["poly_stats", "poly_merge_parts"], ordered
        elif kind != "special":
            assert "poly_select_input" in ordered and "poly_radix_gather" not in ordered, (n, kind, ordered)


@needs_cupy
def test_one_pass_selects_on_the_device_whatever_the_size(launched, monkeypatch):
    # Where one select pass finds both digits left of float32 keys, the device-side select serves
    # any size (a gather pass reads the input as well); several passes (float64 keys) only up to
    # SELECT_MAX_READS elements read in all. Lowered here below one read of this input: the
    # float32 pair is selected on the device in one pass, the float64 pair the host-driven way.
    from poly.compare.stats.gpu import order_select

    n = (1 << 22) + 5  # (2 ranks: a pass's global counts, 8 MiB, are at most half what it reads)
    monkeypatch.setattr(order_select, "SELECT_MAX_READS", n // 4)
    rng = np.random.default_rng(41)
    x = rng.standard_normal(n)
    y = x + 1e-3 * rng.standard_normal(n)
    for dtype, on_device in (("float32", True), ("float64", False)):
        a, b = x.astype(dtype), y.astype(dtype)
        launched.clear()
        got = error_stats(cp.asarray(a), cp.asarray(b))
        assert launched.count("poly_select_input") == (1 if on_device else 0), (dtype, launched)
        assert any(k in launched for k in ("poly_radix_gather", "poly_radix_hist")) != on_device, (dtype, launched)
        assert_stats_equal(got, error_stats(a, b, threads=1))


@needs_cupy
@pytest.mark.parametrize("pair", [("float32", "float32"), ("float16", "float32"), ("bfloat16", "bfloat16")],
                         ids=lambda p: f"{p[0]}-{p[1]}")
def test_one_select_pass_counts_both_digits_left_of_float32_keys(pair, launched, monkeypatch):
    # Where its counts cost less than the pass they save (large inputs, few ranks), one select pass
    # counts the last 20 bits of float32 keys (the second digit in global memory) and descends
    # both; forced here on smaller inputs: the CPU engine's order statistics, from one pass.
    from poly.compare.stats.gpu import order_select

    monkeypatch.setattr(order_select, "_fine_pass", lambda run, targets, key_bits: key_bits == 32)
    rng = np.random.default_rng(31)
    for n, kind in ((1, "noise"), (700_001, "noise"), (700_000, "ties"), (5000, "special")):
        a = _data(pair[0], n, rng, kind == "special")
        b = _data(pair[1], n, rng, kind == "special", base=a)
        if kind == "ties":
            b = a.copy()
            b[::2] = 0
        launched.clear()
        got = error_stats(_to_device(a, "cupy"), _to_device(b, "cupy"), quantiles=SELECT_QUANTILES)
        assert_stats_equal(got, error_stats(a, b, quantiles=SELECT_QUANTILES, threads=1))
        if kind != "special":  # (one element is every rank: the statistics pass's minimum and maximum)
            assert launched.count("poly_select_input") == (n > 1), (n, kind, launched)


@needs_cupy
def test_device_select_with_more_groups_than_shared_histograms(launched, monkeypatch):
    # A select pass counts half as many groups as it has targets in shared memory (a rank and its
    # neighbour nearly always share one); values spread over 120 octaves put neighbouring ranks in
    # different groups, so that some groups count in global memory: the ranks are exact all the same.
    from poly.compare.stats.gpu import order_select
    from poly.compare.stats.gpu.kernel_source import SELECT_PER_SLOT, SELECT_TARGETS

    selected = []
    keys = order_select.DeviceSelect.keys  # (raises where a rank was left unresolved: the host then compares)
    monkeypatch.setattr(order_select.DeviceSelect, "keys", lambda self, state: selected.append(keys(self, state))
                        or selected[-1])
    rng = np.random.default_rng(23)
    n = 1000  # (every quantile between two ranks)
    a = (2.0 ** rng.uniform(-60, 60, n) * rng.choice([-1, 1], n)).astype(np.float32)
    b = (a + 2.0 ** rng.uniform(-60, 60, n) * rng.choice([-1, 1], n)).astype(np.float32)
    quantiles = (0.1, 0.3, 0.7, 0.9)  # with the median: 2 ranks each of 5 values of 2 streams
    targets = 2 * 2 * (1 + len(quantiles))
    assert targets <= SELECT_TARGETS
    groups = set()  # (stream, the key's top 12 bits) of every wanted rank: all values are >= 0
    absdiff = np.abs(a.astype(np.float64) - b.astype(np.float64)).astype(np.float32)
    for stream, values in ((2, absdiff), (3, (absdiff / np.abs(b)).astype(np.float32))):
        ordered = np.sort(values)
        for q in (0.5, *quantiles):
            for rank in (math.floor(q * (n - 1)), math.ceil(q * (n - 1))):
                groups.add((stream, int(ordered[rank:rank + 1].view(np.uint32)[0]) >> 20))
    assert len(groups) > -(-targets // SELECT_PER_SLOT), groups  # more groups than shared histograms
    got = error_stats(cp.asarray(a), cp.asarray(b), quantiles=quantiles)
    assert "poly_select_input" in launched and "poly_radix_gather" not in launched, launched
    assert len(selected) == 1 and len(selected[0]) == targets  # every rank's key found on the device
    assert_stats_equal(got, error_stats(a, b, quantiles=quantiles, threads=1))

_SELECT_KERNELS = ("poly_select_input", "poly_radix_hist", "poly_radix_gather", "poly_keys_hist", "poly_keys_collect")


@needs_cupy
@pytest.mark.parametrize("path", ["device select", "host-driven", "predicted ranges"])
@pytest.mark.parametrize("pair", [("float32", "float32"), ("float16", "float32"), ("float64", "float64"),
                                  ("int32", "int32")], ids=lambda p: f"{p[0]}-{p[1]}")
def test_a_stream_of_one_value_takes_its_ranks_from_the_statistics(pair, path, monkeypatch):
    # Two equal outputs (absdiff and reldiff 0 everywhere), or outputs one apart everywhere
    # (absdiff 1 everywhere, reldiff varied): a stream whose minimum is its maximum has that value
    # at every rank, from the statistics pass's record, with no select pass over the data for it.
    # The device-side select is run with its passes over the input dropped: its keys must all
    # come from the first descend (a rank left unresolved raises, and the host would compare).
    # With predicted ranges, the select on the ranges' keys is queued behind the statistics pass
    # before the record is known: it finds no rank of a stream of one value (the sample's ranges
    # would hold every key: that stream is left unpredicted), and its passes return at once.
    from poly.compare.stats.gpu import device_run, order_select

    launched, selected, ranged = [], [], []
    launch = device_run.DeviceRun.launch

    def spy(self, name, *args, **kwargs):
        launched.append(name)
        if not (path == "device select" and name == "poly_select_input" and drop_passes):
            launch(self, name, *args, **kwargs)

    monkeypatch.setattr(device_run.DeviceRun, "launch", spy)
    keys = order_select.DeviceSelect.keys
    monkeypatch.setattr(order_select.DeviceSelect, "keys", lambda self, state: selected.append(keys(self, state))
                        or selected[-1])
    range_keys = order_select.DeviceRangeSelect.keys
    monkeypatch.setattr(order_select.DeviceRangeSelect, "keys", lambda self, state: ranged.append(range_keys(self, state))
                        or ranged[-1])
    if path == "host-driven":
        monkeypatch.setattr(order_select, "SELECT_MAX_READS", 0)
    elif path == "predicted ranges":  # (a stream the sample finds of one value is not predicted: host-driven then)
        from poly.compare.stats.gpu import predicted_ranges

        monkeypatch.setattr(order_select, "MIN_ELEMENTS", 0)
        monkeypatch.setattr(order_select, "SELECT_MAX_READS", 0)
        monkeypatch.setattr(predicted_ranges, "LEARNED_BUDGETS", {})
    rng = np.random.default_rng(29)
    n = 300_007
    a = rng.integers(1, 1000, n).astype(_dtype(pair[0]))
    for b, one_value in ((a.astype(_dtype(pair[1])), (2, 3)), ((a + 1).astype(_dtype(pair[1])), (2,))):
        drop_passes = one_value == (2, 3)
        launched.clear()
        selected.clear()
        ranged.clear()
        got = error_stats(cp.asarray(a), cp.asarray(b), quantiles=SELECT_QUANTILES)
        after_stats = launched[launched.index("poly_merge_parts"):]  # (a's and b's medians come later, when asked for)
        assert_stats_equal(got, error_stats(a, b, quantiles=SELECT_QUANTILES, threads=1))
        assert got.absdiff.median == (0.0 if drop_passes else 1.0)
        if path == "device select":
            assert len(selected) == 1, launched  # every rank found on the device
        elif drop_passes:  # nothing selected over the data after the statistics pass
            assert not set(after_stats) & set(_SELECT_KERNELS), launched
            assert not any(ranged), ranged  # (no rank found in a range)
        else:  # (reldiff's ranks were selected: over its ranges' keys, or the input's)
            assert set(after_stats) & set(_SELECT_KERNELS) or any(ranged), launched
            assert not any(stream == 2 for found in ranged for stream, _ in found), ranged


@needs_cupy
@pytest.mark.parametrize("pair", [("float32", "float32"), ("float16", "float16"), ("float64", "float64"),
                                  ("int8", "int8")], ids=lambda p: f"{p[0]}-{p[1]}")
def test_zero_differences_divide_as_the_cpu_engine_does(pair):
    # absdiff 0 gives reldiff 0 / |b| without the division (whose fast path refuses a zero
    # dividend): +0 for every b, subnormal, zero, infinite (equal infinities compare equal) or
    # the integers' wrapping minimum, exactly as the CPU engine divides; mixed with nonzero ones.
    rng = np.random.default_rng(31)
    n = 4099
    dt = _dtype(pair[0])
    if dt.kind == "f":
        tiny = np.finfo(dt).smallest_subnormal
        b = (rng.standard_normal(n) * 3).astype(dt)
        b[::5] = tiny * rng.integers(1, 50, len(b[::5]))
        b[1::7], b[2::11], b[3::13], b[4::17] = 0.0, -0.0, np.inf, -np.inf
    else:
        b = rng.integers(-128, 128, n).astype(dt)
        b[::9] = np.iinfo(dt).min
    a = b.copy()
    a[::3] = (a[::3].astype(np.float64) + 1).astype(dt)  # a third nonzero differences
    for x, y in ((b, b.copy()), (a, b)):
        got = error_stats(cp.asarray(x), cp.asarray(y), quantiles=(0.25, 0.75), infinities_compare_equal=True)
        assert_stats_equal(got, error_stats(x, y, quantiles=(0.25, 0.75), infinities_compare_equal=True, threads=1))


@needs_cupy
@pytest.mark.parametrize("case", ["in range", "ranges too narrow", "regions too small"])
@pytest.mark.parametrize("pair", [("float32", "float32"), ("float16", "float32"), ("float64", "float64"),
                                  ("int32", "int32")], ids=lambda p: f"{p[0]}-{p[1]}")
def test_predicted_ranges_give_the_exact_order_statistics(pair, case, launched, monkeypatch):
    # The statistics pass gathers the keys of the ranges a sample predicts (on inputs of any size
    # here): the order statistics equal NumPy's whether every rank lies in its range (no gather
    # pass then), some do not (ranges allowed no spread), or the blocks' regions overflow.
    from poly.compare.stats.gpu import order_select, predicted_ranges

    monkeypatch.setattr(order_select, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(predicted_ranges, "MAX_FRACTION", 1)  # seven quantiles joined into four ranges are wide
    monkeypatch.setattr(predicted_ranges, "LEARNED_BUDGETS", {})
    if case == "ranges too narrow":
        monkeypatch.setattr(predicted_ranges, "SIGMAS", 0.0)
    elif case == "regions too small":
        monkeypatch.setattr(predicted_ranges, "REGION_SLACK", 0.0)
        monkeypatch.setattr(predicted_ranges, "REGION_EXTRA", 1)
    rng = np.random.default_rng(17)
    n = 1_000_003
    a = _data(pair[0], n, rng, False)
    b = _data(pair[1], n, rng, False, base=a)
    for _ in range(2):  # (ties at the wide ranges' ends: the second call's regions are sized for them)
        launched.clear()
        got = error_stats(cp.asarray(a), cp.asarray(b), atol=1e-5, rtol=1e-5, quantiles=QUANTILES)
        ordered = list(launched)  # (a's and b's medians are computed later, when asked for)
        _assert_matches_numpy(got, a, b)
        assert ordered[0] == "poly_sample"
    assert ("poly_radix_gather" in ordered) == (case != "in range"), ordered
    if case == "in range":  # every rank narrowed on the device behind the pass: no host-driven pass
        assert not {"poly_keys_hist", "poly_keys_collect"} & set(ordered), ordered


@needs_cupy
@pytest.mark.parametrize("special", ["infinities and signed zeros", "NaN too"])
@pytest.mark.parametrize("pair", [("float32", "float32"), ("float16", "float32")], ids=lambda p: f"{p[0]}-{p[1]}")
def test_predicted_ranges_with_infinities_nan_and_signed_zeros(pair, special, launched, monkeypatch):
    # The pass with the ranges tests float32 differences on their own bits (|a - b| and its
    # quotient are never negative; their NaN is positive, their zeros +0): infinite differences
    # (a few, so the quantiles below the top stay finite), zeros of both signs in a and b, and NaN
    # in one case, still give the CPU engine's order statistics from the ranges' path.
    from poly.compare.stats.gpu import order_select, predicted_ranges

    monkeypatch.setattr(order_select, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(predicted_ranges, "MAX_FRACTION", 1)
    monkeypatch.setattr(predicted_ranges, "LEARNED_BUDGETS", {})
    rng = np.random.default_rng(29)
    n = 1_000_003
    a = _data(pair[0], n, rng, False)
    b = _data(pair[1], n, rng, False, base=a)
    places = rng.choice(n, size=n // 400, replace=False)
    a[places[0::4]], a[places[1::4]] = np.inf, -np.inf  # infinite absdiff and reldiff (b finite there)
    a[places[2::4]], b[places[2::4]] = -0.0, 0.0  # zero differences between signed zeros
    b[places[3::4]] = -0.0  # reldiff of a nonzero over a zero
    if special == "NaN too":
        a[places[:7]] = np.nan
    kw = dict(atol=1e-5, rtol=1e-5, quantiles=QUANTILES)
    for _ in range(2):
        launched.clear()
        got = error_stats(cp.asarray(a), cp.asarray(b), **kw)
        ordered = list(launched)  # (a's and b's medians are computed later, when asked for)
        assert_stats_equal(got, error_stats(a, b, threads=1, **kw))
    if special != "NaN too":  # (a stream holding NaN has NaN order statistics: no ranges to plan)
        assert "poly_sample" in ordered and "poly_radix_gather" not in ordered, ordered

@needs_cupy
def test_no_predicted_ranges_where_a_thread_would_count_too_many_keys(launched, monkeypatch):
    # A thread counts the float32 keys below each range in 16-bit halves: an input of more keys a
    # thread than they hold is not predicted (no sample taken) and its order statistics come the
    # ordinary way, still NumPy's.
    from poly.compare.stats.gpu import order_select, predicted_ranges

    monkeypatch.setattr(order_select, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(predicted_ranges, "MAX_FRACTION", 1)  # (seven quantiles joined into four ranges are wide)
    monkeypatch.setattr(predicted_ranges, "LEARNED_BUDGETS", {})
    rng = np.random.default_rng(23)
    n = 1_000_003
    a = _data("float32", n, rng, False)
    b = _data("float32", n, rng, False, base=a)
    for limit, predicted in ((order_select.MAX_KEYS_PER_THREAD, True), (0, False)):
        monkeypatch.setattr(order_select, "MAX_KEYS_PER_THREAD", limit)
        launched.clear()
        got = error_stats(cp.asarray(a), cp.asarray(b), quantiles=QUANTILES)
        _assert_matches_numpy(got, a, b)
        assert ("poly_sample" in launched) == predicted, launched


@needs_cupy
@pytest.mark.parametrize("kind", ["noise", "spread quantiles", "ties", "tight budget"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ranges_planned_on_the_device_are_the_reference_plan(dtype, kind, monkeypatch):
    # poly_plan_ranges selects the sample's keys at the asked positions and plans the ranges on the
    # device: its table equals the NumPy plan (ranges_from_ends) of the same sample, ranges joined
    # where more than four spans ("spread quantiles"), a stream with more keys in its ranges than
    # its regions were sized for left unpredicted (its first digit counted by the statistics pass
    # instead), and the order statistics exact either way.
    from poly.compare.stats.gpu import device_run, dispatch, order_select, predicted_ranges
    from poly.compare.stats.gpu.kernel_source import RANGES

    monkeypatch.setattr(order_select, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(predicted_ranges, "MAX_FRACTION", 1)
    monkeypatch.setattr(predicted_ranges, "LEARNED_BUDGETS", {})
    if kind == "tight budget":
        monkeypatch.setattr(predicted_ranges, "TIE_ALLOWANCE", 0.5)
    quantiles = (0.001, 0.1, 0.3, 0.6, 0.9, 0.99, 1.0) if kind == "spread quantiles" else (0.9, 0.95, 0.99)
    rng = np.random.default_rng(23)
    n = 1_000_003
    a = rng.standard_normal(n).astype(dtype)
    b = (a + rng.standard_normal(n).astype(dtype) * 1e-3).astype(dtype)
    if kind == "ties":  # most differences exactly zero
        same = rng.random(n) < 0.97
        b[same] = a[same]
    da, db = cp.asarray(a), cp.asarray(b)
    requests = [(k, None) for k in (2, 3)] + [(k, q) for k in (2, 3) for q in quantiles]
    oa, ob = dispatch.cuda_operand(da), dispatch.cuda_operand(db)
    key_bits = 32 if dtype == "float32" else 64
    with device_run.DeviceRun(oa, ob, dispatch.compare_setup(oa, ob, 1e-5, 1e-5, False)) as run:
        plan = order_select.plan_ranges(run, requests)
        assert plan is not None
        size = plan.sample_size
        sample = run.read(plan.sample, np.empty(2 * size, dtype=np.uint32 if key_bits == 32 else np.uint64))
        table = run.read(plan.table, np.empty(1, dtype=predicted_ranges.RANGE_TABLE))[0]
    for s in range(2):
        ask = plan.ask[s]
        ends = [(i, int(ask["at_lo"][i]), int(ask["at_hi"][i])) for i in range(int(ask["nranks"]))]
        want = predicted_ranges.ranges_from_ends(np.sort(sample[s * size:(s + 1) * size]), n, ends, key_bits)
        predicted = want.expected <= int(ask["max_expected"])
        assert int(table["expected"][s]) == want.expected
        assert int(table["nranges"][s]) == (len(want.bounds) if predicted else 0), (kind, s)
        got_of = table["range_of"][s * predicted_ranges.PLAN_RANKS:][:len(ends)].tolist()
        assert got_of == [want.range_of[i] for i in range(len(ends))]
        if predicted:
            bounds = list(zip(table["lo"][s * RANGES:].tolist(), table["hi"][s * RANGES:].tolist(), strict=True))
            assert bounds[:len(want.bounds)] == want.bounds
        if kind == "spread quantiles":
            assert len(want.bounds) == RANGES  # joined
        if kind == "tight budget":
            assert not predicted
    got = error_stats(da, db, atol=1e-5, rtol=1e-5, quantiles=quantiles)
    assert_stats_equal(got, error_stats(a, b, atol=1e-5, rtol=1e-5, quantiles=quantiles, threads=1))


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "int64", "bool"])
def test_torch_cuda_tensors_match_the_cpu_engine(dtype):
    rng = np.random.default_rng(5)
    a = _data(dtype, 4096, rng, True).reshape(64, 64)
    b = _data(dtype, 4096, rng, True, base=a.reshape(-1)).reshape(64, 64)
    _check_pair(a, b, _to_device(a, "torch"), _to_device(b, "torch"))
    ta, tb = _to_device(a, "torch"), _to_device(b, "torch")
    _check_pair(a.T, b.T, ta.t(), tb.t())  # transposed views of tensors


@needs_torch
def test_torch_tensors_name_their_gpu_so_the_driver_is_not_asked(monkeypatch):
    """A torch tensor's operand carries its device ordinal, and a comparison of two of them runs
    in that device's context without asking the driver where the pointers live."""
    from poly.compare.stats.gpu import device_run

    rng = np.random.default_rng(9)
    a = rng.standard_normal(5000).astype(np.float32)
    b = (a + 1e-3 * rng.standard_normal(5000)).astype(np.float32)
    ta, tb = _to_device(a, "torch"), _to_device(b, "torch")
    operand = gpu.cuda_operand(ta)
    assert operand.device == ta.device.index
    drv = device_run.driver_api.load()
    asked = []
    original = drv.cuPointerGetAttribute
    monkeypatch.setattr(drv, "cuPointerGetAttribute", lambda *args: asked.append(args) or original(*args))
    _check_pair(a, b, ta, tb)
    assert asked == []
    if cp is not None:  # the CUDA array interface names no device: the driver is asked then
        assert gpu.cuda_operand(_to_device(a, "cupy")).device is None


def _funcs(tol: float):
    return [
        CompareFunc.simple(atol=tol, rtol=0.0), CompareFunc.simple(atol=tol, rtol=tol),
        CompareFunc.simple(check_error_stat="max", atol=tol, rtol=0.0),
        CompareFunc.simple(check_error_stat="mean", atol=tol, rtol=0.0),
        CompareFunc.simple(check_error_stat="median", atol=tol, rtol=0.0),
        CompareFunc.simple(check_error_stat="quantile", error_quantile=0.9, atol=tol, rtol=0.0),
        pc.L2CompareFunc(l2_threshold=tol * 8), pc.CosineSimilarityCompareFunc(), pc.PsnrCompareFunc(),
        pc.SnrCompareFunc(),
    ]


@needs_gpu
@pytest.mark.parametrize("framework", ["cupy", "torch"])
@pytest.mark.parametrize("tol", [0.5, 0.4999, 0.25], ids=["on-tolerance", "below", "far-below"])
def test_compare_func_verdicts_match_host_copies(framework, tol):
    if (cp if framework == "cupy" else torch) is None:
        pytest.skip(GPU_REASON + f" (with {framework})")
    b = np.arange(1, 65, dtype=np.float32).reshape(8, 8)
    a = b.copy()
    a[::3] += 0.5  # absdiff exactly 0.5 on a third of the rows: on the tolerance when atol == 0.5
    for func in _funcs(tol):
        on_host = func(IterationResult({"x": a}, runner_name="r0"), IterationResult({"x": b}, runner_name="r1"))
        on_dev = func(IterationResult({"x": _to_device(a, framework)}, runner_name="r0"),
                      IterationResult({"x": _to_device(b, framework)}, runner_name="r1"))
        assert bool(on_dev["x"]) == bool(on_host["x"]), (type(func).__name__, tol)
    assert bool(CompareFunc.simple(atol=0.5, rtol=0.0)(
        IterationResult({"x": _to_device(a, framework)}, runner_name="r0"),
        IterationResult({"x": _to_device(b, framework)}, runner_name="r1"))["x"])


@needs_gpu
@pytest.mark.parametrize("framework", ["cupy", "torch"])
def test_no_host_copy_of_the_arrays(framework, monkeypatch):
    if (cp if framework == "cupy" else torch) is None:
        pytest.skip(GPU_REASON + f" (with {framework})")
    import poly.compare.funcs.base as base
    import poly.compare.funcs.metrics as metrics
    import poly.compare.stats.gpu.device_output as device_output
    import poly.compare.stats.native as native
    import poly.compare.stats.polygraphy_precision as precision

    rng = np.random.default_rng(2)
    # larger than the biggest histogram read back (16 groups x 2048 bins x 8 bytes)
    a = rng.standard_normal((400, 400)).astype(np.float32)
    b = (a + rng.uniform(-1e-6, 1e-6, a.shape)).astype(np.float32)
    want = error_stats(a, b, quantiles=(0.5, 0.9, 0.99))
    da, db = _to_device(a, framework), _to_device(b, framework)

    def refuse(*args, **kwargs):
        raise AssertionError("a CUDA array was copied to the host")

    for module in (base, metrics, native, precision, device_output):
        monkeypatch.setattr(module, "host_array", refuse)
    monkeypatch.setattr(device_output.DeviceOutput, "host", refuse)

    before = gpu.transfer_counter["dtoh_bytes"]
    gpu.transfer_counter["largest"] = 0
    stats = error_stats(da, db, quantiles=(0.5, 0.9, 0.99))
    assert_stats_equal(stats, want)
    for func in (CompareFunc.simple(atol=1e-4), CompareFunc.simple(check_error_stat="median", atol=1e-4),
                 pc.L2CompareFunc(l2_threshold=1.0), pc.CosineSimilarityCompareFunc(), pc.PsnrCompareFunc(),
                 pc.SnrCompareFunc()):
        assert bool(func(IterationResult({"x": da}, runner_name="r0"), IterationResult({"x": db}, runner_name="r1"))["x"])
    assert gpu.transfer_counter["dtoh_bytes"] > before
    assert 0 < gpu.transfer_counter["largest"] < a.nbytes  # per-block records and histograms, never an array


def _refill(dev, host: np.ndarray) -> None:
    """Writes ``host`` into the CUDA array ``dev`` in place (its address stays)."""
    if torch is not None and isinstance(dev, torch.Tensor):
        dev.copy_(_to_device(host, "torch"))
    else:
        dev[...] = cp.asarray(host)


@needs_gpu
@pytest.mark.parametrize("framework", ["cupy", "torch"])
@pytest.mark.parametrize(("n", "quantiles"), [(1000, SELECT_QUANTILES), ((1 << 22) + 3, (0.5,))],
                         ids=["small", "two-digit-select-pass"])
def test_a_repeated_comparison_replays_its_graph_on_the_arrays_current_data(framework, n, quantiles):
    # The same two buffers compared again and again (a runner's outputs): the second run is
    # captured into a CUDA graph and the later ones are that graph launched once; every run gives
    # the CPU engine's statistics of what the buffers hold then, order statistics included.
    if (cp if framework == "cupy" else torch) is None:
        pytest.skip(GPU_REASON + f" (with {framework})")
    rng = np.random.default_rng(n)
    a = _data("float32", n, rng, False)
    b = _data("float32", n, rng, False, base=a)
    da, db = _to_device(a, framework), _to_device(b, framework)
    for step in range(5):
        if step:
            a = _data("float32", n, rng, step == 3)  # (NaN and infinities in one of the replays)
            b = _data("float32", n, rng, step == 3, base=a)
            _refill(da, a)
            _refill(db, b)
        got = error_stats(da, db, quantiles=quantiles)
        assert_stats_equal(got, error_stats(a, b, quantiles=quantiles, threads=1))
    kept = gpu.kept_run_graphs()
    assert len(kept) == 1 and kept[0].replays == 3, [g.replays for g in kept]
    gpu.drop_run_graphs()
    assert gpu.kept_run_graphs() == []
    assert_stats_equal(error_stats(da, db, quantiles=quantiles),  # (and the pool's buffers serve again)
                       error_stats(a, b, quantiles=quantiles, threads=1))


@needs_gpu
def test_graphs_of_one_pair_follow_its_arithmetic_and_requests():
    # one graph a tolerance and request set: alternating them on the same buffers, each run still
    # counts its own mismatches and order statistics
    framework = "cupy" if cp is not None else "torch"
    rng = np.random.default_rng(3)
    a = rng.standard_normal(50_000).astype(np.float32)
    b = (a + rng.standard_normal(50_000) * 1e-4).astype(np.float32)
    da, db = _to_device(a, framework), _to_device(b, framework)
    runs = [dict(atol=1e-5, rtol=0.0, quantiles=(0.5,)), dict(atol=1e-4, rtol=0.0, quantiles=(0.5,)),
            dict(atol=1e-5, rtol=0.0, quantiles=(0.5, 0.9))]
    for _ in range(3):
        for kw in runs:
            want = error_stats(a, b, threads=1, **kw)
            got = error_stats(da, db, **kw)
            assert_stats_equal(got, want)
    assert len({want.mismatches for want in (error_stats(a, b, threads=1, **kw) for kw in runs)}) == 2
    assert sorted(g.replays for g in gpu.kept_run_graphs()) == [1, 1, 1]


@needs_gpu
def test_where_a_run_cannot_be_captured_it_runs_as_before(monkeypatch):
    # a driver that refuses stream capture: every comparison still runs (and is right), and the
    # run is not offered for capture again
    from poly.compare.stats.gpu.cuda_api import driver_api

    drv = driver_api.load()
    tries = []
    monkeypatch.setattr(drv, "cuStreamBeginCapture",
                        lambda *args: (tries.append(args), drv.CUresult.CUDA_ERROR_NOT_SUPPORTED)[1])
    framework = "cupy" if cp is not None else "torch"
    rng = np.random.default_rng(4)
    a = rng.standard_normal(10_000).astype(np.float32)
    b = (a + rng.standard_normal(10_000) * 1e-3).astype(np.float32)
    da, db = _to_device(a, framework), _to_device(b, framework)
    for _ in range(5):
        assert_stats_equal(error_stats(da, db, quantiles=(0.5,)), error_stats(a, b, quantiles=(0.5,), threads=1))
    assert len(tries) == 1 and gpu.kept_run_graphs() == []


@needs_torch
def test_compare_func_on_the_same_torch_outputs_matches_host_copies_every_time():
    # CompareFunc.simple over the same torch CUDA outputs, as a comparator's loop runs it: the
    # replayed runs give the host copies' verdicts and figures
    rng = np.random.default_rng(8)
    func = CompareFunc.simple(atol=1e-3, rtol=1e-3)
    a = rng.standard_normal((64, 512)).astype(np.float32)
    da, db = _to_device(a, "torch"), _to_device(a, "torch")
    for step in range(5):
        b = (a + rng.standard_normal(a.shape) * (1e-4 if step % 2 else 1e-2)).astype(np.float32)
        _refill(db, b)
        on_host = func(IterationResult({"x": a}, runner_name="r0"), IterationResult({"x": b}, runner_name="r1"))["x"]
        on_dev = func(IterationResult({"x": da}, runner_name="r0"), IterationResult({"x": db}, runner_name="r1"))["x"]
        assert bool(on_dev) == bool(on_host) == bool(step % 2), step
        for field in ("max_absdiff", "max_reldiff", "mean_absdiff", "median_absdiff", "median_reldiff"):
            assert _close(float(getattr(on_dev, field)), float(getattr(on_host, field))), (step, field)
    assert [g.replays for g in gpu.kept_run_graphs()] == [3]


@needs_cupy
def test_streams_are_honoured():
    # the arrays are written on a non-blocking stream; the statistics run after that work
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        a = cp.arange(1 << 22, dtype=cp.float32)
        b = a * 1.0
        b[123] += 1.0
        stats = error_stats(a, b)
    assert stats.absdiff.argmax == (123,) and stats.mismatches == 1


@pytest.mark.skipif(_nvrtc_ok(), reason="NVRTC is loadable here: the fallback does not apply")
def test_without_nvrtc_cuda_arrays_fall_back_with_one_info_line(monkeypatch):
    from poly.compare.stats.gpu import dispatch

    monkeypatch.setattr(dispatch, "_READY", {})
    lines = []
    monkeypatch.setattr(G_LOGGER, "info", lambda msg, *a, **k: lines.append(str(msg)))
    assert dispatch.gpu_ready() is False
    assert dispatch.gpu_ready() is False  # checked once
    assert len(lines) == 1 and "pip install poly-compare[gpu]" in lines[0]


_FIRST_USE_SCRIPT = r"""
import json, os, sys, time
import cupy as cp
from poly.compare import error_stats
from poly.compare.stats.gpu import dispatch, kernel_images
from poly.core import G_LOGGER
G_LOGGER.module_severity = G_LOGGER.VERBOSE
a = cp.linspace(-3, 3, 1 << 20, dtype=cp.float16)
b = a + cp.float16(1e-3)
b[77] = cp.nan
def figures():
    s = error_stats(a, b, quantiles=(0.5, 0.9))
    return [s.mismatches, s.absdiff.max, s.absdiff.mean, s.absdiff.argmax, s.b.nan_count, s.reldiff.quantiles,
            s.absdiff.median, s.absdiff.std]
first = figures()
variant = dispatch.kernel_variant(9, 9)
path = kernel_images.image_path(variant, kernel_images.arch_for(tuple(int(x) for x in
                                sys.argv[1].split("."))))
deadline = time.monotonic() + 400
while not path.exists() and time.monotonic() < deadline:
    time.sleep(0.5)
print("optimised image:", path.exists(), flush=True)
second = figures()
print("FIGURES", json.dumps([repr(first), repr(second)]), flush=True)
"""


@needs_cupy
def test_a_first_comparison_runs_on_a_quick_build_then_on_the_optimised_one(tmp_path):
    # a fresh cache: the first comparison of a dtype pair compiles the quick build (logged with its
    # duration) and starts the optimised one in the background; once that is cached, the same
    # process moves to it, and both give the same figures
    cc = cp.cuda.Device().compute_capability  # "90"
    env = dict(os.environ, POLY_CACHE_DIR=str(tmp_path))
    env.pop("POLY_GPU_KERNEL_BUILD", None)
    proc = subprocess.run([sys.executable, "-c", _FIRST_USE_SCRIPT, f"{cc[:-1]}.{cc[-1]}"], env=env,
                          capture_output=True, text=True, timeout=500)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Compiled the GPU statistics kernels for float16-float16 (float32) on sm_" in out
    assert "a quick build; the optimised one is compiling in background process" in out
    assert "optimised image: True" in out
    assert "moving to the optimised build" in out
    first, second = json.loads(out.split("FIGURES", 1)[1].strip().splitlines()[0])
    assert first == second
