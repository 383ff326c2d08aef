"""
Polygraphy's CUDA helpers (``polygraphy.cuda``) over poly's native buffers: ``DeviceArray`` (a
typed, resizable device array whose memory is a ``poly.core.cuda.DeviceBuffer``),
``DeviceView`` (a typed view of any device pointer), ``Stream``, ``MemcpyKind`` and
``wrapper()`` (raw ``malloc`` / ``free`` / ``memcpy`` on pointers, through the CUDA driver).

Everything imports without a GPU; constructing a ``Stream``, allocating or copying raises
``CudaUnavailableError`` (one line saying why) where there is no driver or GPU. Memory follows
poly-core's ownership rule: a ``DeviceArray``'s memory lives while its buffer or any native
view of it does; ``free()`` drops the array's reference.
"""

import ctypes
import math
from typing import Any

import numpy as np

from poly.core import cuda
from poly.core.arrays.datatype import DataType
from poly.core.arrays.ops import data_ptr, is_torch, nbytes
from poly.core.logging.logger import G_LOGGER

__all__ = ["MemcpyKind", "CudaDriver", "Cuda", "wrapper", "Stream", "DeviceView", "DeviceArray"]


class MemcpyKind:
    """Directions of ``wrapper().memcpy`` (the values of CUDA's ``cudaMemcpyKind``)."""

    HostToHost = 0
    HostToDevice = 1
    DeviceToHost = 2
    DeviceToDevice = 3
    Default = 4


