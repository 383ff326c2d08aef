"""poly.compare.stats.native against a float64 NumPy oracle: sums within 1e-9
relative, order statistics, extrema, indices and counts exactly."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from poly.compare import error_stats

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml-dtypes is a dev dependency
    BF16 = None

from oracles import stats as oracle
from sanitizers.reports import report_excerpt

FLOATS = ["float16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
ALL = ["bool", *INTS, *FLOATS] + (["bfloat16"] if BF16 is not None else [])


def as_dtype(name: str) -> np.dtype:
    return BF16 if name == "bfloat16" else np.dtype(name)


def close(got: float, want: float, scale: float = 0.0, rel: float = 1e-9) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    if math.isinf(want):
        return got == want
    return abs(got - want) <= rel * max(abs(want), scale) + 1e-300


def index_of(flat: int, shape) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def check_stream(got, want: dict, shape, *, exact_median=True):
    if "empty" in want:
        assert math.isnan(got.mean) and math.isnan(got.min) and got.argmin is None
        return
    assert close(got.min, want["min"], rel=0), (got.min, want["min"])
    assert close(got.max, want["max"], rel=0), (got.max, want["max"])
    assert got.argmin == index_of(want["argmin"], shape)
    assert got.argmax == index_of(want["argmax"], shape)
    if want["mean"] is not None:
        assert close(got.mean, want["mean"], want["scale1"]), (got.mean, want["mean"])
    if want["var"] is not None:
        assert close(got.var, want["var"], want["scale2"]), (got.var, want["var"])
    if want["var"] is not None and not math.isnan(want["var"]):
        assert got.std == pytest.approx(math.sqrt(got.var), rel=1e-15, abs=0)
    if exact_median:
        assert close(got.median, want["median"], rel=0), (got.median, want["median"])


def check_all(a, b, *, atol=1e-5, rtol=1e-5, qs=(), ice=False, threads=0):
    s = error_stats(a, b, atol=atol, rtol=rtol, quantiles=qs, infinities_compare_equal=ice, threads=threads)
    ad, rd, ftype = oracle.diffs(a, b, infinities_compare_equal=ice)
    assert s.compute_dtype == oracle.compute_mode(a, b)
    assert s.mismatches == oracle.mismatches(ad, rd, ftype, atol, rtol)
    for got, arr in ((s.absdiff, ad), (s.reldiff, rd)):
        want = oracle.moments(arr)
        check_stream(got, want, a.shape)
        wq = oracle.quantiles(arr, qs)
        for q in qs:
            assert close(got.quantiles[q], wq[q], rel=0), (q, got.quantiles[q], wq[q])
        assert got.nan_count == want.get("nan", 0)
        assert got.inf_count == want.get("inf", 0)
    for got, arr in ((s.a, a), (s.b, b)):
        x = arr.astype(np.float64) if arr.dtype != np.bool_ else arr.astype(np.float64)
        want = oracle.moments(x)
        check_stream(got, want, a.shape)
        if "empty" not in want:
            assert close(got.mean_abs, want["mean_abs"], want["scale1"])
            assert got.nan_count == want["nan"] and got.inf_count == want["inf"]
    # distance and quality metrics
    with np.errstate(all="ignore"):
        sq = float(np.sum(ad.astype(np.float64) ** 2))
        assert close(s.l2, math.sqrt(sq), rel=1e-9)
        if a.size:
            assert close(s.mse, sq / a.size, rel=1e-9)
    return s


def special_floats(dtype):
    return st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 1e-7, 3.0, 65504.0, math.inf, -math.inf, math.nan])


@st.composite
def array_pairs(draw, dtypes=ALL, allow_special=True, max_side=9):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=max_side))
    names = (draw(st.sampled_from(dtypes)), draw(st.sampled_from(dtypes)))
    arrays = []
    for name in names:
        dt = as_dtype(name)
        if name == "bool":
            arr = draw(hnp.arrays(np.bool_, shape))
        elif name in INTS:
            info = np.iinfo(dt)
            arr = draw(hnp.arrays(dt, shape, elements=st.integers(int(info.min), int(info.max))))
        else:
            base = np.dtype("float32") if name in ("bfloat16", "float16") else dt
            width = 16 if name == "float16" else (32 if base == np.float32 else 64)
            floats = st.floats(allow_nan=allow_special, allow_infinity=allow_special, width=width)
            if allow_special:
                floats = st.one_of(floats, special_floats(dt))
            arr = draw(hnp.arrays(base if name == "bfloat16" else dt, shape, elements=floats)).astype(dt)
        arrays.append(arr)
    a, b = arrays
    # Non-contiguous views: a reversed axis or a transpose, chosen per array.
    if a.ndim >= 1 and draw(st.booleans()):
        a = a[::-1]
        b = np.ascontiguousarray(b[::-1])
    if a.ndim >= 2 and draw(st.booleans()):
        a = np.ascontiguousarray(a.swapaxes(0, 1)).swapaxes(0, 1)  # same shape, F-like strides
    return a, b


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(array_pairs(), st.sampled_from([(), (0.5,), (0.0, 0.9, 1.0), (0.25, 0.95, 0.99)]), st.booleans())
def test_matches_oracle_every_dtype_pair(pair, qs, ice):
    a, b = pair
    check_all(a, b, qs=qs, ice=ice)


@SETTINGS
@given(array_pairs(dtypes=["float32", "float16", "float64", "bfloat16"] if BF16 is not None else FLOATS,
                   allow_special=False, max_side=40),
       st.floats(0, 1e-2), st.floats(0, 1e-2))
def test_finite_floats_and_tolerance_boundaries(pair, atol, rtol):
    a, b = pair
    check_all(a, b, atol=atol, rtol=rtol, qs=(0.1, 0.5, 0.9))


def test_variance_of_a_block_whose_sum_squared_overflows():
    """Relative differences near 1e154: the block sum squared (s1^2) overflows float64 while
    the variance (1.6e307) does not; it must not come out as 0 (found by hypothesis)."""
    a = np.array([0.0, 4.746601e16, 1.760093e16], dtype=np.float32)
    b = np.full(3, 4.85291412e-138)
    s = check_all(a, b, atol=0.0, rtol=0.0, qs=(0.1, 0.5, 0.9))
    assert s.reldiff.var > 1e307


def test_strided_views_of_large_arrays():
    rng = np.random.default_rng(1)
    base_a = rng.standard_normal((600, 700)).astype(np.float32)
    base_b = base_a + rng.standard_normal((600, 700)).astype(np.float32) * np.float32(1e-3)
    a, b = base_a[::3, ::-2], base_b.T.copy().T[::3, ::-2]
    assert not a.flags.c_contiguous and not b.flags.c_contiguous
    check_all(a, b, qs=(0.9, 0.95, 0.99))


@pytest.mark.slow  # large inputs on every thread count
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
def test_large_inputs_threads_and_radix_refinement(dtype):
    """Over 2^18 equal differences force histogram refinement instead of gathering, and a
    large input splits across threads; results must not depend on the thread count."""
    rng = np.random.default_rng(7)
    n = 700_001
    a = rng.integers(-50, 50, n).astype(dtype)
    b = a.copy()
    b[: n // 3] += 1  # a third of the differences are exactly 1, the rest 0
    rng.shuffle(b)
    s1 = check_all(a, b, qs=(0.0, 0.3, 0.5, 0.66, 0.9, 1.0), threads=1)
    s2 = check_all(a, b, qs=(0.0, 0.3, 0.5, 0.66, 0.9, 1.0), threads=2)
    assert s1.absdiff.quantiles == s2.absdiff.quantiles
    assert (s1.absdiff.argmax, s1.mismatches) == (s2.absdiff.argmax, s2.mismatches)


@pytest.mark.parametrize("n", [70, 4_099, 65_537, 150_001, 1 << 18])
@pytest.mark.parametrize("kind", ["noise", "ties", "equal", "wide"])
def test_inputs_gathered_whole_give_numpys_quantiles(n, kind):
    """Inputs of up to 2^18 elements have their keys gathered in one pass and their ranks selected
    in memory, several at once; every quantile equals NumPy's, whatever the ties, with one thread
    or two."""
    rng = np.random.default_rng(n + len(kind))
    a = rng.standard_normal(n).astype(np.float32)
    if kind == "noise":
        b = a + (1e-3 * rng.standard_normal(n)).astype(np.float32)
    elif kind == "ties":  # a few distinct differences, each shared by many elements
        b = a + (rng.integers(-3, 4, n) * 0.25).astype(np.float32)
    elif kind == "equal":
        b = a.copy()
    else:  # differences over many octaves, both signs of b
        b = (a * np.exp2(rng.integers(-40, 40, n))).astype(np.float32)
    qs = (0.0, 0.1, 0.5, 0.9, 0.95, 0.99, 1.0)
    s1 = check_all(a, b, qs=qs, threads=1)
    s2 = check_all(a, b, qs=qs, threads=2)
    assert s1.absdiff.median == s2.absdiff.median and s1.reldiff.quantiles == s2.reldiff.quantiles


def test_value_medians_are_exact_and_lazy(monkeypatch):
    # Computed when first asked for, a's and b's together (one call: the same passes over the
    # inputs), never again.
    from poly import _native
    from poly.compare.stats import native

    calls = []
    order_stats = _native.order_stats
    monkeypatch.setattr(native._native, "order_stats", lambda *args: calls.append(args[4]) or order_stats(*args))
    rng = np.random.default_rng(3)
    a = rng.standard_normal(200_000)
    b = rng.standard_normal(200_000).astype(np.float32)
    s = error_stats(a, b)
    assert calls == []
    assert s.b.median == float(np.median(b.astype(np.float64)))
    assert s.a.median == float(np.median(a))
    assert s.a.median == float(np.median(a)) and s.b.median == float(np.median(b.astype(np.float64)))
    assert calls == [["a", "b"]]


def test_nan_and_inf_semantics():
    a = np.array([1.0, np.inf, -np.inf, np.nan, 0.0, 2.0], dtype=np.float32)
    b = np.array([1.0, np.inf, np.inf, 0.0, 0.0, 0.0], dtype=np.float32)
    s = error_stats(a, b)
    # inf - inf is NaN, so absdiff has NaN: every order statistic and the extrema are NaN and
    # argmax points at the first NaN, as NumPy's do
    assert math.isnan(s.absdiff.max) and math.isnan(s.absdiff.median)
    assert s.absdiff.argmax == (1,)
    assert s.mismatches == 4  # inf-inf (NaN), -inf vs inf, NaN vs 0, 2 vs 0; 0 vs 0 matches
    assert s.absdiff.nan_count == 2 and s.absdiff.inf_count == 1
    s2 = error_stats(a, b, infinities_compare_equal=True)
    assert s2.absdiff.nan_count == 1  # only nan - 0 remains NaN
    assert s2.mismatches == 3  # -inf vs inf stays an infinite difference
    # b's exact zeros become 2.22e-16 (rounded to float32) in the relative difference
    z = error_stats(np.array([2.0, 0.0], np.float32), np.zeros(2, np.float32))
    assert z.reldiff.max == np.float32(2.0) / np.float32(2.220446049250313e-16)
    assert z.reldiff.min == 0.0 and z.mismatches == 1


def test_all_nan_inputs_give_nan_statistics():
    a = np.full((3, 4), np.nan, np.float32)
    s = error_stats(a, np.ones((3, 4), np.float32), quantiles=(0.9,))
    assert s.mismatches == 12 and s.absdiff.nan_count == 12
    assert math.isnan(s.absdiff.max) and math.isnan(s.absdiff.median) and math.isnan(s.absdiff.quantiles[0.9])
    assert s.absdiff.argmax == (0, 0) and s.a.argmin == (0, 0)  # NumPy points at the first NaN
    assert math.isnan(s.a.median) and s.b.median == 1.0


def test_non_native_byte_order_is_read_correctly():
    a = np.arange(10, dtype=">f4")
    b = np.arange(10, dtype="<f4") + np.float32(0.5)
    s = error_stats(a, b)
    assert s.absdiff.max == 0.5 and s.absdiff.min == 0.5 and s.a.max == 9.0


def test_empty_arrays_give_nan_statistics():
    s = error_stats(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32), quantiles=(0.5,))
    assert s.size == 0 and s.mismatches == 0
    assert math.isnan(s.absdiff.mean) and math.isnan(s.absdiff.median) and math.isnan(s.absdiff.quantiles[0.5])
    assert s.absdiff.argmin is None and s.l2 == 0.0


def test_bad_inputs_raise_value_error():
    with pytest.raises(ValueError, match="same shape"):
        error_stats(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="dtype"):
        error_stats(np.array(["a"]), np.array(["b"]))
    with pytest.raises(ValueError, match="quantile"):
        error_stats(np.zeros(3), np.zeros(3), quantiles=(1.5,))
    with pytest.raises(ValueError, match="dtype"):
        error_stats(np.zeros(2, np.complex64), np.zeros(2, np.complex64))


def test_distance_and_quality_metrics():
    b = np.array([1.0, -2.0, 3.0, 4.0])
    a = b + np.array([0.1, 0.0, -0.2, 0.0])
    s = error_stats(a, b)
    assert s.l2 == pytest.approx(math.sqrt(0.05))
    assert s.mse == pytest.approx(0.05 / 4)
    assert s.cosine == pytest.approx(float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)))
    assert s.psnr == pytest.approx(20 * math.log10(4.0) - 10 * math.log10(0.05 / 4))
    assert s.snr == pytest.approx(10 * math.log10(np.mean(b**2) / (0.05 / 4)))
    same = error_stats(b, b)
    assert same.psnr == math.inf and same.snr == math.inf and same.cosine == pytest.approx(1.0)
    zeros = error_stats(np.zeros(3), np.zeros(3))
    assert zeros.cosine == 1.0


def test_bool_pairs_use_xor():
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    s = error_stats(a, b)
    assert s.compute_dtype == "bool"
    assert s.absdiff.mean == 0.5 and s.mismatches == 2


def test_every_kernel_path_agrees(kernel_paths):
    """The portable kernels (POLY_NATIVE_ARCH=generic), AVX2 and AVX-512 (where the CPU has them)
    must give the same answers."""
    script = textwrap.dedent(
        """
        import json, numpy as np
        from poly.compare import error_stats
        rng = np.random.default_rng(11)
        a = rng.standard_normal(300_003).astype(np.float32)
        b = (a + rng.standard_normal(300_003).astype(np.float32) * np.float32(1e-3)).astype(np.float16)
        s = error_stats(a, b, quantiles=(0.9, 0.99))
        print(json.dumps([s.mismatches, s.absdiff.max, s.absdiff.median, s.absdiff.quantiles[0.99],
                          list(s.absdiff.argmax), s.reldiff.min, s.absdiff.mean, s.a.var]))
        """
    )
    import json

    outs = []
    for arch in kernel_paths:
        env = dict(os.environ, POLY_NATIVE_ARCH=arch)
        res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
        outs.append(json.loads(res.stdout))
    g = outs[0]
    for n in outs[1:]:
        assert g[:6] == n[:6]
        assert g[6] == pytest.approx(n[6], rel=1e-12) and g[7] == pytest.approx(n[7], rel=1e-12)


_TOLERANCE_EDGES = textwrap.dedent(
    """
    import json, sys, numpy as np
    from poly.compare import error_stats
    rng = np.random.default_rng(3)
    dt = np.dtype(sys.argv[1])
    n = 3 * 1024 + 77  # whole blocks and a partial one
    a = rng.standard_normal(n).astype(dt)
    b = (a + rng.integers(-4, 5, n) * dt.type(2.0 ** -12)).astype(dt)
    b[::97] = 0  # the relative difference divides by eps there
    b[5::211] = -0.0
    a[7::301] = b[7::301]  # exact zeros among the differences
    d = np.abs(a - b)
    r = d / np.where(b == 0, dt.type(2.220446049250313e-16), np.abs(b))
    tols = [0.0, -0.0, -1.0, float("nan"), float("inf"), float(d[1]), float(d[2]), 1e-30, 2.0 ** -12]
    got, want = [], []
    for atol in tols:
        for rtol in tols:
            got.append(error_stats(a, b, atol=atol, rtol=rtol, median=False).mismatches)
            # NumPy's rule in the compute precision: (absdiff > atol or NaN) and (reldiff > rtol or NaN)
            want.append(int(np.count_nonzero(~(d <= dt.type(atol)) & ~(r <= dt.type(rtol)))))
    print(json.dumps({"got": got, "want": want}))
    """
)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mismatch_counts_at_the_tolerance_edges_on_every_kernel_path(dtype, kernel_paths):
    """The one-pass kernels count mismatches on the differences' bits (zero, negative, NaN and
    infinite tolerances, tolerances equal to a difference, b = +-0): every path agrees with NumPy's
    `(absdiff > atol or isnan) and (reldiff > rtol or isnan)` in the compute precision."""
    import json

    for arch in kernel_paths:
        env = dict(os.environ, POLY_NATIVE_ARCH=arch)
        res = subprocess.run([sys.executable, "-c", _TOLERANCE_EDGES, dtype], capture_output=True, text=True,
                             env=env, timeout=120)
        assert res.returncode == 0, res.stderr
        counts = json.loads(res.stdout)
        assert counts["got"] == counts["want"], arch
        assert len(set(counts["want"])) > 5  # the tolerances do draw different lines


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
def test_one_pass_order_statistics_on_large_random_inputs(dtype):
    """Inputs of 2^18 elements and more take the one-pass path (sample-predicted bins
    gathered during the main pass); it must be exact like the radix path."""
    rng = np.random.default_rng(5)
    n = 400_003
    a = (rng.standard_normal(n) * 100).astype(dtype)
    b = (a.astype(np.float64) + rng.standard_normal(n)).astype(dtype)
    check_all(a, b, qs=(0.01, 0.5, 0.9, 0.95, 0.99, 0.999), threads=2)


def test_order_statistics_exact_when_the_sample_misleads():
    """Values at the places the engine samples (512 chunks of 32, evenly spread) differ from
    the rest, so the predicted bins miss the real median: the fallback must still be exact."""
    n = 1 << 19
    rng = np.random.default_rng(9)
    a = rng.uniform(10, 20, n).astype(np.float32)
    for c in range(512):
        start = (n - 32) * c // 511
        a[start : start + 32] = 0.0
    b = np.zeros(n, np.float32)
    check_all(a, b, qs=(0.25, 0.5, 0.75))


_GATHER_TO_THE_BUFFER_END = textwrap.dedent(
    """
    import json, sys, numpy as np
    from poly.compare import error_stats
    n = (1 << 16) + 1  # 64 whole blocks and a partial one of a single element
    sampled = np.zeros(n, bool)
    for c in range(512):  # where the engine samples: 512 chunks of 32, evenly spread
        start = (n - 32) * c // 511
        sampled[start : start + 32] = True
    rng = np.random.default_rng(0)
    a = np.empty(n, np.float32)
    a[sampled] = rng.permutation(np.geomspace(1e-3, 1e3, int(sampled.sum()))).astype(np.float32)
    median = np.median(a[sampled])
    a[~sampled] = median
    a[n - 2048 :] = median  # the last blocks (and the partial one) gather every element
    b = np.zeros(n, np.float32)
    unsampled = np.flatnonzero(~sampled[: n - 1])
    got, want = [], []
    for r in range(int(sys.argv[1]), int(sys.argv[2])):
        x = a.copy()
        x[unsampled[:r]] = 1e6  # outside every window: fewer keys gathered before the end
        s = error_stats(x, b, threads=1)  # (the medians alone: other ranks move the windows)
        d = np.abs(x - b)
        got.append([s.absdiff.median, s.reldiff.median])
        want.append([float(np.median(d)), float(np.median(d / np.float32(2.220446049250313e-16)))])
    print(json.dumps({"got": got, "want": want}))
    """
)


def test_keys_gathered_up_to_the_end_of_their_buffer():
    """The one-pass kernel tallies a partial block padded to whole vectors (16 float32 lanes
    with AVX-512) and gathers the padding's keys before taking them back out: the keys' buffer
    must have room for the padded block, not only for its elements. Here the sample predicts a
    small share of the keys while the pass gathers three quarters of them, so the buffer grows
    block by block; across the range of outliers below, its end falls a few keys past the last
    element for some of them (under AddressSanitizer, tests/native/test_native_sanitizers.py, a
    write there is reported). Each call's order statistics must be NumPy's exactly. In a fresh
    process: buffers cached by earlier calls are larger than the ones grown here."""
    import json

    res = subprocess.run([sys.executable, "-c", _GATHER_TO_THE_BUFFER_END, "33100", "33400"], capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, report_excerpt(res.stderr, 6000)
    out = json.loads(res.stdout)
    assert len(out["got"]) == 300
    assert out["got"] == out["want"]


@pytest.mark.parametrize("stream", ["a", "absdiff", "reldiff"])
def test_native_histogram_matches_numpy(stream):
    """poly._native.histogram counts a stream in numpy.histogram's bins without building it."""
    from poly import _native

    rng = np.random.default_rng(4)
    a = rng.standard_normal(300_001).astype(np.float32)
    b = (a + rng.standard_normal(300_001).astype(np.float32) * np.float32(1e-2)).astype(np.float32)
    b[::97] = 0.0
    ad, rd, _ = oracle.diffs(a, b)
    values = {"a": a, "absdiff": ad, "reldiff": rd}[stream]
    values = values[np.isfinite(values)]
    edges = np.linspace(values.min(), values.max(), 11, dtype=values.dtype)
    want, _ = np.histogram(values, bins=edges)
    other = None if stream == "a" else b
    code = _native.DTYPE_CODES["float32"]
    got = _native.histogram(a, other, code, code, stream, edges.astype(np.float64).tolist())
    assert got == want.tolist()
    with pytest.raises(ValueError, match="increase"):
        _native.histogram(a, None, code, code, "a", [1.0, 1.0])


