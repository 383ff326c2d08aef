"""Integer outputs at the limits of their types against Polygraphy 0.53, run in-process: values
beyond 2^53 (not exact in float64), differences that overflow int32/int64/uint64 and wrap
around, |INT_MIN| (negative in NumPy's integer abs), zeros of an integer reference next to
all of these. Polygraphy widens int8/uint8/int16/uint16 to int32 and uint32 to int64, then
subtracts with NumPy's promotion; poly must report the same verdicts and statistics."""

from __future__ import annotations

import math

import numpy as np
import pytest

import poly.compare as pc
from poly.compare import error_stats

I32 = np.iinfo(np.int32)
I64 = np.iinfo(np.int64)
U64 = np.iinfo(np.uint64)
BIG = 2**53

STATS = ("elemwise", "max", "mean", "median", "quantile")
EXACT_FIELDS = ("max_absdiff", "max_reldiff", "median_absdiff", "median_reldiff", "quantile_absdiff",
                "quantile_reldiff")
# Polygraphy averages in float32 (numpy.mean(dtype=float32)), poly in float64: means agree to
# float32 rounding of the largest term.
MEAN_FIELDS = ("mean_absdiff", "mean_reldiff")

CASES = {
    "int64 beyond 2^53": (np.array([BIG + 1, BIG + 3, 3 * BIG + 1, -BIG - 1, 7], np.int64),
                          np.array([BIG, BIG + 2, BIG, -BIG, 7], np.int64)),
    "int64 wrapping": (np.array([I64.max, I64.min, I64.max, 5, -7, BIG + 1], np.int64),
                       np.array([-1, 1, I64.min + 1, 5, I64.max, BIG], np.int64)),
    "int64 min minus zero": (np.array([I64.min, 5, 3, BIG + 1], np.int64), np.array([0, 1, 3, BIG], np.int64)),
    "int64 min reference": (np.array([1, 5, 3, 9], np.int64), np.array([I64.min, 1, 3, I64.max], np.int64)),
    "int32 wrapping": (np.array([I32.max, I32.min, 5, 100, 2], np.int32), np.array([-1, 1, 5, -100, I32.min], np.int32)),
    "int8 against int32": (np.array([-128, 127, 5, 0], np.int8), np.array([I32.max, I32.min, 5, 1], np.int32)),
    "uint64 wrapping": (np.array([U64.max, 1, 2**63, 5, 2**60 + 1], np.uint64),
                        np.array([U64.max - 1, 2, 0, 5, 1], np.uint64)),
    "uint64 against bool": (np.array([0, 5, 2**64 - 1, 3], np.uint64), np.array([True, False, True, True])),
    "uint64 against int64": (np.array([U64.max, 3, 2**63 + 5, 0], np.uint64), np.array([-1, 2**62, I64.max, I64.min], np.int64)),
    "uint32 against int64": (np.array([2**32 - 1, 0, 7], np.uint32), np.array([I64.min + 1, I64.max, 7], np.int64)),
    "int64 against float32": (np.array([BIG + 1, 3, I64.max, -4], np.int64), np.array([2.0**53, 2.5, 1e18, 8], np.float32)),
    "float32 against int64 min": (np.array([1, 5, 3, 1e18], np.float32), np.array([I64.min, 1, 3, I64.max], np.int64)),
    "float64 against int32 min": (np.array([1, 5, -3, 1e10]), np.array([I32.min, 1, 3, I32.max], np.int32)),
}


def _close_mean(ours, theirs, scale):
    if ours is None or theirs is None:
        return ours is None and theirs is None
    ours, theirs = float(ours), float(theirs)
    if not (math.isfinite(ours) and math.isfinite(theirs)):
        return (math.isnan(ours) and math.isnan(theirs)) or ours == theirs
    return abs(ours - theirs) <= 1e-6 * scale + 1e-12


def _same(ours, theirs):
    if ours is None or theirs is None:
        return ours is None and theirs is None
    ours, theirs = float(ours), float(theirs)
    return (math.isnan(ours) and math.isnan(theirs)) or ours == theirs


