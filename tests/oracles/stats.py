"""A float64 NumPy oracle for poly.compare.stats.native, written for clarity, not speed."""

from __future__ import annotations

import math

import numpy as np

EPS = 2.220446049250313e-16
NARROW = {"float16", "bfloat16", "float32", "bool"}


def compute_mode(a: np.ndarray, b: np.ndarray) -> str:
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        return "bool"
    if a.dtype.name in NARROW and b.dtype.name in NARROW:
        return "float32"
    return "float64"


def widened(arr: np.ndarray) -> np.ndarray:
    """Polygraphy's widening before it subtracts: small integers to int32, uint32 to int64,
    float16 to float32."""
    name = arr.dtype.name
    if name in ("int8", "uint8", "int16", "uint16"):
        return arr.astype(np.int32)
    if name == "uint32":
        return arr.astype(np.int64)
    if name == "float16":
        return arr.astype(np.float32)
    return arr


def diffs(a, b, *, infinities_compare_equal=False):
    """absdiff and reldiff as the compute precision rounds them, plus that precision's type.
    Integer pairs are subtracted in the integer type NumPy promotes Polygraphy's widened
    inputs to (wrapping around, |INT_MIN| staying negative), then made float64; an integer
    divisor's absolute value is taken in its own (widened) type too."""
    mode = compute_mode(a, b)
    if mode == "bool":
        ad = np.logical_xor(a, b).astype(np.float64)
        den = np.where(b, 1.0, EPS)
        return ad, ad / den, np.float64
    ftype = np.float32 if mode == "float32" else np.float64
    wa, wb = widened(a), widened(b)
    integer_pair = a.dtype.kind in "biu" and b.dtype.kind in "biu"
    with np.errstate(all="ignore"):
        if integer_pair and np.result_type(wa, wb).kind in "iu":
            ad = np.abs(np.subtract(wa, wb)).astype(np.float64)
        else:
            x, y = a.astype(ftype), b.astype(ftype)
            ad = np.abs(x - y)
            if infinities_compare_equal:
                ad = np.where(np.isinf(x) & (x == y), ftype(0), ad).astype(ftype)
        y_abs = np.abs(wb).astype(ftype) if b.dtype.kind in "iu" else np.abs(b.astype(ftype))
        den = np.where(b == 0, ftype(EPS), y_abs).astype(ftype)
        rd = (ad / den).astype(ftype)
    return ad, rd, ftype


def mismatches(ad, rd, ftype, atol, rtol) -> int:
    return int(np.count_nonzero(~(ad <= ftype(atol)) & ~(rd <= ftype(rtol))))


def _sum_or_none(v: np.ndarray):
    """The float64 sum of v by NumPy's pairwise summation (error about log2(n) ulps of the sum
    of |v|, far inside what the tests allow), or None when it leaves float64."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.sum(v))
    return total if math.isfinite(total) else None


def _shifted_var(v: np.ndarray):
    """The variance from deviations around an element, so that a rounded mean cannot fake a
    spread; None where the deviations or their squares leave float64."""
    with np.errstate(over="ignore", invalid="ignore"):
        d = v - v[0]
        if not np.all(np.isfinite(d)):
            return None
        dm = _sum_or_none(d / v.size)
        if dm is None:
            return None
        sq = (d - dm) ** 2
        return _sum_or_none(sq / v.size) if np.all(np.isfinite(sq)) else None


def moments(v: np.ndarray) -> dict:
    v = np.asarray(v, dtype=np.float64).ravel()
    out = {}
    with np.errstate(all="ignore"):
        if v.size == 0:
            return {"empty": True}
        out["min"] = float(np.min(v))
        out["max"] = float(np.max(v))
        out["argmin"] = int(np.argmin(v))
        out["argmax"] = int(np.argmax(v))
        if np.all(np.isfinite(v)):
            # divided before summing, so that values near the float64 limit do not overflow
            # the sum (NumPy's own mean does); where even that leaves float64, the statistic is
            # not checked (None)
            out["mean"] = _sum_or_none(v / v.size)
            out["var"] = _shifted_var(v)
        else:
            # an infinity's mean is +-inf or NaN whatever the order of the sum, unless the finite
            # values' own sum leaves float64: inf plus that is then inf or NaN by the order the
            # values are added in (NumPy's pairwise order against the engine's), not checked (None)
            finite_sum = float(np.sum(v[np.isfinite(v)]))
            out["mean"] = float(np.mean(v)) if math.isfinite(finite_sum) else None
            out["var"] = math.nan
        out["median"] = float(np.median(v))
        out["mean_abs"] = float(np.mean(np.abs(v)))
        out["scale1"] = out["mean_abs"]
        out["scale2"] = float(np.mean(v * v))
    out["nan"] = int(np.isnan(v).sum())
    out["inf"] = int(np.isinf(v).sum())
    return out


def quantiles(v: np.ndarray, qs) -> dict:
    """NumPy's linear-interpolation quantiles of v, all from one partition."""
    v = np.asarray(v, dtype=np.float64).ravel()
    if v.size == 0 or not len(qs):
        return {q: math.nan for q in qs}
    with np.errstate(all="ignore"):  # inf - inf inside NumPy's interpolation is part of the oracle
        return dict(zip(qs, map(float, np.quantile(v, list(qs))), strict=True))
