"""
The launch and reduction driver of the on-device error statistics.

``DeviceOperand`` describes one CUDA array (address, shape, byte strides, dtype code, stream);
``run_error_stats`` runs the statistics kernel on two of them in the arrays' CUDA context, on
the stream the arrays were produced on, and merges the per-block float64 records on the host
(a few hundred records: never the arrays). ``order_values`` is the exact radix select of the
order statistics on the device:

1. the statistics pass counts the top 12 key bits of absdiff and reldiff (a histogram each);
2. the keys of the elements in the bins that hold a wanted rank are gathered into a buffer per
   stream, in one more pass over the input (while they fit the memory budget; otherwise
   histogram passes over the input narrow the bins first);
3. radix passes over the gathered keys, 11 bits at a time, pin each rank's key exactly.

On a large input (``predicted_ranges.MIN_ELEMENTS``), ``plan_ranges`` first predicts from a
sample a key range holding each rank of absdiff and reldiff; the statistics pass then gathers
the keys within those ranges itself (instead of step 1), and step 2 is saved for every rank its
counts prove to lie in its range.

Only histograms and counts (a few KiB) come back to the host, and at the end the keys of the
groups still holding the ranks once they are at most ``COLLECT_MAX_KEYS`` (the last digits are
picked on the host: a radix pass and a synchronisation fewer).

The results follow the CPU engine's (poly-core's native/src/error_stats.cpp) definitions and
come back in the same dictionary layout as ``poly._native.error_stats``.
"""

from __future__ import annotations

import ctypes
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from poly.compare.stats.gpu.kernel_source import (
    DIGIT_BITS,
    FIRST_BITS,
    GATHER_RESERVE_BYTES,
    GATHER_STAGE_BYTES,
    HIST_GROUPS,
    MAX_DIMS,
    MAX_GROUPS,
    RANGES,
    RING_BYTES,
    THREADS,
    KernelVariant,
)
from poly.compare.stats.gpu.predicted_ranges import (
    MIN_ELEMENTS,
    SAMPLE_SIZE,
    RangePlan,
    region_capacity,
    stream_ranges,
)
from poly.compare.stats.gpu.program_cache import (
    GpuError,
    GpuUnavailableError,
    check,
    driver_api,
    load_program,
)

__all__ = ["DeviceOperand", "CompareSetup", "DeviceRun", "LaunchParams", "run_error_stats", "order_values", "count_zeros",
           "plan_ranges", "transfer_counter"]

GATHER_MIN_KEYS = 1 << 22  # keys gathered at once whatever the input's size...
GATHER_FRACTION = 2  # ... or up to 1/GATHER_FRACTION of its elements
GATHER_UNCHECKED_BYTES = 1 << 25  # a gather this small is not checked against the free memory
COLLECT_MAX_KEYS = 1 << 14  # groups holding this few keys in all (64 KiB of float32 keys) are copied to the host instead of narrowed further
POOLED_MAX = 1 << 26  # scratch buffers up to this size are kept for the next comparison...
LARGE_POOL_KEEP = 32  # ... larger ones freed to a pool that keeps 1/LARGE_POOL_KEEP of the device's memory mapped
_BINS = 1 << DIGIT_BITS
_FIRST_BINS = 1 << FIRST_BITS
_STREAMS = ("a", "b", "absdiff", "reldiff")

# Bytes copied from device to host in all, and the largest single copy (tests read them to
# prove that the arrays themselves never travel).
transfer_counter = {"dtoh_bytes": 0, "largest": 0}


@dataclass(frozen=True)
class DeviceOperand:
    """One CUDA array: ``strides`` in bytes; ``stream`` the CUDA array interface's (None: none)."""

    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    code: int
    itemsize: int
    stream: int | None

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def collapsed(self) -> tuple[bool, list[int], list[int]] | None:
        """(contiguous, shape, strides) with size-1 dimensions dropped and mergeable ones merged;
        None when more than MAX_DIMS dimensions remain."""
        dims = [(d, s) for d, s in zip(self.shape, self.strides, strict=True) if d != 1]
        merged: list[list[int]] = []
        for d, s in dims:
            if merged and merged[-1][1] == d * s:
                merged[-1] = [merged[-1][0] * d, s]
            else:
                merged.append([d, s])
        if not merged:
            merged = [[1, self.itemsize]]
        contiguous = len(merged) == 1 and merged[0][1] == self.itemsize
        if len(merged) > MAX_DIMS:
            return None
        return contiguous, [m[0] for m in merged], [m[1] for m in merged]


class _View(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_uint64), ("shape", ctypes.c_int64 * MAX_DIMS),
                ("strides", ctypes.c_int64 * MAX_DIMS), ("ndim", ctypes.c_int32), ("itemsize", ctypes.c_int32)]


class _Group(ctypes.Structure):
    _fields_ = [("prefix", ctypes.c_uint64), ("stream", ctypes.c_int32), ("bits", ctypes.c_int32),
                ("dbits", ctypes.c_int32), ("pad", ctypes.c_int32), ("lo", ctypes.c_uint64), ("hi", ctypes.c_uint64)]


class LaunchParams(ctypes.Structure):
    """The kernels' ``Params`` structure (kernel_source), passed by value to every launch."""

    _fields_ = [("a", _View), ("b", _View), ("n", ctypes.c_uint64), ("atol", ctypes.c_double),
                ("rtol", ctypes.c_double), ("eps", ctypes.c_double), ("den_min_bits", ctypes.c_uint64),
                ("out", ctypes.c_uint64), ("hist", ctypes.c_uint64), ("ngroups", ctypes.c_int32),
                ("inf_equal", ctypes.c_int32), ("chunked", ctypes.c_int32), ("eps32", ctypes.c_float),
                ("groups", _Group * MAX_GROUPS), ("seg", ctypes.c_uint64 * MAX_GROUPS),
                ("seg_len", ctypes.c_uint64 * MAX_GROUPS), ("rout", ctypes.c_uint64), ("rfills", ctypes.c_uint64),
                ("rbuf", ctypes.c_uint64 * 2),
                ("rlo", ctypes.c_uint64 * (2 * RANGES)), ("rhi", ctypes.c_uint64 * (2 * RANGES)),
                ("nranges", ctypes.c_int32 * 2), ("rcap", ctypes.c_uint32), ("nregions", ctypes.c_uint32)]


