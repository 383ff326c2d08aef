"""The one-pass kernel of poly._native (float32 and float64 compute) on inputs large enough
for its rank windows (the large-input sample, partial last blocks, duplicates, NaN,
infinities, a sample that predicts the wrong windows, loaded and misaligned inputs): its
statistics against the float64 NumPy oracle, exactly for extrema, counts and order
statistics, the portable kernels against the AVX2 ones, and the instruction-set path."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from oracles import stats as oracle

from poly import _native
from poly.compare import error_stats
from poly.compare.stats.native import dtype_code

QS = (0.001, 0.5, 0.9, 0.95, 0.99)
LARGE = (1 << 22) + 5  # the large-input sample; 5 elements in a partial last block


def close(got: float, want: float, rel: float = 1e-9, scale: float = 0.0) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    if math.isinf(want):
        return got == want
    return abs(got - want) <= rel * max(abs(want), scale) + 1e-300


def check_against_oracle(a, b, *, ice=False, threads=1, qs=QS):
    s = error_stats(a, b, quantiles=qs, infinities_compare_equal=ice, threads=threads)
    ad, rd, ftype = oracle.diffs(a, b, infinities_compare_equal=ice)
    assert s.compute_dtype == oracle.compute_mode(a, b)
    assert s.mismatches == oracle.mismatches(ad, rd, ftype, 1e-5, 1e-5)
    for got, arr in ((s.absdiff, ad), (s.reldiff, rd)):
        want = oracle.moments(arr)
        wq = oracle.quantiles(arr, qs)
        for q in qs:
            assert close(got.quantiles[q], wq[q], rel=0), (q, got.quantiles[q], wq[q])
        assert close(got.median, want["median"], rel=0)
        assert close(got.min, want["min"], rel=0) and close(got.max, want["max"], rel=0)
        assert got.argmax == (want["argmax"],)
        assert got.nan_count == want.get("nan", 0) and got.inf_count == want.get("inf", 0)
        if want["mean"] is not None:
            assert close(got.mean, want["mean"], scale=want["scale1"])
    for got, arr in ((s.a, a), (s.b, b)):
        want = oracle.moments(arr.astype(np.float64))
        assert close(got.min, want["min"], rel=0) and close(got.max, want["max"], rel=0)
        assert got.argmin == (want["argmin"],) and got.argmax == (want["argmax"],)
        if want["mean"] is not None:
            assert close(got.mean, want["mean"], scale=want["scale1"])
            assert close(got.mean_abs, want["mean_abs"], scale=want["scale1"])
        if want["var"] is not None:
            assert close(got.var, want["var"], scale=want["scale2"])
    with np.errstate(all="ignore"):
        sq = float(np.sum(ad.astype(np.float64) ** 2))
    assert close(s.l2, math.sqrt(sq)) and close(s.mse, sq / a.size)
    return s


def pair(n: int, seed: int, dtype=np.float32):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(n) * 3).astype(dtype)
    b = (a.astype(np.float64) + rng.uniform(-1e-3, 1e-3, n)).astype(dtype)  # heavy duplicates in |a-b|
    b[::1000] = 0
    return a, b


@pytest.mark.slow  # millions of elements against a NumPy oracle
@pytest.mark.parametrize("threads", [1, 2])
def test_large_float32_pair_matches_the_oracle(threads):
    a, b = pair(LARGE, 0)
    check_against_oracle(a, b, threads=threads)


@pytest.mark.slow  # millions of elements against a NumPy oracle
def test_large_float16_pair_matches_the_oracle():
    a, b = pair(LARGE, 1, np.float16)
    check_against_oracle(a, b)


def test_nan_and_infinities_in_a_large_pair():
    a, b = pair(LARGE, 2)
    a[123_456] = np.inf
    b[123_456] = np.inf  # inf - inf: NaN, or 0 when infinities compare equal
    a[3_000_001] = -np.inf
    s = check_against_oracle(a, b)
    assert math.isnan(s.absdiff.median) and all(math.isnan(v) for v in s.absdiff.quantiles.values())
    s = check_against_oracle(a, b, ice=True)
    assert not math.isnan(s.absdiff.median)


@pytest.mark.slow  # millions of elements against a NumPy oracle
def test_a_sample_that_predicts_the_wrong_windows_still_gives_exact_ranks():
    """Every chunk the sample reads holds tiny differences, the rest large ones: the windows
    the sample predicts miss the ranks, and the exact fallback (radix select) answers."""
    n = LARGE
    rng = np.random.default_rng(3)
    a = rng.standard_normal(n).astype(np.float32)
    b = (a + np.float32(0.5) + rng.uniform(0, 1, n).astype(np.float32)).astype(np.float32)
    chunks, length = 2048, 32
    for c in range(chunks):
        start = (n - length) * c // (chunks - 1)
        b[start : start + length] = a[start : start + length] + np.float32(1e-6)
    check_against_oracle(a, b)


def order_method(a, b, qs, threads=1) -> str:
    """How the engine found the order statistics of a against b: "windows" (the rank windows
    of the one pass) or "radix" (the fallback's radix select passes)."""
    raw = _native.error_stats(a, b, dtype_code(a.dtype), dtype_code(b.dtype), 1e-5, 1e-5, list(qs), True, False,
                              threads)
    return raw["order_method"]


@pytest.mark.slow  # millions of elements against a NumPy oracle
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ranks_are_found_in_their_windows_without_radix_select(dtype, threads):
    a, b = pair(LARGE, 10, dtype)
    assert order_method(a, b, QS, threads) == "windows"
    check_against_oracle(a, b, threads=threads)


# Quantiles far apart (eight windows a stream, the most the kernel takes) and quantiles close
# together (one window holding more wanted bins than one pick over the gathered keys takes).
SPREAD = (0.02, 0.1, 0.2, 0.35, 0.65, 0.8, 0.9)
CLUSTERED = tuple(0.6 + i * 1e-4 for i in range(20))


@pytest.mark.slow  # millions of elements against a NumPy oracle
@pytest.mark.parametrize("qs", [SPREAD, CLUSTERED], ids=["eight-windows", "many-wanted-bins"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_many_windows_and_many_wanted_bins_resolve_in_the_windows(dtype, qs):
    rng = np.random.default_rng(11)
    a = rng.standard_normal(LARGE).astype(dtype)
    b = (a + rng.standard_normal(LARGE).astype(dtype) * dtype(1e-3)).astype(dtype)
    assert order_method(a, b, qs) == "windows"
    check_against_oracle(a, b, qs=qs)


def test_gathered_key_buffers_are_kept_for_the_next_comparison_within_their_cap():
    a, b = pair(LARGE, 12)
    first = error_stats(a, b, quantiles=QS, threads=2)
    kept = _native.key_cache_bytes()
    assert 0 < kept <= 64 << 20
    again = error_stats(a, b, quantiles=QS, threads=2)  # on the kept memory
    assert again.absdiff.quantiles == first.absdiff.quantiles and again.reldiff.median == first.reldiff.median
    assert 0 < _native.key_cache_bytes() <= 64 << 20


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_strided_and_misaligned_views_give_the_in_place_figures(dtype):
    a, b = pair((1 << 18) + 3, 4, dtype)
    want = error_stats(a, b, quantiles=QS)
    buf = bytearray(a.nbytes + 1)
    mis = np.frombuffer(buf, dtype=dtype, offset=1, count=a.size)
    mis[...] = a
    wide = np.zeros(2 * b.size, dtype=dtype)
    wide[::2] = b
    for x, y in ((mis, b), (a, wide[::2])):
        got = error_stats(x, y, quantiles=QS)
        for name in ("mismatches", "l2", "cosine", "mse"):
            assert getattr(got, name) == getattr(want, name), name
        for stream in ("absdiff", "reldiff", "a", "b"):
            g, w = getattr(got, stream), getattr(want, stream)
            assert (g.min, g.max, g.mean, g.var, g.median) == (w.min, w.max, w.mean, w.var, w.median), stream
        assert got.absdiff.quantiles == want.absdiff.quantiles


@pytest.mark.slow  # millions of elements against a NumPy oracle
@pytest.mark.parametrize("threads", [1, 2])
def test_large_float64_pair_matches_the_oracle(threads):
    a, b = pair(LARGE, 5, np.float64)  # LARGE: a partial last block of 5, not whole vectors
    check_against_oracle(a, b, threads=threads)


@pytest.mark.parametrize("qs", [QS, (0.9,), ()])
def test_float64_ties_and_a_partial_last_block(qs):
    """Differences on a grid of 1/16 (each absdiff value shared by ~10^5 elements), a last
    block of 1023 elements (padded to whole vectors, its sums done exactly), and six, three
    or two rank windows per stream."""
    rng = np.random.default_rng(6)
    n = (1 << 20) + 1023
    a = rng.integers(-1000, 1000, n) / 8.0
    b = a + rng.integers(-20, 21, n) / 16.0
    b[::997] = 0
    check_against_oracle(a, b, qs=qs)


def test_nan_and_infinities_in_a_large_float64_pair():
    a, b = pair(LARGE, 7, np.float64)
    a[654_321] = np.inf
    b[654_321] = np.inf  # inf - inf: NaN, or 0 when infinities compare equal
    b[2_000_003] = -np.inf
    a[4_000_000] = 1e300  # finite, but its block's sums of squares overflow
    s = check_against_oracle(a, b)
    assert math.isnan(s.absdiff.median) and all(math.isnan(v) for v in s.absdiff.quantiles.values())
    s = check_against_oracle(a, b, ice=True)
    assert not math.isnan(s.absdiff.median) and s.absdiff.inf_count == 1


@pytest.mark.slow  # millions of elements against a NumPy oracle
@pytest.mark.parametrize("other", ["float32", "float16", "int32", "uint8"])
def test_float64_beside_another_dtype_is_loaded_into_the_one_pass_kernel(other):
    a, b = pair((1 << 19) + 17, 8, np.float64)
    a = (a * 20).astype(other)
    check_against_oracle(a, b, threads=2)
    check_against_oracle(b, a)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_portable_kernels_give_the_same_figures(dtype, kernel_paths):
    """Every instruction-set path this CPU has (POLY_NATIVE_ARCH=generic, =avx2, and AVX-512 where
    present) gives the same figures: order statistics, extrema, indices and counts identical,
    sums within float64 rounding."""
    script = (
        "import json, sys, numpy as np\n"
        "from poly.compare import error_stats\n"
        "rng = np.random.default_rng(9)\n"
        "n = (1 << 19) + 3\n"
        "a = (rng.standard_normal(n) * 3).astype(sys.argv[1])\n"
        "b = (a + rng.integers(-8, 9, n) / 1024).astype(sys.argv[1])\n"
        "s = error_stats(a, b, quantiles=(0.5, 0.9, 0.95, 0.99))\n"
        "d, streams = [s.absdiff, s.reldiff], [s.absdiff, s.reldiff, s.a, s.b]\n"
        "print(json.dumps({'exact': [s.mismatches] + [[x.median, sorted(x.quantiles.items())] for x in d]"
        " + [[x.min, x.max, x.argmin, x.argmax] for x in streams],"
        " 'sums': [s.l2, s.cosine, s.a.mean_abs, s.b.mean_abs] + [v for x in streams for v in (x.mean, x.var)]}))\n"
    )
    got = {}
    for arch in kernel_paths:
        env = dict(os.environ, POLY_NATIVE_ARCH=arch)
        out = subprocess.run([sys.executable, "-c", script, dtype], capture_output=True, text=True, env=env,
                             timeout=300)
        assert out.returncode == 0, out.stderr
        got[arch] = json.loads(out.stdout)
    for arch in got:
        assert got[arch]["exact"] == got["generic"]["exact"], arch
        assert got[arch]["sums"] == pytest.approx(got["generic"]["sums"], rel=1e-12), arch


def test_kernel_arch_names_the_instruction_set_path():
    best = _native.kernel_arch()
    assert best in ("avx512", "avx2", "generic")
    # generic forces the portable path; avx2 goes no further than AVX2 (the best path below AVX-512)
    expected = {"generic": "generic", "avx2": "generic" if best == "generic" else "avx2"}
    for forced, name in expected.items():
        env = dict(os.environ, POLY_NATIVE_ARCH=forced)
        out = subprocess.run([sys.executable, "-c", "from poly import _native; print(_native.kernel_arch())"],
                             capture_output=True, text=True, env=env, timeout=120)
        assert out.stdout.strip() == name, out.stderr


# Ties everywhere: two equal outputs (absdiff and reldiff 0 everywhere), differences that take a
# handful of values (b = a + 1e-6 in float32), integer outputs. The medians and quantiles come from
# the pass's extrema where a stream holds one value ("constant"), from the rank windows gathering
# the tied keys however many (up to 2^22 a stream: "windows"), or, for a small input, from the
# radix select, whose in-memory step skips ranges of equal keys; every value equals NumPy's.
@pytest.mark.parametrize("n", [4000, 70_001, 300_001])
@pytest.mark.parametrize("kind", ["equal", "quantized", "integers"])
def test_ties_everywhere_take_no_radix_passes(kind, n):
    rng = np.random.default_rng(n)
    if kind == "integers":
        a = rng.integers(0, 4, n).astype(np.int32)
        b = rng.integers(0, 4, n).astype(np.int32)
    else:
        a = rng.random(n).astype(np.float32)
        b = a.copy() if kind == "equal" else a + np.float32(1e-6)
    qs = (0.1, 0.5, 0.9, 0.99)
    method = order_method(a, b, qs)
    if kind == "equal":
        assert method == "constant"
    elif n >= 1 << 15:  # (the rank windows' smallest input)
        assert method == "windows"
    ad, rd, _ = oracle.diffs(a, b)
    s = error_stats(a, b, quantiles=qs, threads=1)
    for got, arr in ((s.absdiff, ad), (s.reldiff, rd)):
        wq = oracle.quantiles(arr, qs)
        for q in qs:
            assert close(got.quantiles[q], wq[q], rel=0), (kind, n, q, got.quantiles[q], wq[q])
        assert close(got.median, oracle.moments(arr)["median"], rel=0)


def test_a_stream_of_infinities_takes_numpys_quantiles():
    # absdiff and reldiff infinite everywhere (a = inf, b = 0): constant streams, whose median is
    # inf and whose interpolated quantiles are NaN, as NumPy's lerp of inf and inf gives.
    a = np.full(5000, np.inf, dtype=np.float64)
    b = np.zeros(5000, dtype=np.float64)
    qs = (0.5, 0.9)
    assert order_method(a, b, qs) == "constant"
    s = error_stats(a, b, quantiles=qs, threads=1)
    ad, rd, _ = oracle.diffs(a, b)
    for got, arr in ((s.absdiff, ad), (s.reldiff, rd)):
        want = oracle.quantiles(arr, qs)
        for q in qs:
            assert close(got.quantiles[q], want[q], rel=0), (q, got.quantiles[q], want[q])
        assert got.median == math.inf == oracle.moments(arr)["median"]
