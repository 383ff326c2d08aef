"""Error statistics of one output pair, computed by the native engine in ``poly._native``.

Every statistic the comparator reports comes from one parallel pass over both arrays (plus
one more for exact medians and quantiles), with the GIL released. Definitions follow
Polygraphy's so that verdicts agree (README.md, "The native error-statistics engine").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import numpy as np
import numpy.typing as npt

from poly import _native
from poly.compare.stats.on_device import may_compare_on_device
from poly.core.arrays.host import host_array
from poly.core.util.attributes import frozen_instance

__all__ = ["error_stats", "ErrorStats", "DiffStats", "ValueSummary", "dtype_code"]

_CODES: dict[str, int] = dict(_native.DTYPE_CODES)
Index = tuple[int, ...]


class SupportsCudaArrayInterface(Protocol):
    """A CUDA array (CuPy, a torch CUDA tensor, ``DeviceView``): anything with ``__cuda_array_interface__``."""

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]: ...


ErrorStatsInput = npt.ArrayLike | SupportsCudaArrayInterface
"""What ``error_stats`` compares: a host array-like or a CUDA array."""


_CODE_CACHE: dict[np.dtype, int] = {}
_THREADS_ARG_MAX = 2**31 - 1  # the native argument is a C int


def dtype_code(dtype: np.dtype) -> int:
    """The native engine's code for ``dtype``; raises ValueError for unsupported dtypes."""
    code = _CODE_CACHE.get(dtype)  # dtype.name is slow to compute; comparisons run per sample
    if code is not None:
        return code
    dtype = np.dtype(dtype)
    code = _CODES.get(dtype.name)
    if code is None or (dtype.name != "bfloat16" and dtype.kind not in "biuf"):
        supported = ", ".join(_CODES)
        raise ValueError(f"error statistics do not support dtype {dtype} (supported: {supported})")
    _CODE_CACHE[dtype] = code
    return code


def _unravel(flat: int, shape: tuple[int, ...]) -> Index | None:
    if flat < 0:
        return None
    if len(shape) == 1:
        return (flat,)
    index = []
    for dim in reversed(shape):  # np.unravel_index costs more than the comparison of a small output
        flat, rest = divmod(flat, dim)
        index.append(rest)
    return tuple(reversed(index))


@dataclass(frozen=True)
class DiffStats:
    """Statistics of one difference array (absolute or relative), as float64 values."""

    min: float
    max: float
    mean: float
    std: float
    var: float
    median: float
    argmin: Index | None
    argmax: Index | None
    quantiles: dict[float, float] = field(default_factory=dict)
    nan_count: int = 0
    inf_count: int = 0


def _median_not_kept() -> float:
    raise LookupError("this summary was detached from its arrays before its median was computed")


