"""Order statistics of one stream asked for on their own (``_native.order_stats``: the medians and
quantiles of both outputs that a comparison's report shows): exact against NumPy, on inputs large
enough for the one-pass rank windows (2^17 elements and more), where those fall back to radix
select (ties that overflow the windows, a stream of one value, NaN) and below 2^17 elements, where
the requested streams' keys are kept whole; for the values alone and with a difference stream
asked in the same call. Ties that fill a window's bin (a ReLU's zeros, a quantised output's few
values) are counted rather than sorted there: those have tests of their own."""

from __future__ import annotations

import math

import numpy as np
import pytest

from poly import _native

# None: the median. The report's median and p90/p95/p99, and more: ranks a sample predicts (the
# windows' case); the extremes, whose ranks a sample cannot bracket, take radix select.
REQUESTS = [None, 0.1, 0.5, 0.9, 0.95, 0.99]
EXTREMES = [0.0, None, 1.0]
N = 200_003


def numpy_order(values: np.ndarray, requests: list = REQUESTS) -> list[float]:
    """NumPy's median and quantiles of ``values`` in float64 (NaN for all when one is NaN)."""
    wide = values.astype(np.float64)
    if np.isnan(wide).any():
        return [math.nan] * len(requests)
    return [float(np.median(wide)) if q is None else float(np.quantile(wide, q)) for q in requests]


def assert_same(got: list[float], want: list[float], what: str) -> None:
    assert len(got) == len(want), what
    for q, g, w in zip(range(len(want)), got, want, strict=True):
        if math.isnan(w):
            assert math.isnan(g), (what, q)
        else:
            assert g == pytest.approx(w, rel=1e-12, abs=0.0), (what, q)


