"""
Which comparisons run on the GPU, and their statistics there.

``device_error_stats`` takes over ``poly.compare.error_stats`` when both arrays are CUDA
arrays (torch CUDA tensors, CuPy arrays, objects with ``__cuda_array_interface__``, poly's and
Polygraphy's ``DeviceView``) and cuda-python's NVRTC is usable: the statistics are computed on
the device, and only one merged record (and the order statistics' histograms or keys) comes
back. Otherwise (cuda-python or NVRTC
missing, a masked array, more than eight non-mergeable dimensions, finite values so large that
their moments overflow) it returns None and the arrays are compared on the host as before; the
first such fallback for want of cuda-python logs one INFO line saying how to get on-device
comparisons.
"""

from __future__ import annotations

import functools
import math
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from poly.compare.stats.gpu.cuda_api import GpuError, GpuUnavailableError, nvrtc_api
from poly.compare.stats.gpu.device_run import CompareSetup, DeviceOperand, DeviceRun
from poly.compare.stats.gpu.kernel_source import (
    DTYPE_NAMES,
    INT_DIFF_I32,
    INT_DIFF_I64,
    INT_DIFF_NONE,
    INT_DIFF_U64,
    KernelVariant,
)
from poly.compare.stats.gpu.order_select import order_values, plan_ranges
from poly.compare.stats.gpu.statistics_pass import STREAM_NAMES, count_zeros, extreme_values, run_error_stats
from poly.core import G_LOGGER, LogMode
from poly.core.arrays.ops import is_torch
from poly.core.util.attributes import frozen_instance

__all__ = ["cuda_operand", "device_error_stats", "gpu_ready", "device_count_zeros", "DTYPE_CODES", "compare_setup",
           "kernel_variant", "kernel_variants"]

DTYPE_CODES = {name: code for code, name in enumerate(DTYPE_NAMES)}  # the kernels' dtype codes
_NARROW = (9, 10, 11)
_EPS = 2.220446049250313e-16


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= max(int(d), 1)
    return tuple(reversed(strides))


_TORCH_CODES: dict[Any, int | None] = {}  # torch dtype -> the kernels' dtype code (None: not supported)


