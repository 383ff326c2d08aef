"""
Polygraphy's figures of an output pair, and whether they pass a tolerance at Polygraphy's precision.

Polygraphy's simple comparison defines its statistics with NumPy: relative differences that divide
by an integer or bool reference as it is (no epsilon for zeros), NumPy's quantile interpolation
next to infinities, NumPy's integer arithmetic where integer outputs are huge or wrap around. It
computes them in the dtype of the difference arrays (float32 for float16/float32 outputs; means
with a float32 accumulator, ``numpy.mean(x, dtype=float32)``: pairwise sums within NumPy's
buffers) and compares float32 differences with float64 tolerances.

The native engine's figures are exact (float64 sums); this module maps them to Polygraphy's
definitions (``simple_error_stats``) and, where a deciding statistic lies so close to its tolerance
that the few float32 ulps between the two could change the verdict (``near_bound``), recomputes it
exactly as Polygraphy does (``polygraphy_error_stats``). Whether a figure passes its tolerance is
decided here too: elementwise by the native engine against ``float32_tolerance_at_most``, a
statistic by ``exceeds_tolerance``.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from typing import Any

import numpy as np

from poly.compare.stats.native import DiffStats, ErrorStats, error_stats
from poly.compare.stats.on_device import is_device_output
from poly.core import G_LOGGER
from poly.core.arrays.host import host_array
from poly.core.util.attributes import frozen_instance

__all__ = [
    "polygraphy_error_stats",
    "simple_error_stats",
    "exceeds_tolerance",
    "float32_tolerance_at_most",
    "near_bound",
    "polygraphy_diffs",
    "polygraphy_metric",
    "is_floating",
    "may_hold_zero",
]

# Polygraphy widens these dtypes before it subtracts two outputs (and before its statistics).
_WIDENED = {"int8": np.int32, "uint8": np.int32, "int16": np.int32, "uint16": np.int32, "uint32": np.int64,
            "float16": np.float32}
_EPSILON = 2.220446049250313e-16  # what a floating-point reference's zeros are replaced by
_EXACT_IN_FLOAT64 = 2**53
_FLOAT32_EPS = 2.0**-23
_BFLOAT16_EPS = 2.0**-7
_NUMPY_BUFFER = 8192  # NumPy sums a casting reduction pairwise within buffers of this many elements
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_FLOAT32_TINY = 1e-36  # below this, float32 figures may have flushed to zero
_DIFFERENCES_IN_FLOAT32 = ("float16", "bfloat16", "float32", "bool")
"""Output dtypes whose pairs Polygraphy subtracts in float32 (unless both are bool)."""


# ---- Polygraphy's difference arrays --------------------------------------------------------------


def _widened(arr: np.ndarray) -> np.ndarray:
    to = _WIDENED.get(arr.dtype.name)
    return arr.astype(to) if to is not None else arr


def _polygraphy_absdiff(out0: np.ndarray, out1: np.ndarray) -> Any:
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


def is_floating(arr: np.ndarray) -> bool:
    """Whether ``arr`` holds floating-point values (bfloat16 included)."""
    return arr.dtype.kind == "f" or arr.dtype.name == "bfloat16"


def polygraphy_diffs(out0: np.ndarray, out1: np.ndarray, infinities_compare_equal: bool = False) -> tuple[Any, ...]:
    """``(absdiff, reldiff)`` arrays exactly as Polygraphy's simple comparison builds them."""
    absdiff = _polygraphy_absdiff(out0, out1)
    with np.errstate(all="ignore"):
        if infinities_compare_equal and not (out0.dtype == np.bool_ and out1.dtype == np.bool_):
            absdiff = np.where(np.isinf(out0) & (out0 == out1), 0, absdiff)
        ref = np.array(_widened(out1), copy=True)
        if is_floating(ref):
            ref[ref == 0] += _EPSILON
        reldiff = np.divide(absdiff, np.abs(ref))
    return absdiff, reldiff


# ---- the tolerance: elementwise, next to a bound, for one statistic ----------------------------------