class ValueSummary:
    """Summary of one input array for logging: moments, extrema with their indices, mean |x|,
    NaN/Inf counts. ``median`` is computed on first access (one extra radix-select pass)."""

    __slots__ = ("mean", "std", "var", "min", "max", "_argmin", "_argmax", "_shape", "mean_abs", "mean_square",
                 "nan_count", "inf_count", "_median", "_median_source")

    def __init__(self, d: dict[str, Any], shape: tuple[int, ...], median_source: Callable[[], float]) -> None:
        self.mean: float = d["mean"]
        self.std: float = d["std"]
        self.var: float = d["var"]
        self.min: float = d["min"]
        self.max: float = d["max"]
        self._argmin, self._argmax, self._shape = d["argmin"], d["argmax"], shape
        self.mean_abs: float = d["mean_abs"]
        self.mean_square: float = d["mean_sq"]
        self.nan_count: int = d["nan"]
        self.inf_count: int = d["inf"]
        self._median: float | None = None
        self._median_source: Callable[[], float] | None = median_source

    @property
    def argmin(self) -> Index | None:
        """Index of the smallest value (None for an empty array), unravelled on first use."""
        return _unravel(self._argmin, self._shape)

    @property
    def argmax(self) -> Index | None:
        """Index of the largest value (None for an empty array)."""
        return _unravel(self._argmax, self._shape)

    @property
    def median(self) -> float:
        """Exact median (numpy.median semantics), computed lazily."""
        if self._median is None:
            source = cast("Callable[[], float]", self._median_source)  # set until the median is known
            self._median = source()
            self._median_source = None  # drop the references to the arrays
        return self._median

    def detached(self) -> ValueSummary:
        """A copy that refers to no array, to be kept beyond its comparison (one whose median was
        never asked for refers to its arrays, to compute it): the copy's median, unless already
        known, raises LookupError."""
        copy = ValueSummary.__new__(ValueSummary)  # (each slot by name: a loop of setattr costs 3x as much)
        copy.mean, copy.std, copy.var, copy.min, copy.max = self.mean, self.std, self.var, self.min, self.max
        copy._argmin, copy._argmax, copy._shape = self._argmin, self._argmax, self._shape
        copy.mean_abs, copy.mean_square, copy.nan_count, copy.inf_count = (self.mean_abs, self.mean_square,
                                                                           self.nan_count, self.inf_count)
        copy._median = self._median
        copy._median_source = self._median_source if self._median is not None else _median_not_kept
        return copy

    def __repr__(self) -> str:
        return (f"ValueSummary(mean={self.mean:.6g}, std={self.std:.6g}, min={self.min:.6g} at {self.argmin}, "
                f"max={self.max:.6g} at {self.argmax}, avg-magnitude={self.mean_abs:.6g})")


@dataclass(frozen=True)
class ErrorStats:
    """Every statistic of comparing ``a`` (e.g. the output under test) with ``b`` (the reference
    that relative differences divide by)."""

    shape: tuple[int, ...]
    size: int
    atol: float
    rtol: float
    compute_dtype: str
    absdiff: DiffStats
    reldiff: DiffStats
    mismatches: int
    l2: float
    cosine: float
    mse: float
    psnr: float
    snr: float
    a: ValueSummary
    b: ValueSummary

    @property
    def passed_elemwise(self) -> bool:
        """True when no element fails ``absdiff > atol and reldiff > rtol`` (NaN fails)."""
        return self.mismatches == 0


def _as_array(x: ErrorStatsInput, name: str) -> npt.NDArray[Any]:
    arr: npt.NDArray[Any] = host_array(x)
    if arr.dtype not in _CODE_CACHE and arr.dtype.kind not in "biuf" and arr.dtype.name != "bfloat16":
        raise ValueError(f"error statistics: {name} has unsupported dtype {arr.dtype}")
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr


def _diff(d: dict[str, Any], shape: tuple[int, ...], median: bool, quantiles: Sequence[float]) -> DiffStats:
    order = list(d["order"]) or [math.nan] * (int(median) + len(quantiles))  # empty input: all NaN
    med = order.pop(0) if median else math.nan
    return frozen_instance(DiffStats, {
        "min": d["min"], "max": d["max"], "mean": d["mean"], "std": d["std"], "var": d["var"], "median": med,
        "argmin": _unravel(d["argmin"], shape), "argmax": _unravel(d["argmax"], shape),
        "quantiles": dict(zip(quantiles, order, strict=True)), "nan_count": d["nan"], "inf_count": d["inf"],
    })


