"""
Statistics that decide a verdict, at the precision Polygraphy computes them.

Polygraphy computes its statistics with NumPy in the dtype of the difference arrays (float32 for
float16/float32 outputs) and its means with a float32 accumulator (``numpy.mean(x,
dtype=float32)``: pairwise sums within NumPy's buffers), while the native engine sums in float64.
The two figures differ by a few float32 ulps at most, so they give the same verdict unless the
statistic lies next to its tolerance. There, and only there, the deciding statistic is recomputed
exactly as Polygraphy computes it (``near_bound`` tells when); the common case stays native.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from poly.compare.stats.native import DiffStats

__all__ = [
    "near_bound",
    "polygraphy_diffs",
    "polygraphy_stat",
    "float32_tolerance_at_most",
    "decide_at_polygraphy_precision",
    "replaced",
    "polygraphy_metric",
]

_FLOAT32_EPS = 2.0**-23
_BFLOAT16_EPS = 2.0**-7
_NUMPY_BUFFER = 8192  # NumPy sums a casting reduction pairwise within buffers of this many elements
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_FLOAT32_TINY = 1e-36  # below this, float32 figures may have flushed to zero
_EPSILON = 2.220446049250313e-16
_WIDENED = {"int8": np.int32, "uint8": np.int32, "int16": np.int32, "uint16": np.int32, "uint32": np.int64,
            "float16": np.float32}
_NARROW_FLOATS = ("float16", "bfloat16", "float32")


def _cast_up(arr: np.ndarray) -> np.ndarray:
    to = _WIDENED.get(arr.dtype.name)
    return arr.astype(to) if to is not None else arr


def _relative_margin(size: int, element_eps: float) -> float:
    # each difference rounded in its dtype, then NumPy's float32 sum: pairwise within a buffer,
    # sequential across buffers
    return 2 * element_eps + 8 * _FLOAT32_EPS * (64 + size / _NUMPY_BUFFER)


def _has_bfloat16(dtypes) -> bool:
    return any(np.dtype(d).kind == "V" and np.dtype(d).name == "bfloat16" for d in dtypes)


def near_bound(value: float, bound: float, size: int, dtypes, absolute_margin: float = 0.0) -> bool:
    """
    Whether ``value`` (a float64 figure of outputs of ``dtypes`` with ``size`` elements) lies so
    close to ``bound`` that Polygraphy's float32 figure could fall on the other side of it.
    """
    value, bound = float(value), float(bound)
    if math.isnan(value) or math.isnan(bound) or value == bound == 0.0:
        return False
    if max(abs(value), abs(bound)) > _FLOAT32_MAX / 2 or min(abs(value), abs(bound)) < _FLOAT32_TINY:
        return not (math.isinf(value) and math.isinf(bound) and value == bound)
    gap, scale = abs(value - bound) - absolute_margin, max(abs(value), abs(bound))
    if gap > _relative_margin(size, _BFLOAT16_EPS) * scale:
        return False  # the common case: far from the bound whatever the dtypes
    eps = _BFLOAT16_EPS if _has_bfloat16(dtypes) else _FLOAT32_EPS
    return gap <= _relative_margin(size, eps) * scale


def float32_tolerance_at_most(tol: float) -> float:
    """The largest float32 value at most ``tol``: a float32 difference is at most ``tol`` exactly
    when it is at most this (Polygraphy compares float32 differences with float64 tolerances)."""
    tol = float(tol)
    if math.isnan(tol) or math.isinf(tol):
        return tol
    f = np.float32(tol)
    if float(f) > tol:
        f = np.nextafter(f, np.float32(-np.inf))
    return float(f)


def polygraphy_diffs(out0: np.ndarray, out1: np.ndarray, infinities_compare_equal: bool = False):
    """``(absdiff, reldiff)`` arrays exactly as Polygraphy's simple comparison builds them."""
    with np.errstate(all="ignore"):
        if out0.dtype == np.bool_ and out1.dtype == np.bool_:
            absdiff = np.logical_xor(out0, out1)
        else:
            absdiff = np.abs(np.subtract(_cast_up(out0), _cast_up(out1)))
            if infinities_compare_equal:
                absdiff = np.where(np.isinf(out0) & (out0 == out1), 0, absdiff)
        ref = np.array(_cast_up(out1), copy=True)
        if ref.dtype.kind == "f" or ref.dtype.name == "bfloat16":
            ref[ref == 0] += _EPSILON
        reldiff = np.divide(absdiff, np.abs(ref))
    return absdiff, reldiff


