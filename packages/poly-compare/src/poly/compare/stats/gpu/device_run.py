"""
One comparison's work on a GPU, and the structures its kernels share with the host.

``DeviceOperand`` describes one CUDA array (address, shape, byte strides, dtype code, stream);
``DeviceRun`` runs kernels on two of them in the arrays' CUDA context, on the stream the arrays
were produced on, with the scratch memory of the run (pooled small buffers, stream-ordered large
ones) and the copies back to the host it needs (counted in ``transfer_counter``).
``LaunchParams`` mirrors the kernels' ``Params`` (kernels/layouts.cuh), ``PART_RECORD`` the statistics
pass's per-block record, ``SELECT_STATE`` the ranks of a device-side select.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import struct
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from poly import _native
from poly.compare.stats.gpu.cuda_api import (
    GpuError,
    GpuUnavailableError,
    check,
    compute_capability,
    driver_api,
)
from poly.compare.stats.gpu.kernel_source import (
    MAX_DIMS,
    MAX_GROUPS,
    SELECT_TARGETS,
    THREADS,
    KernelVariant,
)
from poly.compare.stats.gpu.program_cache import load_program
from poly.compare.stats.gpu.run_graph import BUDGET_SHARE, RunGraph, RunGraphs
from poly.core import G_LOGGER

__all__ = ["DeviceOperand", "CompareSetup", "DeviceRun", "LaunchParams", "ACC_FIELDS", "PART_RECORD", "SELECT_STATE", "SELECT_TARGET", "record_struct",
           "transfer_counter", "kept_run_graphs", "drop_run_graphs"]

POOLED_MAX = 1 << 26  # scratch buffers up to this size are kept for the next comparison...
LARGE_POOL_KEEP = 32  # ... larger ones freed to a pool that keeps 1/LARGE_POOL_KEEP of the device's memory mapped
STAGED_MAX = 1 << 20  # reads back of at most this many bytes in all go through a device's page-locked staging buffer

# Bytes copied from device to host in all, and the largest single copy (tests read them to
# prove that the arrays themselves never travel).
transfer_counter = {"dtoh_bytes": 0, "largest": 0}

# The launch parameters of the arrays and arithmetic of recent comparisons, by (a, b, setup): the
# same outputs (a runner's buffers) are compared again and again, and filling the structure field
# by field costs more than a small comparison's launches.
_BASE_PARAMS: dict[tuple[Any, Any, Any], bytes] = {}
_BASE_PARAMS_KEPT = 64


@dataclass(frozen=True)
class DeviceOperand:
    """One CUDA array: ``strides`` in bytes; ``stream`` the CUDA array interface's (None: none);
    ``device`` its GPU's ordinal where the array's framework tells it (None: asked of the driver)."""

    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    code: int
    itemsize: int
    stream: int | None
    device: int | None = None

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def collapsed(self) -> tuple[bool, tuple[int, ...], tuple[int, ...]] | None:
        """(contiguous, shape, strides) with size-1 dimensions dropped and mergeable ones merged;
        None when more than MAX_DIMS dimensions remain. (Worked out once: a comparison asks twice.)"""
        if "_collapsed" not in self.__dict__:
            self.__dict__["_collapsed"] = self._collapse()  # (frozen: written past __setattr__, as functools.cached_property does)
        return self.__dict__["_collapsed"]

    def _collapse(self) -> tuple[bool, tuple[int, ...], tuple[int, ...]] | None:
        if len(self.shape) == 1 and self.shape[0] != 1:  # (most outputs compared: answered at once)
            return self.strides[0] == self.itemsize, self.shape, self.strides
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
        return contiguous, tuple(m[0] for m in merged), tuple(m[1] for m in merged)


def _native_call(call: Callable[..., Any], *args: Any, what: str | None = None) -> Any:
    """``call(*args)``, one of poly._native's driver calls, with its CudaError raised as a GpuError (what
    the dispatch falls back to the host on), prefixed by ``what``."""
    try:
        return call(*args)
    except _native.CudaError as err:
        raise GpuError(f"{what}: {err}" if what else str(err)) from err


def _staged_size(nbytes: int) -> int:
    """The room a read-back of ``nbytes`` takes in the staging buffer (256-byte aligned)."""
    return -(-nbytes // 256) * 256


class _View(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_uint64), ("shape", ctypes.c_int64 * MAX_DIMS),
                ("strides", ctypes.c_int64 * MAX_DIMS), ("ndim", ctypes.c_int32), ("itemsize", ctypes.c_int32)]


class _Group(ctypes.Structure):
    _fields_ = [("prefix", ctypes.c_uint64), ("stream", ctypes.c_int32), ("bits", ctypes.c_int32),
                ("dbits", ctypes.c_int32), ("pad", ctypes.c_int32)]


class LaunchParams(ctypes.Structure):
    """The kernels' ``Params`` structure (kernels/layouts.cuh), passed by value to every launch."""

    _fields_ = [("a", _View), ("b", _View), ("n", ctypes.c_uint64), ("atol", ctypes.c_double),
                ("rtol", ctypes.c_double), ("eps", ctypes.c_double), ("den_min_bits", ctypes.c_uint64),
                ("out", ctypes.c_uint64), ("hist", ctypes.c_uint64), ("ngroups", ctypes.c_int32),
                ("inf_equal", ctypes.c_int32), ("chunked", ctypes.c_int32), ("eps32", ctypes.c_float),
                ("groups", _Group * MAX_GROUPS), ("seg", ctypes.c_uint64 * MAX_GROUPS),
                ("seg_len", ctypes.c_uint64 * MAX_GROUPS), ("rout", ctypes.c_uint64), ("rfills", ctypes.c_uint64),
                ("rbuf", ctypes.c_uint64 * 2), ("rcap", ctypes.c_uint32), ("nregions", ctypes.c_uint32),
                ("sel", ctypes.c_uint64), ("sel_dbits", ctypes.c_int32), ("sel_slots", ctypes.c_int32),
                ("plan_phase", ctypes.c_int32), ("plan_pad", ctypes.c_int32), ("sel_fine", ctypes.c_uint64)]