def values(kind: str, dtype: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if dtype.startswith("int"):
        x = rng.integers(-1_000_000, 1_000_000, n)
    else:
        x = rng.standard_normal(n) * np.exp2(rng.integers(-8, 8, n))
    if kind == "ties":  # a handful of values shared by tens of thousands of elements each
        x = np.round(x * 2) if not dtype.startswith("int") else x // 400_000
    elif kind == "constant":
        x = np.full(n, 3)
    x = x.astype(dtype)
    if kind == "nan":
        x[n // 3] = np.nan
    elif kind == "inf":
        x[::1001] = np.inf
        x[7::2003] = -np.inf
    return x


@pytest.mark.parametrize("n", [1_001, 100_003, N])
@pytest.mark.parametrize("kind", ["varied", "nan", "inf", "ties", "constant"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
def test_both_outputs_order_statistics_match_numpy(dtype, kind, n):
    # n: below 2^17 the keys kept whole (twice: inside one block and over many), and the windows
    if dtype == "int32" and kind in ("nan", "inf"):
        pytest.skip("integers hold no NaN or infinity")
    rng = np.random.default_rng(11)
    a = values(kind, dtype, n, rng)
    b = values("varied", dtype, n, rng)  # b always varied: a NaN in a leaves b's figures exact
    code = _native.DTYPE_CODES[dtype]
    got = _native.order_stats(a, b, code, code, ["a", "b"], REQUESTS, False, 0)
    assert_same(got[:len(REQUESTS)], numpy_order(a), "a")
    assert_same(got[len(REQUESTS):], numpy_order(b), "b")
    # one stream alone and on one thread: the same figures
    assert _native.order_stats(a, b, code, code, "a", REQUESTS, False, 1) == pytest.approx(
        got[:len(REQUESTS)], nan_ok=True, rel=0, abs=0)


@pytest.mark.parametrize("n", [(1 << 17) - 1, 1 << 17, (1 << 17) + 1, 1_000_003])
def test_sizes_around_the_windows_threshold(n):
    # below 2^17 elements radix select alone; from 2^17 the windows (several threads at 10^6)
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(np.float32)
    b = (a + 1e-3 * rng.standard_normal(n)).astype(np.float32)
    code = _native.DTYPE_CODES["float32"]
    got = _native.order_stats(a, b, code, code, ["b", "a"], REQUESTS, False, 0)
    assert_same(got[:len(REQUESTS)], numpy_order(b), "b")
    assert_same(got[len(REQUESTS):], numpy_order(a), "a")


@pytest.mark.parametrize("n", [100_003, N])
def test_values_and_a_difference_in_one_call(n):
    # a difference stream asked beside the values: the pass computes the differences as well
    rng = np.random.default_rng(5)
    a = rng.standard_normal(n)
    b = a + rng.standard_normal(n) * 1e-6
    code = _native.DTYPE_CODES["float64"]
    got = _native.order_stats(a, b, code, code, ["a", "absdiff", "b"], REQUESTS, False, 0)
    k = len(REQUESTS)
    assert_same(got[:k], numpy_order(a), "a")
    assert_same(got[k:2 * k], numpy_order(np.abs(a - b)), "absdiff")
    assert_same(got[2 * k:], numpy_order(b), "b")


def test_the_extremes_beside_the_median():
    rng = np.random.default_rng(9)
    a = values("varied", "float32", N, rng)
    b = values("inf", "float32", N, rng)
    code = _native.DTYPE_CODES["float32"]
    got = _native.order_stats(a, b, code, code, ["a", "b"], EXTREMES, False, 0)
    assert_same(got[:3], numpy_order(a, EXTREMES), "a")
    assert_same(got[3:], numpy_order(b, EXTREMES), "b")


def tied(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Float32 values whose ties fill the bins (of the keys' top 16 bits) holding the ranks."""
    if kind == "near":  # twelve values about 5,000 float32 steps apart: one or two bins, many digits
        return (0.0215 + 1e-5 * rng.integers(0, 12, n)).astype(np.float32)
    if kind == "relu":  # 60% zeros (the median's bin), the quantiles among varied positive values
        return np.maximum(rng.standard_normal(n) - 0.25, 0).astype(np.float32)
    if kind == "dominant":  # one value in 90% of the elements, varied values either side
        x = rng.standard_normal(n).astype(np.float32)
        x[rng.random(n) < 0.9] = np.float32(0.75)
        return x
    raise ValueError(kind)


@pytest.mark.parametrize("n", [(1 << 17) + 3, 1_000_003])
@pytest.mark.parametrize("kind", ["near", "relu", "dominant"])
def test_ties_filling_a_rank_s_bin_are_counted_exactly(kind, n):
    # a bin of 4,096 keys or more is counted digit by digit (bits 15..8, then 7..0) rather than
    # sorted; the relu and dominant kinds mix a counted bin and sorted ones in one stream
    rng = np.random.default_rng(n)
    a, b = tied(kind, n, rng), tied(kind, n, rng)
    code = _native.DTYPE_CODES["float32"]
    got = _native.order_stats(a, b, code, code, ["a", "b"], REQUESTS + EXTREMES, False, 0)
    k = len(REQUESTS + EXTREMES)
    assert_same(got[:k], numpy_order(a, REQUESTS + EXTREMES), "a")
    assert_same(got[k:], numpy_order(b, REQUESTS + EXTREMES), "b")


def test_neighbouring_ranks_in_different_digits_of_one_counted_bin():
    # the median of an even count: two ranks in one bin whose keys differ in their lowest bits
    # only (bits 7..0) and in their middle bits (15..8), each found by its own count
    n = 1 << 18
    low = np.float32(1.5)
    steps = np.array([0, 1, 300, 301], dtype=np.int32)  # float32 steps above 1.5
    a = (low.view(np.int32) + np.repeat(steps, n // 4)).view(np.float32)
    np.random.default_rng(3).shuffle(a)
    code = _native.DTYPE_CODES["float32"]
    requests = [None, 0.25, 0.5, 0.75, 0.2499, 0.7501]
    got = _native.order_stats(a, a, code, code, ["a"], requests, False, 0)
    assert_same(got, numpy_order(a, requests), "a")
