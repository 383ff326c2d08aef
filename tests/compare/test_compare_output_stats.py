"""The statistics line of each output in a comparison's report (``pair_stats`` and ``array_stats``
of ``poly.compare.stats.report_lines``): medians and p90/p95/p99 against NumPy's. An output whose
every element holds one value (a constant tensor, a mask of zeros) takes them from its extrema,
without the native engine's pass over it; these tests check both the figures and that no pass runs
for such an output."""

from __future__ import annotations

import math

import numpy as np
import pytest

from poly import _native
from poly.compare.stats.report_lines import LOGGED_QUANTILES, array_stats, pair_stats


def numpy_figures(arr: np.ndarray) -> list[float]:
    """NumPy's median and p90/p95/p99 of ``arr`` in float64, as the report shows them."""
    wide = arr.astype(np.float64)
    with np.errstate(invalid="ignore"):  # inf - inf inside NumPy's interpolation: NaN, as poly gives
        return [float(np.median(wide)), *(float(q) for q in np.quantile(wide, LOGGED_QUANTILES))]


def figures(stats) -> list[float]:
    return [stats.median, *stats.quantiles.values()]


def assert_figures(got: list[float], want: list[float]) -> None:
    for g, w in zip(got, want, strict=True):
        assert (math.isnan(g) and math.isnan(w)) or g == w, (got, want)


@pytest.fixture
def asked(monkeypatch) -> list[list[str]]:
    """The streams of each call of the native engine's order statistics, in order."""
    calls: list[list[str]] = []
    order_stats = _native.order_stats

    def recording(a, b, code_a, code_b, streams, *rest):
        calls.append(list(streams))
        return order_stats(a, b, code_a, code_b, streams, *rest)

    monkeypatch.setattr(_native, "order_stats", recording)
    return calls


ONE_VALUE = {
    "float32, 2^20": np.full(1 << 20, 0.0123, np.float32),
    "float64, odd count": np.full(1001, -2.5),
    "float64 near the largest, even count": np.full(8, 1.5e308),
    "float32 zeros": np.zeros(300_000, np.float32),
    "float16": np.full(4, 1.5, np.float16),
    "float32 infinities": np.full(5, np.inf, np.float32),
}


@pytest.mark.parametrize("arr", list(ONE_VALUE.values()), ids=list(ONE_VALUE))
def test_one_valued_outputs_match_numpy_with_no_pass(arr, asked):
    rng = np.random.default_rng(0)
    varied = rng.standard_normal(arr.shape).astype(arr.dtype)
    one, other = pair_stats(arr, varied)
    expected_one = numpy_figures(arr)
    if math.isinf(arr.flat[0]):
        expected_one[0] = float(arr.flat[0])  # the median of equal infinities is that infinity
    assert_figures(figures(one), expected_one)
    assert_figures(figures(other), numpy_figures(varied))
    finite = math.isfinite(float(arr.flat[0]))
    # the native engine is asked for the varied output only (infinities are not taken as one value)
    assert asked == ([["b"]] if finite else [["a", "b"]])
    asked.clear()
    assert_figures(figures(array_stats(arr)), expected_one)
    assert asked == ([] if finite else [["a"]])


def test_signed_zeros_are_left_to_the_native_engine(asked):
    # -0.0 == +0.0, so equal extrema do not prove one value: the sign bits decide
    mixed = np.array([0.0, -0.0] * 50, np.float32)
    negative = np.full(10, -0.0, np.float32)
    positive = np.zeros(10, np.float32)
    for arr in (mixed, negative):
        asked.clear()
        stats = array_stats(arr)
        assert asked == [["a"]]
        assert all(v == 0 for v in figures(stats))
    asked.clear()
    assert figures(array_stats(positive)) == [0.0] * 4 and asked == []
    assert all(math.copysign(1.0, v) == 1.0 for v in figures(array_stats(positive)))
