"""
poly's verdicts equal Polygraphy's (the installed reference) where a statistic sits on, or a few
ulps from, its tolerance: both libraries are called on the same outputs for every CompareFunc,
every check_error_stat and the dtypes both accept.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from poly.compare import CompareFunc as PolyCompareFunc
from poly.compare.results import IterationResult as PolyIterationResult
from poly.compare.stats.polygraphy_precision import float32_tolerance_at_most, near_bound
from poly.core import G_LOGGER as POLY_LOGGER

polygraphy_comparator = pytest.importorskip("polygraphy.comparator", reason="Polygraphy is not installed")
from polygraphy.comparator.struct import IterationResult as PgIterationResult  # noqa: E402
from polygraphy.logger import G_LOGGER as PG_LOGGER  # noqa: E402

PgCompareFunc = polygraphy_comparator.CompareFunc

STATS = ["elemwise", "max", "mean", "median", "quantile"]
DTYPES = ["float16", "float32", "float64", "int8", "int32", "int64", "bool"]


@pytest.fixture(autouse=True)
def _quiet():
    pg, poly = PG_LOGGER.module_severity, POLY_LOGGER.module_severity
    PG_LOGGER.module_severity = POLY_LOGGER.module_severity = 50
    yield
    PG_LOGGER.module_severity, POLY_LOGGER.module_severity = pg, poly


def _run(pg_func, poly_func, out0, out1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pg = pg_func(PgIterationResult({"x": out0}, runner_name="r0"), PgIterationResult({"x": out1}, runner_name="r1"))
    poly = poly_func(PolyIterationResult({"x": out0}, runner_name="r0"),
                     PolyIterationResult({"x": out1}, runner_name="r1"))
    return pg["x"], poly["x"]


def _simple(out0, out1, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _run(PgCompareFunc.simple(**kwargs), PolyCompareFunc.simple(**kwargs), out0, out1)


def _pg_stat(pg_result, stat, which):
    name = "max" if stat == "elemwise" else stat
    return getattr(pg_result, f"{name}_{which}")


def _assert_same(pg, poly, stat):
    assert bool(poly) == bool(pg), f"{stat}: Polygraphy {bool(pg)}, poly {bool(poly)}"
    for which in ("absdiff", "reldiff"):
        expected, got = _pg_stat(pg, stat, which), _pg_stat(poly, stat, which)
        if expected is None or math.isnan(expected) or math.isinf(expected):
            assert got is None or math.isnan(got) or got == expected
        else:
            assert got == pytest.approx(expected, rel=1e-5, abs=1e-30), which


def test_float32_mean_on_its_tolerance():
    # float64 mean 0.41250000149, float32 (NumPy's, Polygraphy's) 0.41249999: Polygraphy passes
    out0 = np.array([0, 1, 2, 3], np.float32)
    out1 = np.array([0.15, 1.25, 2.5, 3.75], np.float32)
    pg, poly = _simple(out0, out1, check_error_stat="mean", atol=0.4125, rtol=0.0)
    assert bool(pg) and bool(poly)
    assert poly.mean_absdiff == pg.mean_absdiff == float(np.float32(0.4125))


def test_float32_elemwise_compares_with_the_float64_tolerance():
    # |0 - 0.1f| = 0.100000001 > 0.1: Polygraphy fails even though float32(0.1) equals it
    out0, out1 = np.array([0.0], np.float32), np.array([0.1], np.float32)
    pg, poly = _simple(out0, out1, check_error_stat="elemwise", atol=0.1, rtol=0.0)
    assert not bool(pg) and not bool(poly)
    pg, poly = _simple(out0, out1, check_error_stat="elemwise", atol=float(np.float32(0.1)), rtol=0.0)
    assert bool(pg) and bool(poly)


def _pair(dtype, rng, n=37):
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool), rng.integers(0, 2, n).astype(bool)
    if np.dtype(dtype).kind == "i":
        info = np.iinfo(dtype)
        lo, hi = max(info.min // 2, -1000), min(info.max // 2, 1000)
        return rng.integers(lo, hi, n).astype(dtype), rng.integers(lo, hi, n).astype(dtype)
    return (rng.standard_normal(n) * 3).astype(dtype), (rng.standard_normal(n) * 3).astype(dtype)


@pytest.mark.parametrize("stat", STATS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tolerance_exactly_on_each_statistic(dtype, stat):
    """The tolerance set to Polygraphy's own figure (and one ulp either side): same verdicts."""
    if dtype == "bool" and stat == "quantile":
        pytest.skip("Polygraphy cannot take a quantile of bool outputs (NumPy refuses to subtract bools)")
    rng = np.random.default_rng(abs(hash((dtype, stat))) % 2**32)
    out0, out1 = _pair(dtype, rng)
    pg, _ = _simple(out0, out1, check_error_stat=stat, atol=0.0, rtol=0.0, error_quantile=0.9)
    abs_value = _pg_stat(pg, stat, "absdiff")
    for atol in (abs_value, np.nextafter(abs_value, -np.inf), np.nextafter(abs_value, np.inf),
                 float(np.float32(abs_value)), float32_tolerance_at_most(abs_value)):
        rel_value = _pg_stat(pg, stat, "reldiff")
        for rtol in (0.0, rel_value) if math.isfinite(rel_value) else (0.0,):
            pg, poly = _simple(out0, out1, check_error_stat=stat, atol=float(atol), rtol=float(rtol),
                               error_quantile=0.9)
            _assert_same(pg, poly, stat)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dtype=st.sampled_from(["float16", "float32", "float64"]),
    stat=st.sampled_from(STATS),
    n=st.integers(1, 300),
    seed=st.integers(0, 2**32 - 1),
    nudge=st.integers(-2, 2),
)
def test_random_outputs_with_tolerances_next_to_the_statistic(dtype, stat, n, seed, nudge):
    rng = np.random.default_rng(seed)
    out0 = rng.uniform(-4, 4, n).astype(dtype)
    out1 = (out0.astype(np.float64) + rng.uniform(-0.3, 0.3, n)).astype(dtype)
    pg, _ = _simple(out0, out1, check_error_stat=stat, atol=0.0, rtol=0.0, error_quantile=0.75)
    atol = _pg_stat(pg, stat, "absdiff")
    step = np.float32(atol) if dtype != "float64" else atol
    for _ in range(abs(nudge)):
        step = np.nextafter(step, np.inf if nudge > 0 else -np.inf)
    pg, poly = _simple(out0, out1, check_error_stat=stat, atol=float(step), rtol=0.0, error_quantile=0.75)
    _assert_same(pg, poly, stat)