def polygraphy_stat(diff: np.ndarray, stat: str, quantile: float | None = None) -> float:
    """One statistic of a difference array as Polygraphy computes it (``max``, ``mean``,
    ``median`` or ``quantile``), as a Python float."""
    with np.errstate(all="ignore"):
        if stat == "mean":
            return float(np.mean(diff, dtype=np.float32))
        if diff.size == 0:
            return 0.0
        if stat == "max":
            return float(np.max(_cast_up(diff)))
        if stat == "median":
            return float(np.median(_cast_up(diff)))
        return float(np.quantile(diff, quantile))


def replaced(frozen, **changes):
    """A copy of a frozen dataclass instance with ``changes`` (``dataclasses.replace`` runs
    ``__init__`` again, which costs more than the comparison of a small output)."""
    if not hasattr(frozen, "__dict__"):
        new = copy.copy(frozen)
        for name, value in changes.items():
            object.__setattr__(new, name, value)
        return new
    new = object.__new__(type(frozen))
    new.__dict__.update(frozen.__dict__)
    new.__dict__.update(changes)
    return new


def _stat_of(diff: DiffStats, stat: str, quantile: float) -> float | None:
    if stat == "quantile":
        return diff.quantiles.get(quantile)
    return getattr(diff, stat)


def decide_at_polygraphy_precision(out0, out1, absd: DiffStats, rel: DiffStats, options,
                                   infinities_compare_equal: bool = False) -> tuple[DiffStats, DiffStats]:
    """
    The absolute and relative difference statistics with the mean as Polygraphy reports it (a
    float32) and the statistic ``options.check_error_stat`` names replaced by Polygraphy's own
    figure where the native one lies next to its tolerance, so that the verdict is Polygraphy's.
    """
    stat = options.check_error_stat
    deciding = stat in ("max", "mean", "median", "quantile")
    quantile = options.error_quantile
    diffs = None
    fixed = []
    for diff, tol, index in ((absd, options.atol, 0), (rel, options.rtol, 1)):
        changes = {"mean": _as_float32(diff.mean)}
        value = _stat_of(diff, stat, quantile) if deciding else None
        if value is not None and near_bound(value, tol, np.size(out0), (out0.dtype, out1.dtype)):
            if diffs is None:
                diffs = polygraphy_diffs(np.asarray(out0), np.asarray(out1), infinities_compare_equal)
            exact = polygraphy_stat(diffs[index], stat, quantile)
            if stat == "quantile":
                changes["quantiles"] = {**diff.quantiles, quantile: exact}
            else:
                changes[stat] = exact
        fixed.append(replaced(diff, **changes))
    return fixed[0], fixed[1]


def _as_float32(value: float) -> float:
    if abs(value) > _FLOAT32_MAX:  # inf, or beyond float32's range (NaN passes through below)
        return math.copysign(math.inf, value)
    return float(np.float32(value))


def _square(x: np.ndarray) -> np.ndarray:
    # Polygraphy passes the exponent as a 0-d int64 array, which promotes float32 to float64
    return np.power(x, np.asarray(2))


def polygraphy_metric(name: str, out0, out1) -> float:
    """The metric ``name`` (``l2_norm``, ``cosine_similarity``, ``psnr`` or ``snr``) of two outputs
    exactly as Polygraphy computes it (NumPy, in the dtype of the widened outputs)."""
    a, b = _cast_up(np.asarray(out0)), _cast_up(np.asarray(out1))
    with np.errstate(all="ignore"):
        if name == "l2_norm":
            return float(np.sqrt(np.sum(_square(np.subtract(a, b)))))
        if name == "cosine_similarity":
            fa, fb = a.ravel(), b.ravel()
            dot = np.sum(np.multiply(fa, fb))
            m0, m1 = np.sqrt(np.sum(_square(fa))), np.sqrt(np.sum(_square(fb)))
            if m0 == 0 and m1 == 0:
                return 1.0
            if m0 == 0 or m1 == 0:
                return 0.0
            value = float(dot / (m0 * m1))
            return value if math.isnan(value) else max(-1.0, min(1.0, value))
        noise = np.mean(_square(np.subtract(a, b)))
        if noise == 0:
            return math.inf
        if name == "psnr":
            peak = np.max(a) if a.size else 0
            if peak <= 0:
                peak = 1.0
            return float(20 * np.log10(float(peak)) - 10 * np.log10(float(noise)))
        signal = np.mean(_square(a))
        if signal == 0:
            return -math.inf
        return float(10 * np.log10(float(signal / noise)))