def exceeds_tolerance(value: Any, tol: Any) -> bool:
    """Whether a statistic fails its tolerance: above it, or NaN (a value that is no number, such as
    None, is not NaN)."""
    try:
        nan = math.isnan(value)
    except TypeError:
        nan = False
    return nan or value > tol


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


def _relative_margin(size: int, element_eps: float) -> float:
    # each difference rounded in its dtype, then NumPy's float32 sum: pairwise within a buffer,
    # sequential across buffers
    return 2 * element_eps + 8 * _FLOAT32_EPS * (64 + size / _NUMPY_BUFFER)


def _has_bfloat16(dtypes: Any) -> bool:
    return any(np.dtype(d).kind == "V" and np.dtype(d).name == "bfloat16" for d in dtypes)


def near_bound(value: float, bound: float, size: int, dtypes: Any, absolute_margin: float = 0.0) -> bool:
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


# ---- Polygraphy's statistics from the native figures ---------------------------------------------


def _numpy_diff_stats(diff: np.ndarray, quantiles: Any) -> DiffStats:
    """Every statistic of ``diff`` computed by NumPy, as Polygraphy computes them (for the rare
    pairs whose differences the native figures cannot map to Polygraphy's)."""
    flat = np.asarray(diff).reshape(-1)
    shape = np.shape(diff)

    def index(flat_index: Any) -> Any:
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

    def index(flat: Any) -> Any:
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


_IN_FLOAT32_BY_DTYPE: dict[np.dtype, bool] = {}
"""Whether a dtype is among _DIFFERENCES_IN_FLOAT32, by dtype: ``dtype.name`` is slow to compute
(about 10 us), and a validation compares every output of every sample."""


def _in_float32(dtype: np.dtype) -> bool:
    known = _IN_FLOAT32_BY_DTYPE.get(dtype)
    if known is None:
        known = _IN_FLOAT32_BY_DTYPE[dtype] = dtype.name in _DIFFERENCES_IN_FLOAT32
    return known


def _compares_in_float32(out0: np.ndarray, out1: np.ndarray) -> bool:
    both_bool = out0.dtype == np.bool_ and out1.dtype == np.bool_
    return not both_bool and _in_float32(out0.dtype) and _in_float32(out1.dtype)


def simple_error_stats(out0: Any, out1: Any, atol: float = 1e-5, rtol: float = 1e-5, quantiles: Any = (), infinities_compare_equal: bool = False, threads: int = 0,
                       median: bool = True) -> tuple[Any, ...]:
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
    on_device = is_device_output(out0) and is_device_output(out1)
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
    stats = _replaced(stats, atol=float(atol), rtol=float(rtol))
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


# ---- the deciding statistic at Polygraphy's precision ----------------------------------------------


def _polygraphy_stat(diff: np.ndarray, stat: str, quantile: float | None = None) -> float:
    """One statistic of a difference array as Polygraphy computes it (``max``, ``mean``,
    ``median`` or ``quantile``), as a Python float."""
    with np.errstate(all="ignore"):
        if stat == "mean":
            return float(np.mean(diff, dtype=np.float32))
        if diff.size == 0:
            return 0.0
        if stat == "max":
            return float(np.max(_widened(diff)))
        if stat == "median":
            return float(np.median(_widened(diff)))
        return float(np.quantile(diff, quantile))  # type: ignore[arg-type]


def _replaced(frozen: Any, **changes: Any) -> Any:
    """A copy of a frozen dataclass instance with ``changes`` (``dataclasses.replace`` runs
    ``__init__`` again, which costs more than the comparison of a small output)."""
    if not hasattr(frozen, "__dict__"):
        new = copy.copy(frozen)
        for name, value in changes.items():
            object.__setattr__(new, name, value)
        return new
    return frozen_instance(type(frozen), {**frozen.__dict__, **changes})


def _stat_of(diff: DiffStats, stat: str, quantile: float) -> Any:
    if stat == "quantile":
        return diff.quantiles.get(quantile)
    return getattr(diff, stat)


