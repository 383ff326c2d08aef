"""The native engine's threaded passes (error statistics, order selection, histograms) give the
same answers on 2, 3 and 4 threads as on one.

Inputs hold at least 2^16 elements, the size from which the engine splits a pass over worker
threads, so the workers really run in parallel: these are the tests the ThreadSanitizer build
runs (tests/native/test_native_sanitizers.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from poly import _native
from poly.compare import error_stats

THREADS = [2, 3, 4]
QUANTILES = (0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 1.0)


def inputs(n: int, dtype: str, seed: int, special: str = "finite") -> tuple[np.ndarray, np.ndarray]:
    """A pair of close arrays; ``special``: "inf" puts infinities in ``b`` (infinite absolute and
    NaN relative differences, counted by every worker), "nan" NaNs in ``a`` as well."""
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(n) * 10).astype(dtype)
    b = (a.astype(np.float64) + rng.standard_normal(n) * 0.01).astype(dtype)
    if special != "finite" and np.dtype(dtype).kind == "f":
        b[::1001] = np.inf
        if special == "nan":
            a[7::997] = np.nan  # every order statistic of the differences becomes NaN
    return a, b


def exact_fields(s) -> tuple:
    """The statistics that do not depend on the order of summation: they must match exactly."""
    streams = []
    for d in (s.absdiff, s.reldiff):
        streams.append((d.min, d.max, d.argmin, d.argmax, d.median, tuple(sorted(d.quantiles.items())),
                        d.nan_count, d.inf_count))
    for v in (s.a, s.b):
        streams.append((v.min, v.max, v.argmin, v.argmax, v.nan_count, v.inf_count))
    return (s.mismatches, s.compute_dtype, *streams)


def same(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or x == y


def canonical(value):
    """``value`` with every NaN replaced by a marker, so that == treats NaNs as equal."""
    if isinstance(value, (tuple, list)):
        return tuple(canonical(v) for v in value)
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


# 2^14 + 5 elements gather their keys whole (radix select finished in memory, one thread: the
# input is too small to split); 2^16 + 5 and 2^18 + 3 take the one-pass windows of order selection
# (radix select where the windows miss, as with NaN), on several threads.
@pytest.mark.parametrize("n", [(1 << 14) + 5, (1 << 16) + 5, (1 << 18) + 3])
@pytest.mark.parametrize(("dtype", "special"), [
    *((dtype, special) for dtype in ("float32", "float64", "float16") for special in ("finite", "inf", "nan")),
    ("int32", "finite"),
])
def test_error_stats_do_not_depend_on_the_thread_count(n, dtype, special):
    a, b = inputs(n, dtype, seed=n % 97, special=special)
    one = error_stats(a, b, quantiles=QUANTILES, threads=1)
    for threads in THREADS:
        many = error_stats(a, b, quantiles=QUANTILES, threads=threads)
        assert canonical(exact_fields(many)) == canonical(exact_fields(one)), threads
        # sums are merged in partition order: equal up to rounding
        for got_s, want_s in ((many.absdiff, one.absdiff), (many.reldiff, one.reldiff)):
            assert got_s.mean == pytest.approx(want_s.mean, rel=1e-12, nan_ok=True)
            assert got_s.var == pytest.approx(want_s.var, rel=1e-9, nan_ok=True)
        # the value medians are selected lazily, on their own threaded pass
        assert same(many.a.median, one.a.median) and same(many.b.median, one.b.median)


@pytest.mark.parametrize("stream", ["a", "absdiff", "reldiff"])
def test_order_stats_do_not_depend_on_the_thread_count(stream):
    a, b = inputs(300_007, "float32", seed=3)
    code = _native.DTYPE_CODES["float32"]
    qs = [None, 0.1, 0.5, 0.999]  # None: the median
    want = _native.order_stats(a, b, code, code, stream, qs, False, 1)
    values = {"a": a, "absdiff": np.abs(a - b), "reldiff": np.abs(a - b) / np.abs(b)}[stream].astype(np.float64)
    if stream != "reldiff":  # the engine divides in float32; NumPy's float32 division may round apart
        assert want[0] == pytest.approx(float(np.median(values)), rel=1e-12)
        for q, got in zip(qs[1:], want[1:], strict=True):
            assert got == pytest.approx(float(np.quantile(values, q)), rel=1e-12), q
    else:
        assert want[0] == pytest.approx(float(np.median(values)), rel=1e-6)
    for threads in THREADS:
        got = _native.order_stats(a, b, code, code, stream, qs, False, threads)
        assert canonical(got) == canonical(want), threads


@pytest.mark.parametrize("stream", ["a", "absdiff"])
def test_histograms_do_not_depend_on_the_thread_count(stream):
    a, b = inputs(200_003, "float64", seed=5, special="inf")
    code = _native.DTYPE_CODES["float64"]
    values = a if stream == "a" else np.abs(a - b)
    values = values[np.isfinite(values)]
    edges = np.linspace(values.min(), values.max(), 33)
    want, _ = np.histogram(values, bins=edges)
    other = None if stream == "a" else b
    for threads in [1, *THREADS]:
        got = _native.histogram(a, other, code, code, stream, edges.tolist(), False, threads)
        assert got == want.tolist(), threads