def error_stats(
    a: ErrorStatsInput,
    b: ErrorStatsInput,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-5,
    quantiles: Sequence[float] = (),
    infinities_compare_equal: bool = False,
    threads: int = 0,
    median: bool = True,
) -> ErrorStats:
    """Compare ``a`` against ``b`` elementwise and return every error statistic at once.

    Args:
        a, b: arrays of the same shape; any of bool, int8..int64, uint8..uint64, float16,
            bfloat16 (ml_dtypes), float32, float64, in any pairing, any strides and any
            alignment. Integer pairs are subtracted as Polygraphy does (NumPy integer
            arithmetic after widening small types: int64 differences wrap around).
        atol, rtol: tolerances of the elementwise check counted in ``mismatches``.
        quantiles: quantiles (in [0, 1]) of absdiff and reldiff to compute exactly.
        infinities_compare_equal: equal infinities give absdiff 0 instead of NaN.
        threads: worker threads; 0 uses every CPU this process may run on (its affinity mask,
            limited by a cgroup CPU quota), one per 2^18 elements at most; larger requests are
            capped at 4 x that count. Inputs under 65536 elements are compared on the calling
            thread.
        median: compute the exact medians of absdiff and reldiff (one extra pass).

    When both arrays are CUDA arrays (torch CUDA tensors, CuPy arrays, ``__cuda_array_interface__``
    objects, ``DeviceView``) and cuda-python's NVRTC is installed (``poly-compare[gpu]``), the
    same statistics are computed on their GPU without copying them to the host
    (``poly.compare.stats.gpu``); ``threads`` does not apply there.

    Raises:
        ValueError: for different shapes, unsupported dtypes or quantiles outside [0, 1].
    """
    qs = [float(q) for q in quantiles]
    for q in qs:
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"quantile {q} is outside [0, 1]")
    if threads < 0:
        raise ValueError(f"threads must be >= 0, got {threads}")
    on_device = None
    if may_compare_on_device(a, b):  # the GPU path imported only for CUDA arrays
        from poly.compare.stats.gpu.dispatch import device_error_stats

        on_device = device_error_stats(a, b, atol=float(atol), rtol=float(rtol), quantiles=qs,
                                       infinities_compare_equal=bool(infinities_compare_equal), median=bool(median))
    if on_device is not None:
        raw, shape, median_of_device = on_device
        return _from_raw(raw, shape, atol, rtol, median, qs, median_of_device)
    a_arr = _as_array(a, "a")
    b_arr = _as_array(b, "b")
    if a_arr.shape != b_arr.shape:
        raise ValueError(f"error statistics need arrays of the same shape, got {a_arr.shape} and {b_arr.shape}")
    threads = min(int(threads), _THREADS_ARG_MAX)  # the engine caps it further
    code_a, code_b = dtype_code(a_arr.dtype), dtype_code(b_arr.dtype)
    raw = _native.error_stats(a_arr, b_arr, code_a, code_b, float(atol), float(rtol), qs, bool(median),
                              bool(infinities_compare_equal), int(threads))
    shape = a_arr.shape
    medians: dict[str, float] = {}

    def median_of(stream: str) -> Callable[[], float]:
        # The first of a's and b's medians asked for brings the other (found in the same passes
        # over the inputs: a comparison's report shows both).
        together = ["a", "b"] if stream in ("a", "b") else [stream]

        def compute() -> float:
            if stream not in medians:
                values = _native.order_stats(a_arr, b_arr, code_a, code_b, together, [None],
                                             bool(infinities_compare_equal), int(threads))
                medians.update(zip(together, values, strict=True))
            return medians[stream]
        return compute

    return _from_raw(raw, shape, atol, rtol, median, qs, median_of)


def _from_raw(raw: dict[str, Any], shape: tuple[int, ...], atol: float, rtol: float, median: bool,
              qs: list[float], median_of: Callable[[str], Callable[[], float]]) -> ErrorStats:
    return frozen_instance(ErrorStats, {
        "shape": shape, "size": raw["size"], "atol": float(atol), "rtol": float(rtol),
        "compute_dtype": raw["compute_dtype"], "absdiff": _diff(raw["absdiff"], shape, median, qs),
        "reldiff": _diff(raw["reldiff"], shape, median, qs), "mismatches": raw["mismatches"], "l2": raw["l2"],
        "cosine": raw["cosine"], "mse": raw["mse"], "psnr": raw["psnr"], "snr": raw["snr"],
        "a": ValueSummary(raw["a"], shape, median_of("a")), "b": ValueSummary(raw["b"], shape, median_of("b")),
    })