ACC_FIELDS = [("n", "f8"), ("mean", "f8"), ("m2", "f8"), ("sum", "f8"), ("sq", "f8"), ("ab", "f8"), ("mn", "f8"),
        ("mx", "f8"), ("imn", "i8"), ("imx", "i8"), ("inan", "i8"), ("nnan", "u8"), ("ninf", "u8"), ("pad", "i8")]
PART_RECORD = np.dtype([("s", np.dtype(ACC_FIELDS), (4,)), ("dot", "f8"), ("fails", "u8")])
# The kernels' SelTarget and SelState: the ranks a device-side select narrows (poly_select_input).
SELECT_TARGET = np.dtype([("prefix", "u8"), ("rank", "u8"), ("stream", "i4"), ("bits", "i4")])
SELECT_STATE = np.dtype([("t", SELECT_TARGET, (SELECT_TARGETS,)), ("done_blocks", "u4"), ("ntargets", "i4")])

_STRUCT_CODES = {"f8": "d", "i8": "q", "u8": "Q", "i4": "i", "u4": "I"}


def record_struct(dtype: np.dtype) -> struct.Struct:
    """A ``struct.Struct`` that reads one record of the structured ``dtype`` (nested records and
    subarrays flattened in order) as Python numbers: one ``unpack_from`` where NumPy's field access
    costs about a microsecond a field. Raises ValueError for a field it cannot read or padding."""
    def codes(dt: np.dtype) -> str:
        if dt.subdtype is not None:
            base, shape = dt.subdtype
            return codes(base) * math.prod(shape)
        if dt.names is not None:
            return "".join(codes(dt.fields[name][0]) for name in dt.names)
        code = _STRUCT_CODES.get(dt.str.lstrip("<=|"))
        if code is None or not dt.isnative:
            raise ValueError(f"record_struct: no struct code for field dtype {dt}")
        return code
    layout = struct.Struct("<" + codes(dtype))
    if layout.size != dtype.itemsize:
        raise ValueError(f"record_struct: {dtype} has padding ({layout.size} of {dtype.itemsize} bytes in fields)")
    return layout


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
        self.cc = compute_capability(dev)
        self.context = check(drv.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
        self.context_handle = int(self.context)
        self.lock = threading.Lock()
        # Scratch buffers kept for later comparisons, by power-of-two size: a comparison per
        # sample must not pay cudaMalloc/cudaFree (which synchronizes) every time.
        self.free_buffers: dict[int, list[int]] = {}
        self.total_memory = int(check(drv.cuDeviceTotalMem(dev), "cuDeviceTotalMem"))
        self._large_pool = None
        self._staging: np.ndarray | None = None
        self.graphs = RunGraphs(self.total_memory // BUDGET_SHARE, self._free_graph)
        self._capture_stream: int | None = None

    def capture_stream(self) -> int:
        """The private stream runs are captured on (created once; capture is not allowed on the legacy
        default stream that torch's and CuPy's default streams are)."""
        if self._capture_stream is None:
            drv = driver_api
            stream = check(drv.cuStreamCreate(int(drv.CUstream_flags.CU_STREAM_NON_BLOCKING)), "cuStreamCreate")
            self._capture_stream = int(stream)
        return self._capture_stream

    def _free_graph(self, graph: RunGraph) -> None:
        # (under the device's lock, no launch of it in flight: see RunGraphs)
        graph.release_graph()
        self._free_owned(graph.buffers)

    def _free_owned(self, buffers: Sequence[tuple[int, int, bool]]) -> None:
        for size, ptr, pooled in buffers:
            if pooled:
                self.free_buffers.setdefault(size, []).append(ptr)
            else:
                check(driver_api.cuMemFree(ptr), "cuMemFree")

    @staticmethod
    def pinned(nbytes: int) -> np.ndarray:
        """A new page-locked host array of ``nbytes`` bytes (freed with its last reference)."""
        return _native.PinnedBuffer(max(int(nbytes), 1)).array(np.uint8, [max(int(nbytes), 1)])

    def staging(self, nbytes: int) -> np.ndarray:
        """Page-locked host memory of at least ``nbytes`` (kept, grown by powers of two up to
        STAGED_MAX): copies into it are queued without a wait, where a copy into pageable memory
        returns only once done (a round trip of about 20 us a copy). Used under the device's lock."""
        if self._staging is None or self._staging.size < nbytes:
            size = 1 << max(int(nbytes) - 1, 4095).bit_length()
            self._staging = self.pinned(size)
        return self._staging

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


def kept_run_graphs() -> list[RunGraph]:
    """The graphs of repeated runs every device keeps now (``DeviceRun.capture_if_repeated``)."""
    with _DEVICES_LOCK:
        devices = list(_DEVICES.values())
    kept = []
    for dev in devices:
        with dev.lock:
            kept.extend(dev.graphs.graphs())
    return kept


def drop_run_graphs() -> None:
    """Drops every device's graphs of repeated runs and what it remembers of runs seen once,
    giving their scratch memory back to the devices' pools."""
    with _DEVICES_LOCK:
        devices = list(_DEVICES.values())
    for dev in devices:
        with dev.lock:
            dev.graphs.clear()


def _device_of(op: DeviceOperand) -> _Device:
    drv = driver_api
    with _DEVICES_LOCK:
        if not _INIT:
            try:
                check(drv.cuInit(0), "cuInit")
            except GpuError as err:
                raise GpuUnavailableError(str(err)) from err
            _INIT.append(True)
        ordinal = op.device
        if ordinal is None:
            ordinal = int(check(drv.cuPointerGetAttribute(
                drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, op.ptr), "cuPointerGetAttribute"))
        dev = _DEVICES.get(ordinal)
        if dev is None:
            dev = _DEVICES[ordinal] = _Device(ordinal)
        return dev


@dataclass
class _Capture:
    """A run's operations being recorded into a graph (``DeviceRun.capture_if_repeated``): the run's
    key and own stream, and the memory the graph will own."""

    key: Any
    stream: int
    buffers: list[tuple[int, int, bool]]
    pinned: list[np.ndarray]


class DeviceRun:
    """One comparison's work on the device: its context made current, its stream ordered after
    the arrays' streams, scratch memory freed at the end. Use as a context manager.

    A run seen before (``capture_if_repeated``) is captured into a CUDA graph that the device keeps
    (``run_graph``); the next time it comes, ``replay`` launches that graph instead."""

    def __init__(self, a: DeviceOperand, b: DeviceOperand, setup: CompareSetup):
        self.a, self.b, self.setup = a, b, setup
        self.n = a.size
        self.device = _device_of(a)
        if b.ptr != a.ptr and (b.device is None or b.device != a.device) and _device_of(b) is not self.device:
            raise GpuUnavailableError("the two arrays live on different GPUs")
        self._allocs: list[tuple[int, int]] = []
        self._async_allocs: list[int] = []
        self._event = None
        self._pushed = False
        self._params: LaunchParams | None = None
        self._busy = False  # work queued on the stream since it was last waited for
        self._drv = driver_api.load()  # the module itself: a run makes a few dozen driver calls
        self._capture: _Capture | None = None  # operations being recorded (stream: the capture stream)
        self._captured: RunGraph | None = None  # the graph read_all made, until keep_graph takes it

    def __enter__(self) -> DeviceRun:
        drv = self._drv
        self.device.lock.acquire()
        try:
            _native_call(_native.cuda_push_context, self.device.context_handle)
            self._pushed = True
            self.program = load_program(self.device.context_handle, self.device.cc, self.setup.variant)
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
        drv = self._drv
        try:
            if self._capture is not None:  # a capture left unfinished: nothing of it ran
                capture, self._capture = self._capture, None
                self.device.graphs.refuse(capture.key)
                with contextlib.suppress(Exception):
                    graph = check(drv.cuStreamEndCapture(self.stream), "cuStreamEndCapture")
                    drv.cuGraphDestroy(graph)
                self.stream = capture.stream
                self.device._free_owned(capture.buffers)
            for ptr in self._async_allocs:
                drv.cuMemFreeAsync(ptr, self.stream)
            if self._allocs and self._busy:  # pooled buffers go back once no kernel can touch them
                drv.cuStreamSynchronize(self.stream)
            for size, ptr in self._allocs:
                self.device.free_buffers[size].append(ptr)
            if self._captured is not None:  # launched (and waited for) but not kept
                self.device._free_graph(self._captured)
                self._captured = None
            if self._event is not None:
                drv.cuEventDestroy(self._event)
            if self._pushed:
                with contextlib.suppress(_native.CudaError):  # (as every call of this clean-up: its error, if any, is the one told)
                    _native.cuda_pop_context()
        finally:
            self.device.lock.release()

    # -- memory -------------------------------------------------------------------------------
    def alloc(self, nbytes: int, zero: bool = False) -> int:
        """Scratch memory for this run: small buffers come from the device's pool (no allocation
        per comparison); large ones are allocated and freed in stream order (no synchronisation),
        from the device's large-scratch pool (``_Device.large_pool``). In a capture, the graph owns
        the buffer until it is dropped (a large one allocated apart, not in stream order)."""
        size = 1 << max(int(nbytes) - 1, 255).bit_length()
        if size > POOLED_MAX and self._capture is not None:
            ptr = int(check(self._drv.cuMemAlloc(int(nbytes)), "cuMemAlloc"))
            self._capture.buffers.append((int(nbytes), ptr, False))
        elif size > POOLED_MAX:
            ptr = int(check(self._drv.cuMemAllocFromPoolAsync(int(nbytes), self.device.large_pool(), self.stream),
                            "cuMemAllocFromPoolAsync"))
            self._async_allocs.append(ptr)
        else:
            pool = self.device.free_buffers.setdefault(size, [])
            ptr = pool.pop() if pool else int(check(self._drv.cuMemAlloc(size), "cuMemAlloc"))
            if self._capture is not None:
                self._capture.buffers.append((size, ptr, True))
            else:
                self._allocs.append((size, ptr))
        if zero:
            _native_call(_native.cuda_memset_async, ptr, max(int(nbytes), 1), self.stream)
            self._busy = True
        return ptr

    def write(self, ptr: int, data: np.ndarray) -> None:
        """Copies ``data`` to ``ptr`` in stream order (the host array may be dropped on return:
        the driver stages pageable memory before returning)."""
        data = np.ascontiguousarray(data)
        if self._capture is not None:  # (a graph copies from page-locked memory it owns)
            source = self.device.pinned(data.nbytes)[:data.nbytes]
            source[:] = data.reshape(-1).view(np.uint8)
            self._capture.pinned.append(source)
            data = source
        _native_call(_native.cuda_copy_to_device_async, ptr, data, self.stream)
        self._busy = True

    def set_range_table(self, ptr: int, nbytes: int) -> None:
        """Copies the RangeTable at ``ptr`` (``nbytes``) into the kernels' constant ``poly_plan``, in
        stream order: the kernels launched after it read the ranges it holds. (The constant is the
        module's, one per device: comparisons on a device run one at a time, under its lock.)"""
        address, size = self.program.range_table
        if nbytes != size:
            raise GpuError(f"the kernels' range table has {size} bytes, the host's {nbytes}")
        check(self._drv.cuMemcpyDtoDAsync(address, ptr, nbytes, self.stream), "cuMemcpyDtoDAsync")
        self._busy = True

    def read(self, ptr: int, out: np.ndarray) -> np.ndarray:
        """Copies ``out.nbytes`` from ``ptr`` into ``out`` once the stream's work is done."""
        return self.read_all([(ptr, out)])[0]

    def read_all(self, copies: Sequence[tuple[int, np.ndarray]]) -> list[np.ndarray]:
        """``read`` of each (ptr, out) pair, with one wait for the stream (a synchronisation costs
        tens of microseconds: a small comparison is made of little else). In a capture, the copies
        end it: the graph is made, launched on the run's stream and waited for."""
        if self._capture is not None:
            return self._read_captured(copies)
        total = sum(_staged_size(out.nbytes) for _, out in copies)
        staging = _native_call(self.device.staging, total) if total <= STAGED_MAX else None
        placed = []
        offset = 0
        for ptr, out in copies:
            if out.nbytes:
                if staging is None:
                    _native_call(_native.cuda_copy_to_host_async, out, ptr, self.stream)
                else:
                    _native_call(_native.cuda_copy_to_host_async, staging[offset:offset + out.nbytes], ptr, self.stream)
                    placed.append((out, offset))
                    offset += _staged_size(out.nbytes)
                transfer_counter["dtoh_bytes"] += out.nbytes
                transfer_counter["largest"] = max(transfer_counter["largest"], out.nbytes)
        _native_call(_native.synchronize_stream, self.stream)
        self._busy = False
        for out, offset in placed:
            np.copyto(out.reshape(-1).view(np.uint8), staging[offset:offset + out.nbytes])
        return [out for _, out in copies]

    def _read_captured(self, copies: Sequence[tuple[int, np.ndarray]]) -> list[np.ndarray]:
        drv, capture = self._drv, self._capture
        readback = self.device.pinned(sum(_staged_size(out.nbytes) for _, out in copies))
        reads, offset = [], 0
        for ptr, out in copies:
            reads.append((offset, out.dtype, out.shape))
            if out.nbytes:
                _native_call(_native.cuda_copy_to_host_async, readback[offset:offset + out.nbytes], ptr, self.stream)
                offset += _staged_size(out.nbytes)
        graph = check(drv.cuStreamEndCapture(self.stream), "cuStreamEndCapture")
        self._capture, self.stream = None, capture.stream
        try:
            graph_exec = check(drv.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
        except GpuError:
            drv.cuGraphDestroy(graph)
            self.device._free_owned(capture.buffers)
            self.device.graphs.refuse(capture.key)
            raise

        def release() -> None:
            drv.cuGraphExecDestroy(graph_exec)
            drv.cuGraphDestroy(graph)

        self._captured = RunGraph(exec_handle=int(graph_exec), release_graph=release, buffers=capture.buffers,
                                  pinned=[*capture.pinned, readback], readback=readback, reads=reads)
        return self._launch_graph(self._captured, [out for _, out in copies])

    def _launch_graph(self, graph: RunGraph, into: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
        _native_call(_native.cuda_graph_launch, graph.exec_handle, self.stream, what="cuGraphLaunch")
        self._busy = True
        _native_call(_native.synchronize_stream, self.stream)
        self._busy = False
        results = graph.results(into)
        for out in results:
            transfer_counter["dtoh_bytes"] += out.nbytes
            transfer_counter["largest"] = max(transfer_counter["largest"], out.nbytes)
        return results

    # -- graphs of repeated runs ----------------------------------------------------------------
    def graph_key(self, *what: Any) -> tuple:
        """The key of this run's graph when it computes ``what`` (hashable): the same arrays
        (address, layout, dtype, stream), arithmetic, kernels and ``what`` make the same run. (The
        kernels' module is in it: a quick build's graph is not replayed once the optimised build
        has replaced it.)"""
        return (self.a, self.b, self.setup, self.program.module_handle, *what)

    def replay(self, key: Any) -> tuple[list[np.ndarray], Any] | None:
        """The results of run ``key`` (what its ``read_all`` returned) from its graph, launched on this
        run's stream and waited for, with the context ``keep_graph`` kept; None when it has no graph."""
        graph = self.device.graphs.get(key)
        if graph is None:
            return None
        results = self._launch_graph(graph)
        graph.replays += 1
        return results, graph.context

    def capture_if_repeated(self, key: Any) -> bool:
        """Starts recording this run's operations for a graph when run ``key`` was seen before (they
        are recorded, not run, until ``read_all`` makes the graph and launches it); whether it did."""
        if not self.device.graphs.repeated(key):
            return False
        drv = self._drv
        try:
            stream = self.device.capture_stream()
            check(drv.cuStreamBeginCapture(stream, drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED),
                  "cuStreamBeginCapture")
        except GpuError as err:  # (a driver that cannot capture: the run goes on as it is, and so will the next)
            G_LOGGER.verbose(f"Comparisons run without CUDA graphs here: {err}")
            self.device.graphs.refuse(key)
            return False
        self._capture = _Capture(key=key, stream=self.stream, buffers=[], pinned=[])
        self.stream = stream
        return True

    def keep_graph(self, key: Any, context: Any) -> None:
        """Keeps the graph this run's ``read_all`` made as run ``key``'s, with ``context`` (what the
        caller needs to read its results again)."""
        graph, self._captured = self._captured, None
        if graph is not None:
            graph.context = context
            self.device.graphs.add(key, graph)

    # -- launches -----------------------------------------------------------------------------
    def free_memory(self) -> int:
        """Bytes of device memory free now."""
        free, _ = check(self._drv.cuMemGetInfo(), "cuMemGetInfo")
        return int(free)

    def params(self) -> LaunchParams:
        """A fresh copy of this run's launch parameters (the arrays and the arithmetic), for one
        launch to add its own to."""
        if self._params is None:
            key = (self.a, self.b, self.setup)
            raw = _BASE_PARAMS.get(key)
            if raw is None:
                if len(_BASE_PARAMS) >= _BASE_PARAMS_KEPT:
                    _BASE_PARAMS.clear()
                raw = _BASE_PARAMS[key] = bytes(self._base_params())
            self._params = LaunchParams.from_buffer_copy(raw)
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
        """Launches kernel ``name`` on ``grid`` blocks of THREADS threads, in stream order."""
        _native_call(_native.cuda_launch, self.program.handles[name], grid, THREADS, shared, self.stream, params, what=name)
        self._busy = True