METRICS = [
    ("L2CompareFunc", "l2_threshold", "l2_norm"),
    ("CosineSimilarityCompareFunc", "cosine_similarity_threshold", "cosine_similarity"),
    ("PsnrCompareFunc", "psnr_threshold", "psnr"),
    ("SnrCompareFunc", "snr_threshold", "snr"),
]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
@pytest.mark.parametrize(("cls", "arg", "field"), METRICS)
def test_metric_thresholds_on_polygraphy_figure(cls, arg, field, dtype):
    import poly.compare as poly_compare

    rng = np.random.default_rng(7)
    out0, out1 = _pair(dtype, rng, n=64)
    if dtype == "int32":
        out0, out1 = out0 // 10, out1 // 10
    pg_cls, poly_cls = getattr(polygraphy_comparator, cls), getattr(poly_compare, cls)
    pg, _ = _run(pg_cls(**{arg: 0.0}), poly_cls(**{arg: 0.0}), out0, out1)
    figure = getattr(pg, field)
    for bound in (figure, np.nextafter(figure, -np.inf), np.nextafter(figure, np.inf),
                  float(np.float32(figure)), float32_tolerance_at_most(figure)):
        pg, poly = _run(pg_cls(**{arg: float(bound)}), poly_cls(**{arg: float(bound)}), out0, out1)
        assert bool(poly) == bool(pg), (bound, getattr(pg, field), getattr(poly, field))
        assert getattr(poly, field) == pytest.approx(getattr(pg, field), rel=1e-5)


def test_indices_agree():
    out0 = np.array([[0.1, 0.9, 0.5], [0.3, 0.2, 0.1]], np.float32)
    out1 = np.array([[0.2, 0.8, 0.6], [0.1, 0.3, 0.2]], np.float32)
    for tol in (0, 1, 2):
        pg, poly = _run(PgCompareFunc.indices(index_tolerance=tol), PolyCompareFunc.indices(index_tolerance=tol),
                        out0, out1)
        assert bool(pg) == bool(poly)