def _largest(values) -> float:
    values = np.abs(np.asarray(values, np.float64))
    values = values[np.isfinite(values)]
    return float(values.max()) if values.size else 0.0


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("stat", STATS)
def test_integer_limits_match_polygraphy(pg, h, case, stat):
    a, b = CASES[case]
    # Polygraphy's own difference arrays give the scale of its float32 mean's rounding
    with np.errstate(all="ignore"):
        absdiff = np.abs(np.subtract(*(_widen(x) for x in (a, b))))
        reldiff = absdiff / np.abs(_widen(b))
    for atol, rtol in [(0.5, 0.5), (3.0, 0.0), (1e18, 1e-3), (0.0, 10.0), (1e20, 1e20)]:
        for q in (0.25, 0.5, 0.75, 0.9):
            options = {"check_error_stat": stat, "atol": atol, "rtol": rtol, "error_quantile": q}
            ours = pc.CompareFunc.simple(**options)(*h.iteration_results(pc, {"out": a}, {"out": b}))["out"]
            theirs = pg.compare.SimpleCompareFunc(**options)(*h.iteration_results(pg.comparator, {"out": a},
                                                                                    {"out": b}))["out"]
            where = (case, stat, atol, rtol, q)
            # A mean within float32 rounding of its tolerance may fall on either side of it
            # (Polygraphy sums in float32, poly in float64): no verdict to compare there.
            mean_on_edge = stat == "mean" and (
                _close_mean(theirs.mean_absdiff, atol, _largest(absdiff))
                or _close_mean(theirs.mean_reldiff, rtol, _largest(reldiff)))
            if not mean_on_edge:
                assert bool(ours) == bool(theirs), where
            for field in EXACT_FIELDS:
                assert _same(getattr(ours, field), getattr(theirs, field)), (*where, field)
            assert _close_mean(ours.mean_absdiff, theirs.mean_absdiff, _largest(absdiff)), where
            assert _close_mean(ours.mean_reldiff, theirs.mean_reldiff, _largest(reldiff)), where


def _widen(x: np.ndarray) -> np.ndarray:
    to = {"int8": np.int32, "uint8": np.int32, "int16": np.int32, "uint16": np.int32, "uint32": np.int64}.get(x.dtype.name)
    return x.astype(to) if to is not None else x


def test_error_stats_of_int64_beyond_2_53_are_exact():
    """The native engine subtracts int64 in int64: a difference of 1 between values beyond 2^53
    is 1, not the 0 or 2 of float64 subtraction."""
    a = np.array([BIG + 1, BIG + 3, 2**62 + 1], np.int64)
    b = np.array([BIG, BIG + 2, 2**62], np.int64)
    s = error_stats(a, b, atol=0.5, rtol=0.0, quantiles=(0.5,))
    assert s.absdiff.min == s.absdiff.max == s.absdiff.median == 1.0
    assert s.mismatches == 3
    assert s.reldiff.max == 1.0 / float(BIG)


def test_error_stats_wrap_around_as_numpy_does():
    """int64 max - (-1) wraps to INT64_MIN and NumPy's abs keeps it negative: that element is
    within every tolerance (absdiff <= atol), as in Polygraphy."""
    a = np.array([I64.max, 3], np.int64)
    b = np.array([-1, 1], np.int64)
    s = error_stats(a, b, atol=0.5, rtol=0.5)
    assert s.absdiff.min == float(I64.min) and s.absdiff.argmin == (0,)
    assert s.mismatches == 1  # only 3 vs 1
    u = error_stats(np.array([1], np.uint64), np.array([2], np.uint64))
    assert u.absdiff.max == float(2**64 - 1)  # uint64 1 - 2 wraps around
    # uint64 against int64 promotes to float64 in NumPy: no wrap-around there
    m = error_stats(np.array([U64.max], np.uint64), np.array([-1], np.int64))
    assert m.absdiff.max == float(U64.max) + 1.0