def misaligned(arr: np.ndarray) -> np.ndarray:
    """The values of ``arr`` in a buffer one byte past an aligned address (np.frombuffer with
    offset=1), so that its data pointer is not aligned to its itemsize."""
    buf = bytearray(arr.nbytes + 1)
    out = np.frombuffer(buf, dtype=arr.dtype, offset=1, count=arr.size).reshape(arr.shape)
    out[...] = arr
    if arr.dtype.alignment > 1:
        assert out.ctypes.data % arr.dtype.alignment != 0
    return out


def packed_field(arr: np.ndarray) -> np.ndarray:
    """The values of ``arr`` as a field of packed records (one pad byte first): strided and
    misaligned."""
    rec = np.zeros(arr.shape, dtype=np.dtype([("pad", "u1"), ("x", arr.dtype)], align=False))
    rec["x"] = arr
    return rec["x"]


def sample_values(name: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = as_dtype(name)
    if name == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if name in INTS:
        info = np.iinfo(dt)
        return rng.integers(max(int(info.min), -1000), min(int(info.max), 1000), n, endpoint=True).astype(dt)
    arr = (rng.standard_normal(n) * 10).astype(np.float32).astype(dt)
    arr[::97] = 0.0
    return arr


def same_statistics(x, y):
    """Two ErrorStats with identical figures (NaN equal to NaN)."""
    def same(p, q):
        return (math.isnan(p) and math.isnan(q)) if isinstance(p, float) and math.isnan(p) else p == q

    for name in ("mismatches", "l2", "cosine", "mse", "psnr", "snr", "compute_dtype"):
        assert same(getattr(x, name), getattr(y, name)), name
    for stream in ("absdiff", "reldiff"):
        dx, dy = getattr(x, stream), getattr(y, stream)
        for f in ("min", "max", "mean", "std", "var", "median", "argmin", "argmax", "nan_count", "inf_count"):
            assert same(getattr(dx, f), getattr(dy, f)), (stream, f)
        assert dx.quantiles.keys() == dy.quantiles.keys()
        assert all(same(dx.quantiles[q], dy.quantiles[q]) for q in dx.quantiles), stream
    for stream in ("a", "b"):
        vx, vy = getattr(x, stream), getattr(y, stream)
        for f in ("min", "max", "mean", "var", "mean_abs", "argmin", "argmax", "nan_count", "median"):
            assert same(getattr(vx, f), getattr(vy, f)), (stream, f)


MISALIGNED_PAIRS = [(name, name) for name in ALL] + [
    ("float32", "float16"), ("int64", "float32"), ("uint64", "bool"), ("int32", "int64"), ("float64", "uint32"),
]


@pytest.mark.parametrize("names", MISALIGNED_PAIRS, ids=lambda p: f"{p[0]}-{p[1]}")
def test_misaligned_inputs_give_the_statistics_of_aligned_copies(names):
    """Arrays whose data pointer is not aligned to their itemsize (np.frombuffer with an odd
    offset, a field of packed records) are read byte-wise: the figures are those of aligned
    copies, and the float64 oracle's."""
    a = sample_values(names[0], 1001, 1)
    b = sample_values(names[1], 1001, 2)
    qs = (0.1, 0.5, 0.9)
    want = error_stats(a, b, quantiles=qs)
    for view in (misaligned, packed_field):
        for pair in ((view(a), view(b)), (view(a), b), (a, view(b))):
            same_statistics(error_stats(*pair, quantiles=qs), want)
    check_all(misaligned(a), misaligned(b), qs=qs)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
def test_large_misaligned_inputs_on_every_path(dtype):
    """Large enough for worker threads, the one-pass order statistics and (float32) the fast path
    that reads the inputs in place, which must not be taken for misaligned data."""
    n = 300_003
    a = sample_values(dtype, n, 3)
    b = (a.astype(np.float64) + sample_values("float64", n, 4) / 100).astype(dtype)
    qs = (0.5, 0.9, 0.99)
    want = error_stats(a, b, quantiles=qs, threads=2)
    got = error_stats(misaligned(a), misaligned(b), quantiles=qs, threads=2)
    same_statistics(got, want)
    check_all(misaligned(a), misaligned(b), qs=qs, threads=2)


def test_native_histogram_of_misaligned_inputs():
    from poly import _native

    a = sample_values("float32", 100_001, 5)
    b = sample_values("float32", 100_001, 6)
    edges = np.linspace(-30.0, 30.0, 11).tolist()
    code = _native.DTYPE_CODES["float32"]
    for stream, other in (("a", None), ("absdiff", b)):
        want = _native.histogram(a, other, code, code, stream, edges)
        mis_other = None if other is None else misaligned(other)
        assert _native.histogram(misaligned(a), mis_other, code, code, stream, edges) == want


@pytest.mark.parametrize("stream", ["a", "absdiff", "reldiff"])
def test_native_histogram_with_uneven_edges_matches_numpy(stream):
    """Edges need not be evenly spaced: every value lands where numpy.histogram puts it (bin k
    holds edges[k] <= x < edges[k+1], the last bin closed), including values on the edges."""
    from poly import _native

    rng = np.random.default_rng(8)
    n = 200_001
    a = rng.standard_normal(n).astype(np.float32)
    b = (a + rng.standard_normal(n).astype(np.float32) * np.float32(0.1)).astype(np.float32)
    ad, rd, _ = oracle.diffs(a, b)
    values = {"a": a, "absdiff": ad, "reldiff": rd}[stream].astype(np.float64)
    finite = values[np.isfinite(values)]
    lo, hi = float(np.quantile(finite, 0.01)), float(np.quantile(finite, 0.99))
    uneven = [
        np.array([lo, lo + (hi - lo) * 1e-3, (lo + hi) / 2, hi]),                # very uneven
        np.unique(np.quantile(finite, np.linspace(0.01, 0.99, 17))),              # quantile edges
        np.unique(np.concatenate([[lo, hi], rng.choice(finite[(finite > lo) & (finite < hi)], 30)])),  # on values
        np.geomspace(max(lo, 1e-6), max(hi, 2e-6), 9) if stream != "a" else np.array([lo, 0.0, hi]),
    ]
    other = None if stream == "a" else b
    code = _native.DTYPE_CODES["float32"]
    for edges in uneven:
        assert np.all(np.diff(edges) > 0)
        want, _ = np.histogram(finite, bins=edges)
        got = _native.histogram(a, other, code, code, stream, edges.tolist())
        assert got == want.tolist(), edges


@pytest.mark.parametrize("shape", [(7,), (3, 5), (0,)])
def test_results_are_whole_dataclasses(shape):
    # The results are built without their __init__ (it costs more than a small comparison):
    # each must still hold every field, so that dataclasses.replace (which reads each field and
    # calls __init__) rebuilds an equal result, and stay frozen.
    import dataclasses

    rng = np.random.default_rng(3)
    a = rng.standard_normal(shape).astype(np.float32)
    stats = error_stats(a, a + 1e-3, quantiles=(0.5, 0.9))
    for result in (stats, stats.absdiff, stats.reldiff):
        assert set(vars(result)) == {f.name for f in dataclasses.fields(result)}
        assert dataclasses.replace(result) == result
        with pytest.raises(dataclasses.FrozenInstanceError):
            result.size = 0  # type: ignore[misc]
    if a.size:
        assert stats.absdiff.argmax == np.unravel_index(int(np.argmax(np.abs(a - (a + 1e-3)).astype(np.float32))), shape)