def _current_raw_stream(torch: Any, ordinal: int) -> int:
    """The handle of torch's current stream on GPU ``ordinal``: through the raw-stream call torch's
    own compiled code uses (0.3 us) where it has it, else through a ``torch.cuda.Stream`` (6 us)."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return int(raw(ordinal))
    return int(torch.cuda.current_stream(ordinal).cuda_stream)


def _torch_operand(tensor: Any) -> DeviceOperand | None:
    try:
        if not tensor.is_cuda:
            return None
        dtype = tensor.dtype
        code = _TORCH_CODES.get(dtype, -1)
        if code == -1:
            code = _TORCH_CODES[dtype] = DTYPE_CODES.get(str(dtype).rsplit(".", 1)[-1])
        if code is None:
            return None
        item = int(tensor.element_size())
        torch = sys.modules[type(tensor).__module__.split(".")[0]]
        ordinal = int(tensor.get_device())  # a CUDA tensor's own GPU
        stream = _current_raw_stream(torch, ordinal)
        return frozen_instance(DeviceOperand, {  # (torch.Size holds ints)
            "ptr": int(tensor.data_ptr()), "shape": tuple(tensor.shape), "strides": tuple(s * item for s in tensor.stride()),
            "code": code, "itemsize": item, "stream": stream or None, "device": ordinal})
    except (AttributeError, TypeError, RuntimeError, KeyError):  # a tensor-like object that is not one
        return None


def cuda_operand(obj: Any) -> DeviceOperand | None:
    """The description of ``obj`` as a CUDA array, or None when it is not one (or its dtype is
    not one the statistics support). Nothing is copied and neither torch nor CuPy is imported."""
    known = getattr(obj, "operand", None)  # a DeviceOutput handed over by a comparison function
    if isinstance(known, DeviceOperand):
        return known
    if is_torch(obj):
        return _torch_operand(obj)
    if type(obj).__name__ in ("DeviceView", "DeviceArray") and hasattr(obj, "ptr") and hasattr(obj, "numpy"):
        dtype = np.dtype(obj.dtype)
        code = DTYPE_CODES.get(dtype.name)
        if code is None:
            return None
        shape = tuple(int(d) for d in obj.shape)
        return DeviceOperand(int(obj.ptr), shape, _c_strides(shape, dtype.itemsize), code, dtype.itemsize, None)
    try:
        cai = obj.__cuda_array_interface__
    except Exception:  # noqa: BLE001 - no interface, or one that refuses (a tensor needing grad...)
        return None
    if not isinstance(cai, dict) or cai.get("mask") is not None:
        return None
    try:
        dtype = np.dtype(cai["typestr"])
    except TypeError:
        return None
    code = DTYPE_CODES.get(dtype.name)
    if code is None or not dtype.isnative:
        return None
    shape = tuple(int(d) for d in cai["shape"])
    strides = cai.get("strides")
    strides = _c_strides(shape, dtype.itemsize) if strides is None else tuple(int(s) for s in strides)
    stream = cai.get("stream")
    return DeviceOperand(int(cai["data"][0]), shape, strides, code, dtype.itemsize,
                         None if stream is None else int(stream))


_READY: dict[str, bool] = {}
_READY_LOCK = threading.Lock()


def gpu_ready() -> bool:
    """Whether cuda-python and its NVRTC are usable (checked once; the first failure logs how
    to get on-device comparisons)."""
    with _READY_LOCK:
        if "ok" not in _READY:
            try:
                err = nvrtc_api.nvrtcVersion()[0]
                _READY["ok"] = int(err) == 0
                reason = "NVRTC did not answer"
            except Exception as exc:  # noqa: BLE001 - a missing module or library, in any of its forms
                _READY["ok"] = False
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if not _READY["ok"]:
                G_LOGGER.info(f"Comparing CUDA arrays through host copies ({reason}); for on-device comparisons, "
                              f"install cuda-python with NVRTC: pip install poly-compare[gpu]")
        return _READY["ok"]


def _is_int(code: int) -> bool:
    return code <= 8


def _integer_difference(a: int, b: int) -> int:
    """The CPU engine's IntDiff for a pair of dtype codes (see kernel_source)."""
    if not (_is_int(a) and _is_int(b)):
        return INT_DIFF_NONE
    wide = (3, 4, 8)
    if a not in wide and b not in wide:
        return INT_DIFF_NONE
    if a == 8 or b == 8:
        other = b if a == 8 else a
        return INT_DIFF_U64 if other in (8, 0) else INT_DIFF_NONE
    return INT_DIFF_I64 if (a in (4, 7) or b in (4, 7)) else INT_DIFF_I32


def kernel_variant(code_a: int, code_b: int) -> KernelVariant:
    """The compiled variant a comparison of dtype codes ``code_a`` and ``code_b`` (DTYPE_CODES)
    runs: its arithmetic as the CPU engine's CompareConfig::make chooses it."""
    xor_mode = code_a == 0 and code_b == 0
    f32 = not xor_mode and (code_a in _NARROW or code_a == 0) and (code_b in _NARROW or code_b == 0)
    return KernelVariant(code_a=code_a, code_b=code_b, f32=f32, xor_mode=xor_mode,
                         int_diff=_integer_difference(code_a, code_b), den_wrap=code_b in (3, 4))


def kernel_variants() -> list[KernelVariant]:
    """Every variant a comparison can compile: one per ordered pair of supported dtypes, mixed
    pairs included (what the kernel-compile tests build, so that their list follows this module)."""
    codes = sorted(DTYPE_CODES.values())
    return [kernel_variant(a, b) for a in codes for b in codes]


def compare_setup(a: DeviceOperand, b: DeviceOperand, atol: float, rtol: float, inf_equal: bool) -> CompareSetup:
    """The comparison's arithmetic for the pair's dtypes (the CPU engine's CompareConfig::make)."""
    return _compare_setup(a.code, b.code, float(atol), float(rtol), bool(inf_equal))


@functools.lru_cache(maxsize=256)
def _compare_setup(code_a: int, code_b: int, atol: float, rtol: float, inf_equal: bool) -> CompareSetup:
    # (kept: a model's outputs are compared with the same few tolerances, and the rounding to
    # float32 through NumPy costs more than a small comparison's launches)
    variant = kernel_variant(code_a, code_b)
    f32 = variant.f32

    def rounded(x: float) -> float:
        return float(np.float32(x)) if f32 else float(x)

    return CompareSetup(variant=variant, inf_equal=inf_equal, atol=rounded(atol), rtol=rounded(rtol), eps=rounded(_EPS),
                        den_min_bits=0xFFFFFFFF80000000 if code_b == 3 else 0x8000000000000000)