class CudaDriver:
    """
    Raw device memory operations through the CUDA driver (``libcuda.so.1``), in the primary
    context poly's native buffers use, so pointers from either work with the other.
    """

    def __init__(self) -> None:
        try:
            self._lib = ctypes.CDLL("libcuda.so.1")
        except OSError as err:
            raise cuda.CudaUnavailableError(f"CUDA is unavailable: cannot load libcuda.so.1 ({err})") from None
        self._check(self._lib.cuInit(0), "cuInit", unavailable=True)
        current = ctypes.c_void_p()
        self._check(self._lib.cuCtxGetCurrent(ctypes.byref(current)), "cuCtxGetCurrent")
        if not current.value:
            device, context = ctypes.c_int(), ctypes.c_void_p()
            self._check(self._lib.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet", unavailable=True)
            self._check(self._lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
            self._check(self._lib.cuCtxSetCurrent(context), "cuCtxSetCurrent")

    def _check(self, status: Any, what: Any, unavailable: bool = False) -> None:
        if status != 0:
            message = f"CUDA driver call {what} failed with error {status}"
            if unavailable:
                raise cuda.CudaUnavailableError(f"CUDA is unavailable: {message}")
            G_LOGGER.critical(message, cuda.CudaError)

    def _ensure_context(self) -> None:
        current = ctypes.c_void_p()
        self._lib.cuCtxGetCurrent(ctypes.byref(current))
        if not current.value:  # a new thread: make the primary context current here too
            self.__init__()  # type: ignore[misc]

    def malloc(self, nbytes: Any) -> Any:
        """Allocates ``nbytes`` of device memory; returns the pointer (an int)."""
        self._ensure_context()
        ptr = ctypes.c_uint64()
        self._check(self._lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(max(int(nbytes), 1))), "cuMemAlloc")
        return ptr.value

    def free(self, ptr: Any) -> None:
        """Frees device memory from ``malloc``."""
        self._check(self._lib.cuMemFree_v2(ctypes.c_uint64(ptr)), "cuMemFree")

    def create_stream(self) -> Any:
        """Creates a stream; returns its handle (an int)."""
        self._ensure_context()
        stream = ctypes.c_void_p()
        self._check(self._lib.cuStreamCreate(ctypes.byref(stream), 0), "cuStreamCreate")
        return stream.value or 0

    def stream_synchronize(self, ptr: Any) -> None:
        """Waits for the work queued on the stream ``ptr``."""
        self._check(self._lib.cuStreamSynchronize(ctypes.c_void_p(ptr)), "cuStreamSynchronize")

    def destroy_stream(self, ptr: Any) -> None:
        """Destroys the stream ``ptr``."""
        self._check(self._lib.cuStreamDestroy_v2(ctypes.c_void_p(ptr)), "cuStreamDestroy")

    def memcpy(self, dst: Any, src: Any, nbytes: Any, kind: Any, stream_ptr: Any = None) -> None:
        """
        Copies ``nbytes`` from pointer ``src`` to pointer ``dst``; asynchronously on the stream
        ``stream_ptr`` when given (host memory must then stay valid until the stream is synchronised).

        Args:
            kind (int): A ``MemcpyKind``; ``Default`` lets the driver tell from the pointers.
        """
        self._ensure_context()
        n = ctypes.c_size_t(int(nbytes))
        if not nbytes:
            return
        if kind == MemcpyKind.HostToHost:
            ctypes.memmove(dst, src, int(nbytes))
            return
        stream = ctypes.c_void_p(stream_ptr or 0)
        dev_dst, dev_src = ctypes.c_uint64(dst), ctypes.c_uint64(src)
        host_dst, host_src = ctypes.c_void_p(dst), ctypes.c_void_p(src)
        calls = {
            MemcpyKind.HostToDevice: ("cuMemcpyHtoDAsync_v2", (dev_dst, host_src, n, stream)),
            MemcpyKind.DeviceToHost: ("cuMemcpyDtoHAsync_v2", (host_dst, dev_src, n, stream)),
            MemcpyKind.DeviceToDevice: ("cuMemcpyDtoDAsync_v2", (dev_dst, dev_src, n, stream)),
            MemcpyKind.Default: ("cuMemcpyAsync", (dev_dst, dev_src, n, stream)),
        }
        if kind not in calls:
            G_LOGGER.critical(f"Unknown memcpy kind {kind!r}; use a MemcpyKind")
        name, args = calls[kind]
        self._check(getattr(self._lib, name)(*args), name)
        if stream_ptr is None:
            self.stream_synchronize(0)


#: Polygraphy's name of the driver wrapper class.
Cuda = CudaDriver

_WRAPPER: list[Any] = []


def wrapper() -> Any:
    """The process-wide ``CudaDriver`` (created at first use; raises ``CudaUnavailableError``
    where there is no driver or GPU)."""
    if not _WRAPPER:
        _WRAPPER.append(CudaDriver())
    return _WRAPPER[0]


class Stream:
    """A CUDA stream (a ``poly.core.cuda.Stream``); usable as a context manager, which frees it."""

    def __init__(self) -> None:
        self.native = cuda.Stream()

    @property
    def ptr(self) -> Any:
        """The ``cudaStream_t`` handle as an int."""
        return self.native.ptr

    def synchronize(self) -> None:
        """Waits for the work queued on the stream."""
        self.native.synchronize()

    def free(self) -> None:
        """Destroys the stream."""
        self.native.free()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        self.free()


def _stream_handle(stream: Any) -> Any:
    return None if stream is None else getattr(stream, "ptr", stream)


def _native_stream(stream: Any) -> Any:
    return getattr(stream, "native", stream)


def _host_array(host_buffer: Any) -> Any:
    """A NumPy array sharing the host buffer's memory (NumPy arrays, CPU torch tensors)."""
    if is_torch(host_buffer):
        if host_buffer.device.type != "cpu":
            G_LOGGER.critical("Only host (CPU) tensors can be copied to or from a DeviceArray or DeviceView")
        return host_buffer.numpy()
    return host_buffer


class DeviceView:
    """A typed, shaped view of device memory at ``ptr`` (owned elsewhere)."""

    def __init__(self, ptr: Any, shape: Any, dtype: Any) -> None:
        """
        Args:
            ptr (int): The device address.
            shape (Sequence[int]): The shape.
            dtype (Any): The data type (NumPy dtype, ``DataType``...).
        """
        self.ptr = int(ptr)
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype

    @property
    def dtype(self) -> Any:
        """The data type, as a NumPy dtype."""
        return self._dtype

    @dtype.setter
    def dtype(self, value: Any) -> None:
        self._dtype = DataType.to_dtype(DataType.from_dtype(value), "numpy")

    @property
    def nbytes(self) -> Any:
        """Bytes covered by the view."""
        return math.prod(self.shape) * self._dtype.itemsize

    def _check_host(self, host_buffer: Any, copying_from: Any) -> Any:
        if nbytes(host_buffer) < self.nbytes and not copying_from:
            G_LOGGER.critical(f"Host buffer of {nbytes(host_buffer)} bytes is too small for {self.nbytes} bytes "
                              f"of device data (shape {self.shape}, dtype {self._dtype})")
        array = _host_array(host_buffer)
        if not array.flags["C_CONTIGUOUS"]:
            G_LOGGER.critical("Host buffers must be contiguous (np.ascontiguousarray / tensor.contiguous())")
        return array

    def copy_to(self, host_buffer: Any, stream: Any = None) -> Any:
        """
        Copies the viewed data into ``host_buffer`` (a contiguous NumPy array or CPU torch
        tensor of at least ``nbytes``); synchronously unless a ``stream`` is given.

        Returns:
            The host buffer.
        """
        if not self.nbytes:
            return host_buffer
        array = self._check_host(host_buffer, copying_from=False)
        wrapper().memcpy(data_ptr(array), self.ptr, self.nbytes, MemcpyKind.DeviceToHost, _stream_handle(stream))
        return host_buffer

    def numpy(self) -> Any:
        """A new NumPy array holding a copy of the data."""
        array = np.empty(self.shape, dtype=self._dtype)
        self.copy_to(array)
        return array

    def __repr__(self) -> str:
        return f"{type(self).__name__}(ptr={hex(self.ptr)}, shape={self.shape}, dtype={self._dtype})"


class DeviceArray(DeviceView):
    """
    A device array that owns its memory (a ``poly.core.cuda.DeviceBuffer``): ``resize`` grows it
    only when needed, ``free`` releases it; usable as a context manager, which frees it.
    """

    def __init__(self, shape: Any = None, dtype: Any = None, allocator: Any = None) -> None:
        """
        Args:
            shape (Sequence[int]): The shape. Defaults to ``()`` (one element).
            dtype (Any): The data type. Defaults to float32.
            allocator: Passed to ``DeviceBuffer`` (None: CUDA device memory).
        """
        self._buffer = cuda.DeviceBuffer(0, allocator=allocator) if allocator is not None else cuda.DeviceBuffer()
        self.allocated_nbytes = 0
        super().__init__(0, (), np.float32 if dtype is None else dtype)
        self.resize(() if shape is None else shape)

    @staticmethod
    def raw(shape: Any = None, allocator: Any = None) -> Any:
        """A ``DeviceArray`` of bytes (uint8): ``shape`` counts bytes."""
        return DeviceArray(shape=shape, dtype=np.uint8, allocator=allocator)

    def resize(self, shape: Any) -> Any:
        """Gives the array ``shape``, reallocating only when it needs more memory than it has."""
        self.shape = tuple(int(d) for d in shape)
        if self.nbytes > self.allocated_nbytes:
            self._buffer.resize(self.nbytes)
            self.allocated_nbytes = self.nbytes
        self.ptr = self._buffer.ptr
        return self

    def free(self) -> None:
        """Releases the memory (views of it keep it alive, see poly-core's README); the array is
        left empty (shape ``()``, no memory)."""
        self._buffer.free()
        self.allocated_nbytes = 0
        self.shape = ()
        self.ptr = 0

    def __enter__(self) -> Any:
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        self.free()

    def copy_from(self, host_buffer: Any, stream: Any = None) -> Any:
        """
        Copies a contiguous host buffer (NumPy array or CPU torch tensor, no larger than this
        array's memory) in; synchronously unless a ``stream`` is given. The array keeps its
        shape and dtype.

        Returns:
            DeviceArray: self
        """
        if not nbytes(host_buffer):
            return self
        array = self._check_host(host_buffer, copying_from=True)
        if array.nbytes > self.allocated_nbytes:
            G_LOGGER.critical(f"Host buffer of {array.nbytes} bytes does not fit in this DeviceArray "
                              f"({self.allocated_nbytes} bytes allocated); resize() it first")
        wrapper().memcpy(self.ptr, data_ptr(array), array.nbytes, MemcpyKind.HostToDevice, _stream_handle(stream))
        return self

    def view(self, shape: Any = None, dtype: Any = None) -> Any:
        """A ``DeviceView`` of the array's memory, with its own shape and dtype if given."""
        view = DeviceView(self.ptr, self.shape if shape is None else shape, self._dtype if dtype is None else dtype)
        if view.nbytes > self.nbytes:
            G_LOGGER.critical(f"A view of {view.nbytes} bytes (shape {view.shape}, dtype {view.dtype}) cannot exceed "
                              f"the {self.nbytes} bytes of the array (shape {self.shape}, dtype {self._dtype})")
        return view

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self._dtype})"
