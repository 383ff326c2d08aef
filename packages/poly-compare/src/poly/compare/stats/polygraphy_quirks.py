"""
The error statistics of an output pair as Polygraphy's simple comparison defines them, from the
native engine's exact figures: NumPy's quantile interpolation next to infinities, relative
differences that divide by an integer or bool reference as it is (no epsilon for zeros), and
NumPy's integer arithmetic where integer outputs are huge or wrap around.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from poly.compare.stats.gpu.device_output import DeviceOutput
from poly.compare.stats.native import DiffStats, ErrorStats, error_stats
from poly.compare.stats.polygraphy_precision import float32_tolerance_at_most, replaced
from poly.core.host_arrays import host_array
from poly.core.logger import G_LOGGER

__all__ = ["simple_error_stats", "is_floating", "may_hold_zero"]


# Polygraphy widens these dtypes before it subtracts two outputs (and before its statistics).
_WIDENED = {"int8": np.int32, "uint8": np.int32, "int16": np.int32, "uint16": np.int32, "uint32": np.int64,
            "float16": np.float32}
_EXACT_IN_FLOAT64 = 2**53
_EPSILON = 2.220446049250313e-16  # what a floating-point reference's zeros are replaced by


def _widened(arr: np.ndarray) -> np.ndarray:
    to = _WIDENED.get(arr.dtype.name)
    return arr.astype(to) if to is not None else arr


def _polygraphy_absdiff(out0: np.ndarray, out1: np.ndarray) -> np.ndarray:
    """``|out0 - out1|`` as Polygraphy computes it: NumPy arithmetic on the widened outputs, so an
    integer pair wraps around in its promoted integer type and ``|INT_MIN|`` stays negative
    (``out0 xor out1`` for two bool outputs)."""
    if out0.dtype == np.bool_ and out1.dtype == np.bool_:
        return np.logical_xor(out0, out1)
    with np.errstate(all="ignore"):
        return np.abs(np.subtract(_widened(out0), _widened(out1)))


def _subtracts_as_integers(out0: np.ndarray, out1: np.ndarray) -> bool:
    if out0.dtype == np.bool_ and out1.dtype == np.bool_:
        return False  # logical xor
    return out0.dtype.kind in "biu" and out1.dtype.kind in "biu" and \
        np.result_type(_widened(out0).dtype, _widened(out1).dtype).kind in "iu"


def _numpy_diff_stats(diff: np.ndarray, quantiles) -> DiffStats:
    """Every statistic of ``diff`` computed by NumPy, as Polygraphy computes them (for the rare
    pairs whose differences the native figures cannot map to Polygraphy's)."""
    flat = np.asarray(diff).reshape(-1)
    shape = np.shape(diff)

    def index(flat_index):
        return tuple(int(i) for i in np.unravel_index(int(flat_index), shape)) if shape else ()

    with np.errstate(all="ignore"):
        as_float = flat.astype(np.float64)
        return DiffStats(
            min=float(np.min(flat)), max=float(np.max(flat)), mean=float(np.mean(as_float)),
            std=float(np.std(as_float)), var=float(np.var(as_float)), median=float(np.median(flat)),
            argmin=index(np.argmin(flat)), argmax=index(np.argmax(flat)),
            quantiles={q: float(np.quantile(flat, q)) for q in quantiles},
            nan_count=int(np.count_nonzero(np.isnan(as_float))), inf_count=int(np.count_nonzero(np.isinf(as_float))),
        )


def _integer_absdiff_quantiles(out0: np.ndarray, out1: np.ndarray, absd: DiffStats) -> DiffStats:
    """
    NumPy interpolates a quantile of an integer array as ``lo + (hi - lo) * t`` with ``hi - lo``
    taken in the integer type: exact where the native engine's float64 order statistics are
    rounded (beyond 2^53), and wrapping around where a difference did (a negative ``|INT_MIN|``).
    Only then are the quantiles recomputed by NumPy from Polygraphy's integer differences (this
    costs a copy of the difference array); medians and every other statistic agree as they are.
    """
    if not absd.quantiles or not _subtracts_as_integers(out0, out1):
        return absd
    if not (absd.min < 0 or absd.max > _EXACT_IN_FLOAT64):
        return absd
    exact = np.asarray(_polygraphy_absdiff(out0, out1)).reshape(-1)
    return dataclasses.replace(absd, quantiles={q: float(np.quantile(exact, q)) for q in absd.quantiles})


def is_floating(arr: np.ndarray) -> bool:
    """Whether ``arr`` holds floating-point values (bfloat16 included)."""
    return arr.dtype.kind == "f" or arr.dtype.name == "bfloat16"


def _numpy_lerp_ranks(n: int, q: float) -> tuple[int, int, float]:
    # The two ranks and the weight numpy.quantile's default (linear) method uses, computed the
    # way NumPy computes them (so that the float rounding of the weight agrees).
    virtual = n * q + (1 - q) - 1
    if virtual >= n - 1:
        return n - 1, n - 1, virtual + 1  # NumPy's weight against index -1
    lo = int(math.floor(virtual))
    return lo, lo + 1, virtual - lo


def _with_infinite_top(diff: DiffStats, n: int, k: int) -> DiffStats:
    """
    Median and quantiles as NumPy computes them on non-negative data whose ``k`` largest values
    are +inf. NumPy interpolates ``a + (b - a) * t`` (``b - (b - a) * (1 - t)`` from t = 0.5), which
    gives NaN next to an infinity unless 0 < t < 0.5; Polygraphy reports those NaNs (and fails on
    them), so the native exact order statistics are mapped to the same values.
    """
    if k == 0 or n == 0 or diff.nan_count:
        return diff
    first_inf = n - k

    def quantile(q: float, native: float) -> float:
        lo, hi, t = _numpy_lerp_ranks(n, q)
        if hi < first_inf:
            return native
        if lo >= first_inf:
            return math.nan
        return math.inf if 0 < t < 0.5 else math.nan

    def median(native: float) -> float:
        upper = n // 2  # the middle element, or the upper of the two middle ones
        return math.inf if upper >= first_inf else native

    return DiffStats(
        min=diff.min, max=diff.max, mean=diff.mean, std=diff.std, var=diff.var, median=median(diff.median),
        argmin=diff.argmin, argmax=diff.argmax,
        quantiles={q: quantile(q, v) for q, v in diff.quantiles.items()},
        nan_count=diff.nan_count, inf_count=diff.inf_count,
    )


def _integer_divisor_reldiff(out0: np.ndarray, out1: np.ndarray, rel: DiffStats, absdiff_max: float) -> DiffStats:
    """
    Polygraphy divides by an integer or bool ``out1`` as it is, without replacing zeros by an
    epsilon (it only does that for floating-point outputs): ``x / 0`` is ``inf`` and ``0 / 0`` is
    ``NaN``. The native engine divides by the epsilon instead, which ranks those positions above
    every other relative difference (an integer difference is at least 1, so ``1 / 2.2e-16``).
    This maps the native statistics to Polygraphy's, so that reported figures and verdicts agree.
    """
    zero = out1 == 0
    if not zero.any():
        return rel
    n = out1.size
    zero_flat = np.flatnonzero(zero)
    zero_absdiff = _polygraphy_absdiff(np.asarray(out0).reshape(-1)[zero_flat], out1.reshape(-1)[zero_flat])
    with np.errstate(all="ignore"):
        smallest_over_zero = float(np.min(zero_absdiff.astype(np.float64)))
    # The mapping below relies on x / epsilon ranking above every other relative difference,
    # which holds unless a difference over a non-zero divisor (|divisor| >= 1) comes near
    # 1 / epsilon times the smallest one over a zero (integers beyond 2^52, or a float output
    # against a bool reference), or a difference wrapped around to a negative INT_MIN over a
    # zero (-inf, ranking below everything). NumPy computes those from Polygraphy's arrays.
    if smallest_over_zero < 0 or not absdiff_max * 4.0 * _EPSILON < smallest_over_zero:
        if not (np.isnan(smallest_over_zero) or smallest_over_zero == 0):
            with np.errstate(all="ignore"):
                reldiff = np.divide(_polygraphy_absdiff(out0, out1), np.abs(_widened(out1)))
            return _numpy_diff_stats(reldiff, rel.quantiles)
    zero_absdiff = zero_absdiff.astype(np.float64)
    shape = out1.shape

    def index(flat):
        return tuple(int(i) for i in np.unravel_index(int(flat), shape)) if shape else ()

    undefined = (zero_absdiff == 0) | np.isnan(zero_absdiff)
    if undefined.any() or rel.nan_count:
        # A NaN anywhere makes every NumPy statistic NaN; arg{min,max} point at the first NaN.
        first = int(zero_flat[np.argmax(undefined)]) if undefined.any() else n
        if rel.nan_count and rel.argmin is not None:
            first = min(first, int(np.ravel_multi_index(rel.argmin, shape)) if shape else 0)
        nan = math.nan
        return DiffStats(
            min=nan, max=nan, mean=nan, std=nan, var=nan, median=nan, argmin=index(first), argmax=index(first),
            quantiles={q: nan for q in rel.quantiles}, nan_count=rel.nan_count + int(undefined.sum()),
            inf_count=rel.inf_count + int((~undefined).sum()),
        )

    # Every zero divisor gives +inf: they rank above everything else.
    k = zero_flat.size
    first_zero = index(zero_flat[0])
    all_inf = k == n
    infinite = DiffStats(
        min=math.inf if all_inf else rel.min, max=math.inf, mean=math.inf, std=math.nan, var=math.nan,
        median=rel.median, argmin=first_zero if all_inf else rel.argmin, argmax=first_zero,
        quantiles=dict(rel.quantiles), nan_count=rel.nan_count, inf_count=rel.inf_count + k,
    )
    return _with_infinite_top(infinite, n, infinite.inf_count)


def _compares_in_float32(out0: np.ndarray, out1: np.ndarray) -> bool:
    narrow = ("float16", "bfloat16", "float32", "bool")
    both_bool = out0.dtype == np.bool_ and out1.dtype == np.bool_
    return not both_bool and out0.dtype.name in narrow and out1.dtype.name in narrow


def simple_error_stats(out0, out1, atol=1e-5, rtol=1e-5, quantiles=(), infinities_compare_equal=False, threads=0,
                       median=True):
    """
    The error statistics of ``out0`` against ``out1`` exactly as Polygraphy's simple comparison
    defines them (relative differences divide by ``out1``).

    Returns:
        Tuple[ErrorStats, DiffStats, DiffStats]: The native statistics, and the absolute and
        relative difference statistics with NumPy's quantile semantics next to infinities
        (``_with_infinite_top``) and Polygraphy's division by integer outputs
        (``_integer_divisor_reldiff``), and NumPy's integer quantiles of integer outputs beyond
        2^53 or wrapping around (``_integer_absdiff_quantiles``). ``threads`` and ``median`` are
        passed to ``error_stats``.
    """
    on_device = isinstance(out0, DeviceOutput) and isinstance(out1, DeviceOutput)
    if not on_device or not is_floating(out1):
        # Polygraphy's division by an integer reference (_integer_divisor_reldiff) reads host data
        out0, out1 = host_array(out0), host_array(out1)
    native_atol, native_rtol = atol, rtol
    if _compares_in_float32(out0, out1):
        # The engine rounds tolerances to float32 for these pairs; Polygraphy compares the float32
        # differences with the float64 tolerances, which the largest float32 at most each matches.
        native_atol, native_rtol = float32_tolerance_at_most(atol), float32_tolerance_at_most(rtol)
    try:
        stats = error_stats(
            out0, out1, atol=native_atol, rtol=native_rtol, quantiles=quantiles, infinities_compare_equal=infinities_compare_equal,
            threads=threads, median=median,
        )
    except ValueError as err:
        G_LOGGER.critical(f"Cannot compare outputs of dtypes {out0.dtype} and {out1.dtype}: {err}")
    stats = replaced(stats, atol=float(atol), rtol=float(rtol))
    absd = _with_infinite_top(stats.absdiff, stats.size, stats.absdiff.inf_count)
    absd = _integer_absdiff_quantiles(out0, out1, absd)
    if is_floating(out1):
        rel = _with_infinite_top(stats.reldiff, stats.size, stats.reldiff.inf_count)
    else:
        rel = _integer_divisor_reldiff(out0, out1, stats.reldiff, stats.absdiff.max)
    return stats, absd, rel


def may_hold_zero(stats: ErrorStats) -> bool:
    """Whether the reference (``b``) of ``stats`` may hold a zero: only a range that straddles zero
    (or NaN bounds) can, so a scan for zeros can be skipped otherwise."""
    return not (stats.b.min > 0 or stats.b.max < 0)