def _empty_stream() -> dict:
    nan = math.nan
    return {"min": nan, "max": nan, "mean": nan, "var": nan, "std": nan, "mean_abs": nan, "mean_sq": nan,
            "argmin": -1, "argmax": -1, "nan": 0, "inf": 0, "order": []}


def _empty_raw() -> dict:
    return {"size": 0, "mismatches": 0, "a": _empty_stream(), "b": _empty_stream(), "absdiff": _empty_stream(),
            "reldiff": _empty_stream(), "l2": 0.0, "mse": math.nan, "cosine": math.nan, "psnr": math.nan,
            "snr": math.nan, "dot": 0.0}


def device_error_stats(a: Any, b: Any, *, atol: float, rtol: float, quantiles: Sequence[float],
                       infinities_compare_equal: bool, median: bool
                       ) -> tuple[dict, tuple[int, ...], Callable[[str], Callable[[], float]]] | None:
    """
    The statistics of CUDA arrays ``a`` and ``b`` computed on their device, as
    ``(raw, shape, median_of)``: ``raw`` in ``poly._native.error_stats``'s layout, ``median_of(stream)``
    a callable computing that stream's exact median on the device. None when the pair is not
    two CUDA arrays or cannot be compared there (the caller compares host copies).

    Raises:
        ValueError: for arrays of different shapes.
    """
    oa, ob = cuda_operand(a), cuda_operand(b)
    if oa is None or ob is None:
        return None
    if oa.shape != ob.shape:
        raise ValueError(f"error statistics need arrays of the same shape, got {oa.shape} and {ob.shape}")
    if oa.collapsed() is None or ob.collapsed() is None or not gpu_ready():
        return None
    n = oa.size
    requests = [(k, None) for k in (2, 3) if median] + [(k, float(q)) for k in (2, 3) for q in quantiles]
    requests = sorted(requests, key=lambda r: r[0])  # absdiff's first, each in request order
    setup = compare_setup(oa, ob, atol, rtol, infinities_compare_equal)
    shape = oa.shape
    def nans_and_extremes() -> tuple[list[int], dict[int, tuple[float, float]]]:
        # each stream's NaN count and extremes, for a select of this pair (none without order
        # statistics; a few dict reads: not kept, where a cache per call cost more than they do)
        return [raw[s]["nan"] for s in STREAM_NAMES], extreme_values(raw)

    try:
        if n == 0:
            raw = _empty_raw()
        else:
            with DeviceRun(oa, ob, setup) as run:
                # the statistics pass gathers the keys of the ranges a sample predicts (a large
                # input), or counts the first radix digit of absdiff and reldiff (and a mid-size
                # input's ranks are then selected on the device, read back with its results)
                ranges = plan_ranges(run, requests) if requests else None
                raw, hists, selected = run_error_stats(run, bool(requests) and ranges is None, ranges, requests)
                if requests:
                    nans, extremes = nans_and_extremes()
                    values = order_values(run, requests, nans, hists, ranges, selected, extremes)
                    for (k, _), v in zip(requests, values, strict=True):
                        raw[STREAM_NAMES[k]]["order"].append(v)
    except (OverflowError, GpuUnavailableError) as err:
        G_LOGGER.verbose(f"Comparing on the host: {err}")
        return None
    except GpuError as err:  # e.g. an NVRTC that cannot compile for this GPU: the host still can
        G_LOGGER.warning(f"On-device comparison failed, comparing host copies instead: {err}", mode=LogMode.ONCE)
        return None
    raw["compute_dtype"] = "bool" if setup.variant.xor_mode else ("float32" if setup.f32 else "float64")

    def median_of(stream: str) -> Callable[[], float]:
        k = STREAM_NAMES.index(stream)

        def compute() -> float:
            if n == 0:
                return math.nan
            with DeviceRun(oa, ob, setup) as run:
                nans, extremes = nans_and_extremes()
                return order_values(run, [(k, None)], nans, extremes=extremes)[0]
        return compute

    return raw, shape, median_of


def device_count_zeros(b: Any) -> int | None:
    """How many elements of the CUDA array ``b`` are zero, counted on its device; None when ``b``
    is not a CUDA array or the GPU path is unavailable."""
    ob = cuda_operand(b)
    if ob is None or ob.collapsed() is None or not gpu_ready():
        return None
    if ob.size == 0:
        return 0
    setup = compare_setup(ob, ob, 0.0, 0.0, False)
    try:
        with DeviceRun(ob, ob, setup) as run:
            return count_zeros(run)
    except GpuError:
        return None
