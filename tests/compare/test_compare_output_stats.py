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


# -- the value summaries the simple comparison already computed (known_summaries) -------------

@pytest.fixture
def error_stats_calls(monkeypatch) -> list[tuple[int, int]]:
    """The arrays (by id) of each call of the native engine's error statistics."""
    calls: list[tuple[int, int]] = []
    error_stats = _native.error_stats

    def recording(a, b, *rest, **kwargs):
        calls.append((id(a), id(b)))
        return error_stats(a, b, *rest, **kwargs)

    monkeypatch.setattr(_native, "error_stats", recording)
    return calls


def _report(out0, out1):
    """The report's statistics of the two outputs, and the lines the comparator logs for them."""
    import io
    from contextlib import redirect_stdout

    from poly.compare.results import IterationResult
    from poly.compare.stats.report_lines import log_compared_output_stats
    from poly.core import G_LOGGER

    it0, it1 = IterationResult({"y": out0}, runner_name="r0"), IterationResult({"y": out1}, runner_name="r1")
    from poly.compare import CompareFunc

    with G_LOGGER.verbosity(G_LOGGER.INFO):
        matched = CompareFunc.simple(atol=1e-2)(it0, it1)
        text = io.StringIO()
        with redirect_stdout(text):
            log_compared_output_stats(it0, it1, [matched], "r0", "r1")
    return text.getvalue()


def test_the_report_reuses_the_comparisons_summaries_of_the_same_arrays(error_stats_calls, monkeypatch):
    from poly.compare.stats import report_lines

    rng = np.random.default_rng(3)
    out0 = rng.standard_normal((4, 500)).astype(np.float32)
    out1 = (out0 + rng.standard_normal((4, 500)).astype(np.float32) * np.float32(1e-3)).astype(np.float32)
    reused = _report(out0, out1)
    assert len(error_stats_calls) == 1  # the comparison's pass only: the report reused its summaries
    # the same lines as the report computing them itself
    monkeypatch.setattr(report_lines, "known_value_summaries", lambda a, b: None)
    error_stats_calls.clear()
    computed = _report(out0, out1)
    assert len(error_stats_calls) == 2
    strip = [line for line in computed.splitlines() if "r0" in line or "r1" in line or "mean=" in line]
    assert strip and strip == [line for line in reused.splitlines() if "r0" in line or "r1" in line or "mean=" in line]
    # other arrays (copies of the same values) are never taken for the compared ones
    error_stats_calls.clear()
    pair_stats(out0.copy(), out1.copy())
    assert len(error_stats_calls) == 1


def test_a_remembered_pair_goes_with_its_first_array():
    import gc

    from poly.compare.stats import known_summaries
    from poly.compare.stats.native import error_stats

    before = len(known_summaries._KNOWN)
    pairs = [(np.arange(10, dtype=np.float32) + i, np.arange(10, dtype=np.float32)) for i in range(50)]
    for a, b in pairs:
        known_summaries.remember_value_summaries(a, b, error_stats(a, b))  # (its median not asked: a closure over a, b)
    assert len(known_summaries._KNOWN) == before + 50
    a0, b0 = pairs[0]
    assert known_summaries.known_value_summaries(a0, b0)[0].max == 9.0
    assert known_summaries.known_value_summaries(a0, pairs[1][1]) is None  # the other array must match too
    del pairs, a, b, a0, b0
    gc.collect()
    assert len(known_summaries._KNOWN) == before
    known_summaries.remember_value_summaries([1.0], [2.0], None)  # (no NumPy arrays: nothing kept)
    assert len(known_summaries._KNOWN) == before


def test_a_detached_summary_keeps_its_figures_and_no_array():
    import gc
    import weakref

    from poly.compare.stats.native import error_stats

    a, b = np.array([3.0, -1.0, 2.0], np.float32), np.array([1.0, 1.0, 1.0], np.float32)
    stats = error_stats(a, b)
    kept = stats.a.detached()
    assert (kept.mean, kept.min, kept.argmin, kept.max, kept.argmax) == (stats.a.mean, -1.0, (1,), 3.0, (0,))
    for name in type(kept).__slots__:  # every figure copied (the copy names each slot)
        if name not in ("_median", "_median_source"):
            assert getattr(kept, name) == getattr(stats.a, name), name
    alive = weakref.ref(a)
    del a, b, stats
    gc.collect()
    assert alive() is None  # the detached copy does not hold the arrays
    with pytest.raises(LookupError):
        kept.median  # noqa: B018 - (never computed: its arrays are gone)
    known = error_stats(np.arange(5.0), np.arange(5.0)).a
    assert known.median == 2.0 and known.detached().median == 2.0  # a median computed before is kept