def test_bfloat16_decides_on_float32_tolerance_rounding():
    # Polygraphy cannot compare ml_dtypes bfloat16 NumPy arrays; poly compares their float32
    # differences against the float64 tolerance as it does for float16/float32 outputs.
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
    out0 = np.array([0.0, 1.0], ml_dtypes.bfloat16)
    out1 = np.array([0.5, 1.0], ml_dtypes.bfloat16)
    func = PolyCompareFunc.simple(check_error_stat="elemwise", atol=0.5, rtol=0.0)
    assert bool(func(PolyIterationResult({"x": out0}), PolyIterationResult({"x": out1}))["x"])
    func = PolyCompareFunc.simple(check_error_stat="mean", atol=0.25, rtol=0.0)
    assert bool(func(PolyIterationResult({"x": out0}), PolyIterationResult({"x": out1}))["x"])
    func = PolyCompareFunc.simple(check_error_stat="mean", atol=float(np.nextafter(0.25, 0)), rtol=0.0)
    assert not bool(func(PolyIterationResult({"x": out0}), PolyIterationResult({"x": out1}))["x"])


def test_near_bound_flags_figures_within_float32_rounding_only():
    assert near_bound(0.4125000015, 0.4125, 4, [np.float32])
    assert not near_bound(0.42, 0.4125, 4, [np.float32])
    assert near_bound(1e-40, 0.0, 4, [np.float64])  # float32 flushes it to zero
    assert not near_bound(0.0, 0.0, 4, [np.float32])
    assert near_bound(1.0 + 2e-3, 1.0, 4, ["bfloat16"])


PAIRS = [("float32", "float64"), ("float16", "float32"), ("int32", "float32"), ("int8", "int8"), ("int64", "int32"),
         ("int32", "int32"), ("float64", "float64")]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=st.sampled_from(PAIRS), stat=st.sampled_from(STATS), n=st.integers(1, 200),
       seed=st.integers(0, 2**32 - 1), side=st.sampled_from(["abs", "rel"]))
def test_random_mixed_and_integer_pairs_on_the_tolerance(pair, stat, n, seed, side):
    rng = np.random.default_rng(seed)
    out0 = (rng.uniform(1, 50, n)).astype(pair[0])
    out1 = (rng.uniform(1, 50, n)).astype(pair[1])
    pg, _ = _simple(out0, out1, check_error_stat=stat, atol=0.0, rtol=0.0, error_quantile=0.5)
    figure = _pg_stat(pg, stat, "absdiff" if side == "abs" else "reldiff")
    atol, rtol = (figure, 0.0) if side == "abs" else (0.0, figure)
    pg, poly = _simple(out0, out1, check_error_stat=stat, atol=float(atol), rtol=float(rtol), error_quantile=0.5)
    _assert_same(pg, poly, stat)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_large_output_mean_on_its_float32_figure(dtype):
    """100k elements: NumPy's float32 sum (pairwise within 8192-element buffers for a float64
    input) is farther from the float64 mean than for small outputs; verdicts still agree."""
    rng = np.random.default_rng(11)
    out0 = rng.uniform(0, 1, 100_003).astype(dtype)
    out1 = (out0 + rng.uniform(0, 0.1, out0.size)).astype(dtype)
    pg, _ = _simple(out0, out1, check_error_stat="mean", atol=0.0, rtol=0.0)
    figure = pg.mean_absdiff
    for atol in (figure, float(np.nextafter(np.float32(figure), np.float32(-1))),
                 float(np.nextafter(np.float32(figure), np.float32(2)))):
        pg, poly = _simple(out0, out1, check_error_stat="mean", atol=atol, rtol=0.0)
        _assert_same(pg, poly, "mean")
        assert poly.mean_absdiff == pg.mean_absdiff


@pytest.mark.parametrize("size", [2, 70000])
@pytest.mark.parametrize("where", ["out0", "out1", "both", "both_same_place"])
@pytest.mark.parametrize("atol, rtol", [(0.0, 0.5), (0.5, 0.0), (0.0, 1e-5), (1e-5, 1e-5)])
@pytest.mark.parametrize("stat", STATS)
def test_nans_with_rtol_give_polygraphys_verdict(size, where, atol, rtol, stat):
    rng = np.random.default_rng(size)
    out0 = rng.normal(size=size).astype(np.float32)
    out1 = (out0 + rng.normal(scale=1e-3, size=size)).astype(np.float32)
    out0[0] = out1[0] = 0.0  # a zero reference: rtol alone never covers a difference there
    if where in ("out0", "both", "both_same_place"):
        out0[1] = np.nan
    if where in ("out1", "both"):
        out1[size - 1] = np.nan
    if where == "both_same_place":
        out1[1] = np.nan
    pg, poly = _simple(out0, out1, check_error_stat=stat, atol=atol, rtol=rtol)
    assert bool(poly) == bool(pg), f"{stat}: Polygraphy {bool(pg)}, poly {bool(poly)}"