_ACC = [("n", "f8"), ("mean", "f8"), ("m2", "f8"), ("sum", "f8"), ("sq", "f8"), ("ab", "f8"), ("mn", "f8"),
        ("mx", "f8"), ("imn", "i8"), ("imx", "i8"), ("inan", "i8"), ("nnan", "u8"), ("ninf", "u8"), ("pad", "i8")]
_PART = np.dtype([("s", np.dtype(_ACC), (4,)), ("dot", "f8"), ("fails", "u8")])


@dataclass(frozen=True)
class CompareSetup:
    """The comparison's arithmetic (the CPU engine's ``CompareConfig``) and its compiled variant."""

    variant: KernelVariant
    inf_equal: bool
    atol: float
    rtol: float
    eps: float
    den_min_bits: int

    @property
    def f32(self) -> bool:
        return self.variant.f32


class _Device:
    """Per-device facts and the context the kernels run in."""

    def __init__(self, ordinal: int):
        drv = driver_api
        self.ordinal = ordinal
        dev = check(drv.cuDeviceGet(ordinal), "cuDeviceGet")
        attr = drv.CUdevice_attribute
        self.sms = int(check(drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
                             "cuDeviceGetAttribute"))
        self.cc = (int(check(drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
                             "cuDeviceGetAttribute")),
                   int(check(drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
                             "cuDeviceGetAttribute")))
        self.context = check(drv.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
        self.lock = threading.Lock()
        # Scratch buffers kept for later comparisons, by power-of-two size: a comparison per
        # sample must not pay cudaMalloc/cudaFree (which synchronizes) every time.
        self.free_buffers: dict[int, list[int]] = {}
        self.total_memory = int(check(drv.cuDeviceTotalMem(dev), "cuDeviceTotalMem"))
        self._large_pool = None

    def large_pool(self):
        """The stream-ordered memory pool of the large scratch buffers (a gather's keys): it keeps
        up to 1/LARGE_POOL_KEEP of the device's memory mapped once they are freed, so that the next
        comparison's buffers cost no mapping (a gigabyte took about 0.8 ms to map and unmap per
        comparison); beyond that, freed memory goes back to the system as from any pool."""
        if self._large_pool is None:
            drv = driver_api
            props = drv.CUmemPoolProps()
            props.allocType = drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
            props.location.type = drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
            props.location.id = self.ordinal
            pool = check(drv.cuMemPoolCreate(props), "cuMemPoolCreate")
            check(drv.cuMemPoolSetAttribute(pool, drv.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                            drv.cuuint64_t(self.total_memory // LARGE_POOL_KEEP)),
                  "cuMemPoolSetAttribute")
            self._large_pool = pool
        return self._large_pool


_DEVICES: dict[int, _Device] = {}
_DEVICES_LOCK = threading.Lock()
_INIT = []


def _device_of(ptr: int) -> _Device:
    drv = driver_api
    with _DEVICES_LOCK:
        if not _INIT:
            try:
                check(drv.cuInit(0), "cuInit")
            except GpuError as err:
                raise GpuUnavailableError(str(err)) from err
            _INIT.append(True)
        ordinal = int(check(drv.cuPointerGetAttribute(
            drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr), "cuPointerGetAttribute"))
        dev = _DEVICES.get(ordinal)
        if dev is None:
            dev = _DEVICES[ordinal] = _Device(ordinal)
        return dev


class DeviceRun:
    """One comparison's work on the device: its context made current, its stream ordered after
    the arrays' streams, scratch memory freed at the end. Use as a context manager."""

    def __init__(self, a: DeviceOperand, b: DeviceOperand, setup: CompareSetup):
        self.a, self.b, self.setup = a, b, setup
        self.n = a.size
        self.device = _device_of(a.ptr)
        if b.ptr != a.ptr and _device_of(b.ptr) is not self.device:
            raise GpuUnavailableError("the two arrays live on different GPUs")
        self._allocs: list[tuple[int, int]] = []
        self._async_allocs: list[int] = []
        self._event = None
        self._pushed = False
        self._params: LaunchParams | None = None
        self._busy = False  # work queued on the stream since it was last waited for

    def __enter__(self) -> DeviceRun:
        drv = driver_api
        self.device.lock.acquire()
        try:
            check(drv.cuCtxPushCurrent(self.device.context), "cuCtxPushCurrent")
            self._pushed = True
            self.program = load_program(int(self.device.context), self.device.cc, self.setup.variant)
            streams = [s for s in (self.a.stream, self.b.stream) if s is not None]
            self.stream = streams[0] if streams else 0
            if len(streams) == 2 and streams[1] != streams[0]:  # order after the work on b's stream too
                self._event = check(drv.cuEventCreate(int(drv.CUevent_flags.CU_EVENT_DISABLE_TIMING)), "cuEventCreate")
                check(drv.cuEventRecord(self._event, streams[1]), "cuEventRecord")
                check(drv.cuStreamWaitEvent(self.stream, self._event, 0), "cuStreamWaitEvent")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        drv = driver_api
        try:
            for ptr in self._async_allocs:
                drv.cuMemFreeAsync(ptr, self.stream)
            if self._allocs and self._busy:  # pooled buffers go back once no kernel can touch them
                drv.cuStreamSynchronize(self.stream)
            for size, ptr in self._allocs:
                self.device.free_buffers[size].append(ptr)
            if self._event is not None:
                drv.cuEventDestroy(self._event)
            if self._pushed:
                drv.cuCtxPopCurrent()
        finally:
            self.device.lock.release()

    # -- memory -------------------------------------------------------------------------------
    def alloc(self, nbytes: int, zero: bool = False) -> int:
        """Scratch memory for this run: small buffers come from the device's pool (no allocation
        per comparison); large ones are allocated and freed in stream order (no synchronisation),
        from the device's large-scratch pool (``_Device.large_pool``)."""
        size = 1 << max(int(nbytes) - 1, 255).bit_length()
        if size > POOLED_MAX:
            ptr = int(check(driver_api.cuMemAllocFromPoolAsync(int(nbytes), self.device.large_pool(), self.stream),
                            "cuMemAllocFromPoolAsync"))
            self._async_allocs.append(ptr)
        else:
            pool = self.device.free_buffers.setdefault(size, [])
            ptr = pool.pop() if pool else int(check(driver_api.cuMemAlloc(size), "cuMemAlloc"))
            self._allocs.append((size, ptr))
        if zero:
            check(driver_api.cuMemsetD8Async(ptr, 0, max(int(nbytes), 1), self.stream), "cuMemsetD8Async")
            self._busy = True
        return ptr

    def read(self, ptr: int, out: np.ndarray) -> np.ndarray:
        """Copies ``out.nbytes`` from ``ptr`` into ``out`` once the stream's work is done."""
        return self.read_all([(ptr, out)])[0]

    def read_all(self, copies: Sequence[tuple[int, np.ndarray]]) -> list[np.ndarray]:
        """``read`` of each (ptr, out) pair, with one wait for the stream (a synchronisation costs
        tens of microseconds: a small comparison is made of little else)."""
        for ptr, out in copies:
            if out.nbytes:
                check(driver_api.cuMemcpyDtoHAsync(out.ctypes.data, ptr, out.nbytes, self.stream), "cuMemcpyDtoHAsync")
                transfer_counter["dtoh_bytes"] += out.nbytes
                transfer_counter["largest"] = max(transfer_counter["largest"], out.nbytes)
        check(driver_api.cuStreamSynchronize(self.stream), "cuStreamSynchronize")
        self._busy = False
        return [out for _, out in copies]

    # -- launches -----------------------------------------------------------------------------
    def free_memory(self) -> int:
        """Bytes of device memory free now."""
        free, _ = check(driver_api.cuMemGetInfo(), "cuMemGetInfo")
        return int(free)

    def params(self) -> LaunchParams:
        """A fresh copy of this run's launch parameters (the arrays and the arithmetic), for one
        launch to add its own to."""
        if self._params is None:
            self._params = self._base_params()
        return LaunchParams.from_buffer_copy(self._params)

    def _base_params(self) -> LaunchParams:
        p = LaunchParams()
        chunked = self.a.itemsize == self.b.itemsize
        for field, op in (("a", self.a), ("b", self.b)):
            contiguous, shape, strides = op.collapsed()
            chunked = chunked and contiguous and op.ptr % 16 == 0
            v = getattr(p, field)
            v.ptr = op.ptr
            v.ndim = len(shape)
            v.itemsize = op.itemsize
            for i, (d, s) in enumerate(zip(shape, strides, strict=True)):
                v.shape[i] = d
                v.strides[i] = s
        p.n = self.n
        p.atol, p.rtol, p.eps = self.setup.atol, self.setup.rtol, self.setup.eps
        p.eps32 = self.setup.eps  # exact: eps is rounded to float for float32 comparisons
        p.den_min_bits = self.setup.den_min_bits
        p.inf_equal = int(self.setup.inf_equal)
        p.chunked = int(chunked)
        return p

    def grid(self, name: str, shared: int = 0, n: int | None = None) -> int:
        """Blocks for kernel ``name``: as many as the device keeps resident (one wave of a
        grid-stride loop), fewer for a small input (``n`` elements, default the arrays')."""
        per_sm = self.program.blocks_per_sm(name, THREADS, shared)
        n = self.n if n is None else n
        return max(1, min(self.device.sms * per_sm, -(-n // THREADS)))

    def launch(self, name: str, params: LaunchParams, grid: int, shared: int = 0) -> None:
        argv = np.array([ctypes.addressof(params)], dtype=np.uint64)
        check(driver_api.cuLaunchKernel(self.program.functions[name], grid, 1, 1, THREADS, 1, 1, shared,
                                        self.stream, argv.ctypes.data, 0), f"cuLaunchKernel({name})")
        self._busy = True


# -- the statistics pass ---------------------------------------------------------------------------
def _merge_streams(parts: np.ndarray, n: int) -> list[dict]:
    """The four streams' statistics from the per-block records (``parts``: blocks x 4), with the
    CPU engine's NumPy semantics; each reduction runs over all four streams at once."""
    with np.errstate(all="ignore"):  # sums overflow to inf, and inf - inf gives NaN, as NumPy's would
        cnt, mean, m2 = parts["n"], parts["mean"], parts["m2"]
        total = cnt.sum(axis=0)
        weighted = np.where(cnt > 0, cnt * mean, 0.0)
        mu = weighted.sum(axis=0) / total
        spread = np.where(cnt > 0, m2 + cnt * (mean - mu) ** 2, 0.0).sum(axis=0)
        nans, infs = parts["nnan"].sum(axis=0), parts["ninf"].sum(axis=0)
        plain, ab, sq = parts["sum"].sum(axis=0), parts["ab"].sum(axis=0), parts["sq"].sum(axis=0)
        first_nan = np.where(parts["inan"] >= 0, parts["inan"], np.iinfo(np.int64).max).min(axis=0)
        extrema = {}
        for key, val, idx, pick in (("min", "mn", "imn", np.min), ("max", "mx", "imx", np.max)):
            has = parts[idx] >= 0
            best = pick(np.where(has, parts[val], np.inf if key == "min" else -np.inf), axis=0)
            at = np.where(has & (parts[val] == best), parts[idx], np.iinfo(np.int64).max).min(axis=0)
            extrema[key] = (best.tolist(), at.tolist())
    out = []
    for k in range(parts.shape[1]):
        nan, inf = int(nans[k]), int(infs[k])
        m, moment2 = float(mu[k]), float(spread[k])
        nonfinite = nan > 0 or inf > 0
        if not nonfinite and not (math.isfinite(m) and math.isfinite(moment2)):
            raise OverflowError("moments overflow float64")  # finite values beyond ~1e154: the host engine scales
        r = {"nan": nan, "inf": inf}
        r["mean"] = float(plain[k]) / n if nonfinite else m
        r["var"] = math.nan if nonfinite else moment2 / n
        r["std"] = math.sqrt(r["var"]) if not math.isnan(r["var"]) else math.nan
        r["mean_abs"] = float(ab[k]) / n
        r["mean_sq"] = float(sq[k]) / n
        if nan > 0:
            first = int(first_nan[k])
            r.update(min=math.nan, max=math.nan, argmin=first, argmax=first)
        else:
            for key in ("min", "max"):
                r[key] = float(extrema[key][0][k])
                r["arg" + key] = int(extrema[key][1][k])
        r["order"] = []
        out.append(r)
    return out


def _stats_shared(want_hist: bool) -> int:
    """Dynamic shared memory of the statistics pass."""
    return RING_BYTES + (2 * _FIRST_BINS * 4 if want_hist else 0)


def run_error_stats(run: DeviceRun, want_hist: bool, plan: RangePlan | None = None
                    ) -> tuple[dict, dict[int, np.ndarray] | None]:
    """The statistics pass. Returns the native engine's dictionary (without order statistics)
    and, with ``want_hist``, the first-digit histograms of absdiff (2) and reldiff (3). With a
    ``plan`` (``plan_ranges``), the pass also gathers the keys in its predicted ranges."""
    n = run.n
    shared = _stats_shared(want_hist)
    kernel = "poly_stats" if plan is None else "poly_stats_ranges"
    grid = plan.blocks if plan is not None else run.grid(kernel, shared)
    p = run.params()
    p.out = run.alloc(grid * _PART.itemsize)
    if want_hist:
        p.hist = run.alloc(2 * _FIRST_BINS * 8, zero=True)
    if plan is not None:
        plan.apply(p)
    run.launch(kernel, p, grid, shared)
    first_pass = _range_first_pass(run, plan) if plan is not None else []
    copies = [(p.out, np.empty(grid, dtype=_PART))]
    if want_hist:
        copies.append((p.hist, np.empty(2 * _FIRST_BINS, dtype=np.uint64)))
    if plan is not None:
        copies.append((plan.rout, np.empty(plan.rout_words, dtype=np.uint64)))
    copies += _radix_copies(first_pass)
    parts, *rest = run.read_all(copies)
    if plan is not None:
        hists = rest[len(rest) - len(first_pass):]
        del rest[len(rest) - len(first_pass):]
        plan.take(rest.pop())
        plan.first_pass = (first_pass, hists)
    hists = {2: rest[0][:_FIRST_BINS], 3: rest[0][_FIRST_BINS:]} if want_hist else None
    streams = _merge_streams(parts["s"], n)
    raw = {"size": n, "mismatches": int(parts["fails"].sum()), "a": streams[0], "b": streams[1],
           "absdiff": streams[2], "reldiff": streams[3], "dot": float(np.sum(parts["dot"]))}
    _metrics(raw, n, float(np.sum(parts["s"][:, 2]["sq"])), float(np.sum(parts["s"][:, 0]["sq"])),
             float(np.sum(parts["s"][:, 1]["sq"])))
    return raw, hists


def _metrics(raw: dict, n: int, abs_sq: float, a_sq: float, b_sq: float) -> None:
    """Distance and quality metrics, with the CPU engine's conventions for the degenerate cases."""
    sb = raw["b"]
    raw["l2"] = math.sqrt(abs_sq) if not math.isnan(abs_sq) else math.nan
    mse = abs_sq / n
    raw["mse"] = mse
    norm_a = math.sqrt(a_sq) if not math.isnan(a_sq) else math.nan
    norm_b = math.sqrt(b_sq) if not math.isnan(b_sq) else math.nan
    if norm_a == 0 and norm_b == 0:
        raw["cosine"] = 1.0
    elif norm_a == 0 or norm_b == 0:
        raw["cosine"] = 0.0
    else:
        with np.errstate(all="ignore"):
            raw["cosine"] = float(np.float64(raw["dot"]) / (np.float64(norm_a) * np.float64(norm_b)))
    if math.isnan(mse):
        raw["psnr"] = raw["snr"] = math.nan
    elif mse == 0:
        raw["psnr"] = raw["snr"] = math.inf
    else:
        lo, hi = abs(sb["min"]), abs(sb["max"])
        peak = hi if lo < hi else lo  # std::max's choice, NaN included
        if peak == 0:
            peak = 1.0
        with np.errstate(all="ignore"):
            raw["psnr"] = float(20.0 * np.log10(np.float64(peak)) - 10.0 * np.log10(np.float64(mse)))
            signal = sb["mean_sq"]
            raw["snr"] = -math.inf if signal == 0 else float(10.0 * np.log10(np.float64(signal) / np.float64(mse)))


# -- order statistics ----------------------------------------------------------------------------------
@dataclass
class _Target:
    """One wanted rank of one stream, narrowed digit by digit: the known top ``bits`` bits
    (``prefix``) of its key's offset from ``lo`` (0 but for a rank looked for in a predicted range
    [``lo``, ``hi``]), its rank among the elements with that prefix and how many they are. Its key
    is ``lo + prefix`` once all bits are known."""

    stream: int
    rank: int
    key_bits: int
    prefix: int = 0
    bits: int = 0
    rank_in: int = 0
    count: int = 0
    done: bool = False
    # gathered keys: (device address, capacity, address of their count, 0), or the statistics
    # pass's regions: (device address, keys per region, address of the regions' fills, regions)
    segment: tuple[int, int, int, int] | None = None
    lo: int = 0
    hi: int = -1  # -1: any key
    missed: bool = False  # the rank proved not to lie in its predicted range

    @property
    def group(self) -> tuple[int, int, int, int, int]:
        return self.stream, self.prefix, self.bits, self.lo, self.hi


def _descend(items: Sequence[tuple[Sequence[_Target], np.ndarray, int]]) -> None:
    """Narrows the targets of each (targets, histogram, dbits) item (the targets of one group, the
    histogram of their next ``dbits`` key bits) at once: the histograms laid end to end have one
    running sum, in which one search places every rank (a few array operations per pass, not a
    few per group: those cost more than the pass on a small input)."""
    items = [item for item in items if item[0]]
    if not items:
        return
    lengths = np.array([len(h) for _, h, _ in items])
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    counts_of = np.concatenate([h for _, h, _ in items])
    cum = np.cumsum(counts_of, dtype=np.uint64)
    bases = np.where(starts > 0, cum[np.maximum(starts, 1) - 1], 0).astype(np.uint64)  # counts before each histogram
    totals = cum[starts + lengths - 1] - bases
    owner = np.repeat(np.arange(len(items)), [len(ts) for ts, _, _ in items])
    ranks = np.array([t.rank_in for ts, _, _ in items for t in ts], dtype=np.uint64)
    ranks = np.minimum(ranks, np.maximum(totals[owner], 1) - 1)
    at = np.searchsorted(cum, bases[owner] + ranks, side="right")  # within the owner's histogram
    at = np.minimum(at, starts[owner] + lengths[owner] - 1)  # (only an empty histogram reaches past it)
    below = np.where(at > starts[owner], cum[np.maximum(at, 1) - 1] - bases[owner], 0)
    rows = zip((ranks - below).tolist(), (at - starts[owner]).tolist(), counts_of[at].tolist(),
               totals[owner].tolist(), strict=True)
    for ts, _, dbits in items:
        for t in ts:
            rank_in, b, count, total = next(rows)
            if t.hi != -1 and t.rank_in >= total:  # a predicted range that does not hold its rank
                t.missed = t.done = True
                continue
            if total == 0:  # cannot happen for a rank below the count; kept from looping forever
                t.prefix <<= t.key_bits - t.bits
                t.bits, t.done = t.key_bits, True
                continue
            t.rank_in = rank_in
            t.prefix = (t.prefix << dbits) | b
            t.bits += dbits
            t.count = count
            t.done = t.bits >= t.key_bits


_GroupKey = tuple[int, int, int, int, int]  # (stream, prefix, bits, lo, hi)


def _set_groups(p: LaunchParams, groups: Sequence[_GroupKey], dbits: Sequence[int]) -> None:
    p.ngroups = len(groups)
    for j, ((stream, prefix, bits, lo, hi), d) in enumerate(zip(groups, dbits, strict=True)):
        g = p.groups[j]
        g.stream, g.prefix, g.bits, g.dbits = stream, prefix, bits, d
        g.lo, g.hi = lo, (hi if hi != -1 else 0xFFFFFFFFFFFFFFFF)


def _pending(targets: Sequence[_Target]) -> dict[_GroupKey, list[_Target]]:
    groups: dict[_GroupKey, list[_Target]] = {}
    for t in targets:
        if not t.done:
            groups.setdefault(t.group, []).append(t)
    return groups


Launch = Callable[[LaunchParams, list[_GroupKey]], None]


_Launched = list[tuple[dict[_GroupKey, list[_Target]], list[_GroupKey], list[int], int]]


def _radix_pass(run: DeviceRun, jobs: Sequence[tuple[dict[_GroupKey, list[_Target]], Launch]],
                key_bits: int, per_launch: int) -> None:
    """One radix pass: for each job ``(groups, launch)``, one launch per ``per_launch`` of its
    groups (``launch(params, chunk)`` sets the kernel's own parameters and launches it); the
    histograms, read back together, descend the targets."""
    launched = _radix_launch(run, jobs, key_bits, per_launch)
    _radix_descend(launched, run.read_all(_radix_copies(launched)))


def _radix_launch(run: DeviceRun, jobs: Sequence[tuple[dict[_GroupKey, list[_Target]], Launch]],
                  key_bits: int, per_launch: int) -> _Launched:
    """The launches of ``_radix_pass``: (groups, chunk, digit bits, histograms' address) per launch."""
    launched = []
    for groups, launch in jobs:
        keys = list(groups)
        for i in range(0, len(keys), per_launch):
            chunk = keys[i:i + per_launch]
            dbits = [min(DIGIT_BITS, key_bits - g[2]) for g in chunk]
            p = run.params()
            _set_groups(p, chunk, dbits)
            p.hist = run.alloc(len(chunk) * _BINS * 8, zero=True)
            launch(p, chunk)
            launched.append((groups, chunk, dbits, p.hist))
    return launched


def _radix_copies(launched: _Launched) -> list[tuple[int, np.ndarray]]:
    """The copies that read the histograms of ``launched`` back."""
    return [(ptr, np.empty(len(chunk) * _BINS, dtype=np.uint64)) for _, chunk, _, ptr in launched]


def _radix_descend(launched: _Launched, hists: Sequence[np.ndarray]) -> None:
    """Descends the targets of ``launched`` by their histograms ``hists`` (read back)."""
    _descend([(groups[g], h[j * _BINS:j * _BINS + (1 << dbits[j])], dbits[j])
              for (groups, chunk, dbits, _), h in zip(launched, hists, strict=True) for j, g in enumerate(chunk)])


def _input_hist_pass(run: DeviceRun, groups: dict[_GroupKey, list[_Target]], key_bits: int) -> None:
    """One histogram pass over the input for each HIST_GROUPS of ``groups``; descends their targets."""

    def launch(p: LaunchParams, chunk: list[_GroupKey]) -> None:
        shared = RING_BYTES + len(chunk) * _BINS * 4
        run.launch("poly_radix_hist", p, run.grid("poly_radix_hist", shared), shared)

    _radix_pass(run, [(groups, launch)], key_bits, HIST_GROUPS)


def _keys_hist_pass(run: DeviceRun, groups: dict[_GroupKey, list[_Target]], key_bits: int) -> None:
    """One radix pass over each gathered segment, for all its groups (HIST_GROUPS per launch: one
    read of the segment counts them all); descends their targets."""
    launched = _keys_hist_launch(run, groups, key_bits)
    _radix_descend(launched, run.read_all(_radix_copies(launched)))


def _by_segment(groups: dict[_GroupKey, list[_Target]]) -> dict[tuple[int, int, int, int], dict[_GroupKey, list[_Target]]]:
    by_segment: dict[tuple[int, int, int, int], dict[_GroupKey, list[_Target]]] = {}
    for g, targets in groups.items():
        by_segment.setdefault(targets[0].segment, {})[g] = targets
    return by_segment


def _segment_grid(run: DeviceRun, p: LaunchParams, segment: tuple[int, int, int, int], name: str, shared: int) -> int:
    """Sets the parameters of a pass of kernel ``name`` over ``segment`` (a gather's buffer, or the
    statistics pass's regions) and returns its grid."""
    ptr, capacity, counter, regions = segment
    p.seg[0], p.out = ptr, counter  # the length (or each region's) is read on the device
    if regions:
        p.rcap, p.nregions = capacity, regions
        return run.grid(name, shared, n=regions * 32)  # a warp per region
    p.seg_len[0] = capacity
    return run.grid(name, shared, n=max(capacity, 1))


def _keys_hist_launch(run: DeviceRun, groups: dict[_GroupKey, list[_Target]], key_bits: int) -> _Launched:
    """The launches of ``_keys_hist_pass``."""

    def launcher_of(segment: tuple[int, int, int, int]) -> Launch:
        def launch(p: LaunchParams, chunk: list[_GroupKey]) -> None:
            shared = len(chunk) * _BINS * 4
            run.launch("poly_keys_hist", p, _segment_grid(run, p, segment, "poly_keys_hist", shared), shared)
        return launch

    return _radix_launch(run, [(members, launcher_of(segment)) for segment, members in _by_segment(groups).items()],
                         key_bits, HIST_GROUPS)


def _collect_pass(run: DeviceRun, groups: dict[_GroupKey, list[_Target]], key_bits: int) -> None:
    """The last radix passes' work in one read: the keys of ``groups`` (few by now) are copied to
    the host, where each target's key is picked by its rank among its group's keys."""
    key_dtype = np.uint32 if key_bits == 32 else np.uint64
    launched = []
    for segment, members in _by_segment(groups).items():
        keys = list(members)
        for i in range(0, len(keys), MAX_GROUPS):
            chunk = keys[i:i + MAX_GROUPS]
            capacity = sum(members[g][0].count for g in chunk)  # each group's exact count (or a bound)
            p = run.params()
            _set_groups(p, chunk, [0] * len(chunk))
            p.seg[1], p.seg_len[1] = run.alloc(max(capacity, 1) * (key_bits // 8)), capacity
            p.hist = run.alloc(8, zero=True)  # the keys' counter
            run.launch("poly_keys_collect", p, _segment_grid(run, p, segment, "poly_keys_collect", 0))
            launched.append((members, chunk, p.seg[1], capacity, p.hist))
    copies = [(ptr, np.empty(capacity, dtype=key_dtype)) for _, _, ptr, capacity, _ in launched]
    copies += [(counter, np.empty(1, dtype=np.uint64)) for *_, counter in launched]
    reads = run.read_all(copies)
    for (members, chunk, _, capacity, _), keys, written in zip(launched, reads[:len(launched)], reads[len(launched):],
                                                               strict=True):
        keys = keys[:min(int(written[0]), capacity)]
        for g in chunk:
            stream, prefix, bits, lo, hi = g
            mine = (keys != 0) & (keys >= key_dtype(lo))
            if hi != -1:
                mine &= keys <= key_dtype(hi)
            if bits:
                mine &= ((keys - key_dtype(lo)) >> key_dtype(key_bits - bits)) == key_dtype(prefix)
            ordered = np.sort(keys[mine]) - key_dtype(lo)  # offsets from lo, as the prefixes are
            for t in members[g]:
                if t.rank_in >= len(ordered):
                    if t.hi != -1:  # a predicted range that does not hold its rank
                        t.missed = t.done = True
                        continue
                    t.rank_in = len(ordered) - 1  # (cannot happen: the counts are exact)
                t.prefix, t.bits, t.done = int(ordered[t.rank_in]), key_bits, True


def _narrow_on_segments(run: DeviceRun, targets: Sequence[_Target], key_bits: int) -> None:
    """Radix passes over the targets' gathered keys until every key is known; the last ones done
    on the host once the pending groups hold few keys."""
    while True:
        groups = _pending(targets)
        if not groups:
            break
        if sum(ts[0].count for ts in groups.values()) <= COLLECT_MAX_KEYS:
            _collect_pass(run, groups, key_bits)
        else:
            _keys_hist_pass(run, groups, key_bits)


_GATHER_SHARED = RING_BYTES + GATHER_STAGE_BYTES


def _reserve_slack(run: DeviceRun, key_size: int) -> int:
    """Slots of a stream's buffer the gather's warps may reserve and leave unused: a run each."""
    return run.grid("poly_radix_gather", _GATHER_SHARED) * (THREADS // 32) * (GATHER_RESERVE_BYTES // key_size)


def _gather(run: DeviceRun, groups: dict[_GroupKey, list[_Target]], key_size: int) -> None:
    """Gathers the keys of the groups into one segment per stream (one pass over the input per
    MAX_GROUPS groups); the targets then narrow on those segments, each radix pass counting only
    its group's keys. (A segment per group cost the gather a warp step per group a warp's keys
    fell in: three times the statistics pass.) A segment holds its keys and the unused rest of
    the runs its warps reserved (key 0, counted by no pass): its length is its counter's value."""
    keys = list(groups)
    slack = _reserve_slack(run, key_size)
    for i in range(0, len(keys), MAX_GROUPS):
        chunk = keys[i:i + MAX_GROUPS]
        p = run.params()
        _set_groups(p, chunk, [0] * len(chunk))
        p.out = run.alloc(len(chunk) * 8, zero=True)  # a counter per stream, at its first group's index
        by_stream: dict[int, list[int]] = {}
        for j, g in enumerate(chunk):
            by_stream.setdefault(g[0], []).append(j)
        capacities = {s: sum(groups[chunk[j]][0].count for j in members) + slack for s, members in by_stream.items()}
        ptr = run.alloc(sum(capacities.values()) * key_size)
        for stream, members in by_stream.items():
            for j in members:
                p.seg[j], p.seg_len[j] = ptr, capacities[stream]
                for t in groups[chunk[j]]:
                    t.segment = (ptr, capacities[stream], p.out + 8 * members[0], 0)
            ptr += capacities[stream] * key_size
        run.launch("poly_radix_gather", p, run.grid("poly_radix_gather", _GATHER_SHARED), _GATHER_SHARED)


def _range_targets(plan: RangePlan, wanted: Sequence[tuple[int, int]], key_bits: int) -> list[_Target]:
    """The targets of the ranks in ``plan``'s ranges, each on its range's keys: the top bits its
    offsets from the range's low end share (all zero; one short of the whole key, so that a pass
    counts it) as its prefix, its rank still to be set from the statistics pass's counts
    (``_seed_in_ranges``)."""
    targets = []
    for stream, rank in wanted:
        sr = plan.streams.get(stream)
        if sr is None or rank not in sr.range_of:
            continue
        lo, hi = sr.bounds[sr.range_of[rank]]
        bits = min(key_bits - (hi - lo).bit_length(), key_bits - 1)
        targets.append(_Target(stream=stream, rank=rank, key_bits=key_bits, prefix=0, bits=bits,
                               lo=lo, hi=hi, segment=(plan.buffers[stream], plan.capacity, plan.fills_address(stream),
                                                      plan.regions)))
    return targets


def _range_first_pass(run: DeviceRun, plan: RangePlan) -> _Launched:
    """Launches the first radix pass over the ranges' keys, right behind the statistics pass (its
    groups are the ranges: they need none of its counts), so that its histograms come back with
    the pass's results."""
    return _keys_hist_launch(run, _pending(plan.targets), plan.key_bits)


def _seed_in_ranges(plan: RangePlan) -> list[_Target]:
    """Sets the rank of each of ``plan``'s targets that the statistics pass proved to lie at or
    above its range's low end (the first pass over the range proves it below the high end), and
    descends them by that first pass where it was made; marks the others missed. Returns them."""
    for t in plan.targets:
        sr = plan.streams[t.stream]
        below = plan.below_range(t.stream, sr.range_of[t.rank])
        if not plan.usable(t.stream) or t.rank < below:
            t.missed = t.done = True
        else:
            t.rank_in, t.count = t.rank - below, int(plan.found[t.stream - 2])
    if plan.first_pass is not None:
        launched, hists = plan.first_pass
        for groups, _, _, _ in launched:
            for g in groups:
                groups[g] = [t for t in groups[g] if not t.missed]
        _radix_descend(launched, hists)
    return plan.targets


def _select_keys(run: DeviceRun, wanted: Sequence[tuple[int, int]], first: dict[int, np.ndarray] | None,
                 plan: RangePlan | None = None) -> list[int]:
    """The keys of the (stream, rank) targets, by radix select over the device data: over the keys
    the statistics pass gathered in its predicted ranges (``plan``) where those hold the rank, and
    otherwise starting from its first-digit histograms ``first`` for the streams it has."""
    key_bits = 32 if run.setup.f32 else 64
    keys: list[int | None] = [None] * len(wanted)
    ranged = _seed_in_ranges(plan) if plan else []
    _narrow_on_segments(run, ranged, key_bits)
    for t in ranged:
        if not t.missed and (t.stream, t.rank) in wanted:
            keys[wanted.index((t.stream, t.rank))] = t.lo + t.prefix
    rest = [i for i, k in enumerate(keys) if k is None]
    for i, key in zip(rest, _select_keys_of_input(run, [wanted[i] for i in rest], first), strict=True):
        keys[i] = key
    return keys


def _select_keys_of_input(run: DeviceRun, wanted: Sequence[tuple[int, int]], first: dict[int, np.ndarray] | None
                          ) -> list[int]:
    """``_select_keys`` for ranks looked for over the whole input: a gather pass (histogram passes
    over the input first where its bins are too full) then radix passes over the gathered keys."""
    if not wanted:
        return []
    n = run.n
    key_bits = 32 if run.setup.f32 else 64
    targets = [_Target(stream=s, rank=r, key_bits=key_bits, rank_in=r, count=n) for s, r in wanted]
    if first:
        _descend([([t for t in targets if t.stream == stream], hist, FIRST_BITS) for stream, hist in first.items()])
    # The bins holding the ranks are gathered once they fit the budget; histogram passes over
    # the input narrow them first where they do not (ties, or a device short of memory).
    budget = max(GATHER_MIN_KEYS, n // GATHER_FRACTION)
    while True:
        groups = _pending(targets)
        if not groups:
            break
        wanted = sum(ts[0].count for ts in groups.values())
        # within a quarter of the free memory (asked only for a large gather: the query costs
        # as much as a small comparison's kernels), the reserved runs' slack included
        room = wanted + len({g[0] for g in groups}) * _reserve_slack(run, key_bits // 8)
        small = room * (key_bits // 8) <= GATHER_UNCHECKED_BYTES
        if wanted <= budget and (small or room <= run.free_memory() // (4 * (key_bits // 8))):
            _gather(run, groups, key_bits // 8)
            break
        _input_hist_pass(run, groups, key_bits)
    _narrow_on_segments(run, targets, key_bits)
    return [t.prefix for t in targets]


def _key_value(key: int, f32: bool) -> float:
    if f32:
        u = (key & 0x7FFFFFFF) if key & 0x80000000 else (~key & 0xFFFFFFFF)
        return float(np.array([u], dtype=np.uint32).view(np.float32)[0])
    u = (key & 0x7FFFFFFFFFFFFFFF) if key & 0x8000000000000000 else (~key & 0xFFFFFFFFFFFFFFFF)
    return float(np.array([u], dtype=np.uint64).view(np.float64)[0])


def _ranks_for(q: float | None, n: int) -> tuple[int, int, float]:
    """numpy.median (q None) / numpy.quantile(method="linear") neighbours and weight."""
    if q is None:
        return (n - 1) // 2, n // 2, 0.5
    vi = float(n - 1) * q
    if vi >= float(n - 1):
        return n - 1, n - 1, vi + 1.0  # NumPy points both neighbours at the last element
    prev = 0.0 if vi < 0 else math.floor(vi)
    lo = int(prev)
    return lo, lo + 1, 0.0 if vi < 0 else vi - prev


def _lerp(lo: float, hi: float, gamma: float) -> float:
    with np.errstate(all="ignore"):
        diff = np.float64(hi) - np.float64(lo)
        if gamma >= 0.5:
            return float(np.float64(hi) - diff * (1.0 - gamma))
        return float(np.float64(lo) + diff * gamma)


def _order_ranks(requests: Sequence[tuple[int, float | None]], n: int, nan_counts: Sequence[int] | None = None
                 ) -> tuple[list, list[tuple[int, int]]]:
    """Per request, None (no value: a stream with NaN, or no elements) or (index of its lower rank,
    of its upper rank, weight, median?) into the list of distinct (stream, rank) targets."""
    plan, wanted, index = [], [], {}
    for stream, q in requests:
        if n == 0 or (nan_counts is not None and nan_counts[stream] > 0):
            plan.append(None)
            continue
        lo, hi, gamma = _ranks_for(q, n)
        ids = []
        for rank in (lo, hi):
            if (stream, rank) not in index:
                index[(stream, rank)] = len(wanted)
                wanted.append((stream, rank))
            ids.append(index[(stream, rank)])
        plan.append((ids[0], ids[1], gamma, q is None))
    return plan, wanted


def plan_ranges(run: DeviceRun, requests: Sequence[tuple[int, float | None]]) -> RangePlan | None:
    """Predicted ranges for the ranks of absdiff's and reldiff's ``requests`` (see predicted_ranges),
    from a sample of the input, with the statistics pass's buffers for their keys; None for an
    input too small to gain from them, or none worth gathering."""
    n = run.n
    if n < MIN_ELEMENTS:
        return None
    ranks: dict[int, list[int]] = {}
    wanted = _order_ranks(requests, n)[1]
    for stream, rank in wanted:
        if stream in (2, 3):
            ranks.setdefault(stream, []).append(rank)
    if not ranks:
        return None
    key_bits = 32 if run.setup.f32 else 64
    key_dtype = np.uint32 if run.setup.f32 else np.uint64
    size = min(SAMPLE_SIZE, n)
    p = run.params()
    p.seg_len[0] = size
    p.out = run.alloc(2 * size * (key_bits // 8))
    run.launch("poly_sample", p, run.grid("poly_sample", n=size))
    sample = run.read(p.out, np.empty(2 * size, dtype=key_dtype))
    streams = {}
    for stream, rs in ranks.items():
        sr = stream_ranges(sample[(stream - 2) * size:(stream - 1) * size], n, rs, key_bits)
        if sr is not None:
            streams[stream] = sr
    if not streams:
        return None
    blocks = run.grid("poly_stats_ranges", _stats_shared(False))  # (the pass counts no first digit then)
    regions = blocks * THREADS
    capacity = region_capacity(max(sr.expected for sr in streams.values()), regions)
    if len(streams) * capacity * regions * (key_bits // 8) > run.free_memory() // 4:  # as a gather's budget
        return None
    buffers = {stream: run.alloc(capacity * regions * (key_bits // 8)) for stream in streams}
    plan = RangePlan(streams=streams, blocks=blocks, regions=regions, capacity=capacity, buffers=buffers,
                     fills=run.alloc(2 * regions * 4), rout=run.alloc(RangePlan.rout_words * 8, zero=True),
                     key_bits=key_bits)
    plan.targets = _range_targets(plan, wanted, key_bits)
    return plan


def order_values(run: DeviceRun, requests: Sequence[tuple[int, float | None]], nan_counts: Sequence[int],
                 first: dict[int, np.ndarray] | None = None, ranges: RangePlan | None = None) -> list[float]:
    """Values of (stream, quantile or None for the median) requests: NaN for a stream holding
    NaN or an empty input, as NumPy gives. ``first``: the statistics pass's first-digit
    histograms, by stream (absdiff and reldiff), when it counted them; ``ranges``: its predicted
    ranges' plan, when it gathered their keys."""
    plan, wanted = _order_ranks(requests, run.n, nan_counts)
    keys = _select_keys(run, wanted, first, ranges) if wanted else []
    out = []
    for item in plan:
        if item is None:
            out.append(math.nan)
            continue
        i_lo, i_hi, gamma, median = item
        lo, hi = _key_value(keys[i_lo], run.setup.f32), _key_value(keys[i_hi], run.setup.f32)
        if median:
            with np.errstate(all="ignore"):
                out.append(lo if i_lo == i_hi else float((np.float64(lo) + np.float64(hi)) / 2.0))
        else:
            out.append(_lerp(lo, hi, gamma))
    return out


def count_zeros(run: DeviceRun) -> int:
    """How many elements of ``b`` equal zero."""
    p = run.params()
    p.out = run.alloc(8, zero=True)
    run.launch("poly_count_zeros", p, run.grid("poly_count_zeros"))
    return int(run.read(p.out, np.empty(1, dtype=np.uint64))[0])