def test_a_report_nobody_sees_computes_nothing(error_stats_calls, asked, capsys):
    # every line of the report is at INFO or below: at WARNING, neither its statistics nor its
    # order statistics are computed; with this module's own severity at INFO, they are
    from poly.compare.results import IterationResult
    from poly.compare.stats.report_lines import log_compared_output_stats
    from poly.core import G_LOGGER

    rng = np.random.default_rng(5)
    out0 = rng.standard_normal(1000).astype(np.float32)
    it0, it1 = IterationResult({"y": out0}, runner_name="r0"), IterationResult({"y": out0 + 1}, runner_name="r1")
    with G_LOGGER.verbosity(G_LOGGER.WARNING):
        log_compared_output_stats(it0, it1, [{"y": True}], "r0", "r1")
        assert error_stats_calls == [] and asked == [] and capsys.readouterr().out == ""
        with G_LOGGER.verbosity({"": G_LOGGER.WARNING, "compare/stats/report_lines.py": G_LOGGER.INFO}):
            log_compared_output_stats(it0, it1, [{"y": True}], "r0", "r1")
    assert len(error_stats_calls) == 1 and "r1: y" in capsys.readouterr().out


def test_only_the_comparison_function_remembers_summaries():
    # a dataset's validation computes the same statistics per sample (polygraphy_error_stats) and
    # reports no output: nothing is kept for it
    from poly.compare import CompareFunc
    from poly.compare.results import IterationResult
    from poly.compare.stats import known_summaries
    from poly.compare.stats.polygraphy_precision import polygraphy_error_stats

    a, b = np.arange(8, dtype=np.float32), np.arange(8, dtype=np.float32) + 1
    options = CompareFunc.simple().options_for("y")
    polygraphy_error_stats(a, b, options)
    assert known_summaries.known_value_summaries(a, b) is None
    CompareFunc.simple()(IterationResult({"y": a}, runner_name="r0"), IterationResult({"y": b}, runner_name="r1"))
    assert known_summaries.known_value_summaries(a, b) is not None


@pytest.fixture
def asked_quantiles(monkeypatch) -> list[list[float]]:
    """The quantiles each call of the native engine's error statistics computed."""
    calls: list[list[float]] = []
    error_stats = _native.error_stats

    def recording(a, b, code_a, code_b, atol, rtol, quantiles, *rest):
        calls.append(list(quantiles))
        return error_stats(a, b, code_a, code_b, atol, rtol, quantiles, *rest)

    monkeypatch.setattr(_native, "error_stats", recording)
    return calls


def test_the_logged_quantiles_are_computed_only_when_their_line_prints(asked_quantiles, capsys):
    # p90/p95/p99 of the differences appear in the statistics lines alone: at WARNING the simple
    # comparison computes only what its verdict and result hold (the median, the checked quantile)
    from poly.compare import CompareFunc
    from poly.compare.results import IterationResult
    from poly.core import G_LOGGER

    rng = np.random.default_rng(11)
    a = rng.standard_normal(2001).astype(np.float32)
    b = (a + rng.standard_normal(2001).astype(np.float32) * np.float32(1e-3)).astype(np.float32)
    absdiff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    it0, it1 = IterationResult({"y": a}, runner_name="r0"), IterationResult({"y": b}, runner_name="r1")

    def compare(**options):
        asked_quantiles.clear()
        result = CompareFunc.simple(**options)(it0, it1)["y"]
        return result, list(asked_quantiles[0]), capsys.readouterr().out

    with G_LOGGER.verbosity(G_LOGGER.WARNING):
        result, quantiles, out = compare(atol=1.0)
        assert quantiles == [] and out == ""
        assert result and result.median_absdiff == pytest.approx(float(np.median(absdiff)), rel=1e-6)
        result, quantiles, _ = compare(check_error_stat="quantile", error_quantile=0.5, atol=0.0, rtol=0.0)
        assert quantiles == [0.5] and not result
        assert result.quantile_absdiff == pytest.approx(float(np.quantile(absdiff, 0.5)), rel=1e-6)
        with G_LOGGER.verbosity({"": G_LOGGER.WARNING, "compare/stats/report_lines.py": G_LOGGER.INFO}):
            _, quantiles, out = compare(atol=1.0)  # this module's own severity shows the lines
        assert quantiles == list(LOGGED_QUANTILES) and "p99=" in out
    with G_LOGGER.verbosity(G_LOGGER.INFO):
        _, quantiles, out = compare(atol=1.0)
    assert quantiles == list(LOGGED_QUANTILES)
    line = next(text for text in out.splitlines() if "Absolute Difference | Stats" in text)
    assert f"p99={float(np.quantile(absdiff.astype(np.float32), 0.99)):.5g}" in line