def _decide_at_polygraphy_precision(out0: Any, out1: Any, absd: DiffStats, rel: DiffStats, options: Any,
                                   infinities_compare_equal: bool = False) -> tuple[DiffStats, DiffStats]:
    """
    The absolute and relative difference statistics with the mean as Polygraphy reports it (a
    float32) and the statistic ``options.check_error_stat`` names replaced by Polygraphy's own
    figure where the native one lies next to its tolerance, so that the verdict is Polygraphy's.
    """
    stat = options.check_error_stat
    quantile = options.error_quantile
    diffs = None
    fixed = []
    for diff, tol, index in ((absd, options.atol, 0), (rel, options.rtol, 1)):
        changes = {"mean": _as_float32(diff.mean)}
        value = None if stat == "elemwise" else _stat_of(diff, stat, quantile)
        if value is not None and near_bound(value, tol, np.size(out0), (out0.dtype, out1.dtype)):
            if diffs is None:
                diffs = polygraphy_diffs(np.asarray(out0), np.asarray(out1), infinities_compare_equal)
            exact = _polygraphy_stat(diffs[index], stat, quantile)
            if stat == "quantile":
                changes["quantiles"] = {**diff.quantiles, quantile: exact}  # type: ignore[assignment]
            else:
                changes[stat] = exact
        fixed.append(_replaced(diff, **changes))
    return fixed[0], fixed[1]


def _as_float32(value: float) -> float:
    if abs(value) > _FLOAT32_MAX:  # inf, or beyond float32's range (NaN passes through below)
        return math.copysign(math.inf, value)
    return float(np.float32(value))


def polygraphy_error_stats(out0: Any, out1: Any, options: Any, infinities_compare_equal: bool = False, quantiles: Any = None,
                           median: bool | None = None, threads: int = 0) -> tuple[ErrorStats, DiffStats, DiffStats]:
    """
    The statistics of ``out0`` against ``out1`` that decide the simple comparison of one output,
    as Polygraphy computes them.

    Args:
        out0, out1: The outputs (relative differences divide by ``out1``).
        options (SimpleCompareOptions): The output's resolved options (``for_output``): its
                ``atol`` and ``rtol`` count the elementwise mismatches, its ``check_error_stat``
                names the statistic recomputed at Polygraphy's precision next to its tolerance.
        infinities_compare_equal (bool): Equal infinities have absolute difference 0.
        quantiles (Sequence[float]): The quantiles to compute; None: those the verdict needs.
        median (bool): Whether to compute the medians; None: where the verdict needs them.
        threads (int): Passed to ``error_stats``.

    Returns:
        Tuple[ErrorStats, DiffStats, DiffStats]: The native statistics, and the absolute and
        relative difference statistics of ``simple_error_stats`` with the mean as Polygraphy
        reports it (a float32) and the deciding statistic at Polygraphy's precision.
    """
    stats, absd, rel = simple_error_stats(
        out0, out1, options.atol, options.rtol, options.needed_quantiles() if quantiles is None else quantiles,
        infinities_compare_equal, threads=threads, median=options.needs_median() if median is None else median)
    absd, rel = _decide_at_polygraphy_precision(out0, out1, absd, rel, options, infinities_compare_equal)
    return stats, absd, rel


# ---- L2, cosine, PSNR and SNR as Polygraphy computes them -----------------------------------------


def _square(x: np.ndarray) -> Any:
    # Polygraphy passes the exponent as a 0-d int64 array, which promotes float32 to float64
    return np.power(x, np.asarray(2))


def polygraphy_metric(name: str, out0: Any, out1: Any) -> float:
    """The metric ``name`` (``l2_norm``, ``cosine_similarity``, ``psnr`` or ``snr``) of two outputs
    exactly as Polygraphy computes it (NumPy, in the dtype of the widened outputs)."""
    a, b = _widened(np.asarray(out0)), _widened(np.asarray(out1))
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
