"""poly.cuda: Polygraphy's DeviceArray, DeviceView, Stream, MemcpyKind and wrapper() over poly's
native buffers. Sizes, resizing and freeing run here with a host-memory allocator; copies need
a GPU and run on the lent GPU machine (tools/run_device_tests.sh)."""

import ctypes

import numpy as np
import pytest

from poly.core import cuda as native
from poly.cuda import DeviceArray, DeviceView, MemcpyKind, Stream, wrapper

NEEDS_GPU = pytest.mark.skipif(
    not native.cuda_available(),
    reason="needs an NVIDIA driver and GPU (none here): run tools/run_device_tests.sh on the lent GPU machine",
)


class HostAllocator:
    """Host memory standing in for device memory; records what is live."""

    def __init__(self):
        self.live = {}

    def alloc(self, nbytes):
        block = ctypes.create_string_buffer(nbytes)
        self.live[ctypes.addressof(block)] = block
        return ctypes.addressof(block)

    def free(self, ptr):
        del self.live[ptr]


@pytest.mark.parametrize("old, old_bytes, new, new_bytes", [
    ((), 4, (1, 1, 1), 4),          # a reshape: no new memory
    ((2, 2, 2), 32, (1, 1), 32),    # smaller: the memory is kept
    ((2, 2, 2), 32, (9, 9), 324),   # larger: reallocated
])
def test_resize_grows_only_when_needed(old, old_bytes, new, new_bytes):
    host = HostAllocator()
    arr = DeviceArray(old, allocator=host)
    assert arr.allocated_nbytes == old_bytes and arr.shape == old and arr.dtype == np.float32
    arr.resize(new)
    assert arr.allocated_nbytes == new_bytes and arr.shape == new
    assert len(host.live) == 1, "the smaller block went back when the larger one replaced it"
    assert arr.ptr in host.live
    arr.free()
    assert arr.allocated_nbytes == 0 and arr.shape == () and not host.live


def test_raw_arrays_count_bytes_and_views_are_checked():
    host = HostAllocator()
    with DeviceArray.raw((25,), allocator=host) as raw:
        assert raw.shape == (25,) and raw.nbytes == 25 and raw.dtype == np.uint8
        view = raw.view((6,), np.int32)
        assert isinstance(view, DeviceView) and view.ptr == raw.ptr and view.nbytes == 24
        with pytest.raises(Exception, match="cannot exceed"):
            raw.view((7,), np.int32)
    assert not host.live, "the context manager frees the array"


def test_device_view_describes_any_pointer():
    view = DeviceView(ptr=74892, shape=(2, 3), dtype=np.float16)
    assert view.ptr == 74892 and view.shape == (2, 3) and view.nbytes == 12
    assert isinstance(view.dtype, np.dtype) and view.dtype == np.float16
    assert MemcpyKind.HostToDevice == 1 and MemcpyKind.DeviceToHost == 2 and MemcpyKind.Default == 4


@pytest.mark.skipif(native.cuda_available(), reason="a CUDA driver is present: the unavailable path cannot be shown")
@pytest.mark.parametrize("make", [lambda: DeviceArray((2,)), Stream, wrapper])
def test_clear_error_without_a_driver(make):
    with pytest.raises(native.CudaUnavailableError, match="CUDA is unavailable"):
        make()


@NEEDS_GPU
def test_copies_round_trip_through_device_arrays_and_views():
    host = np.arange(6, dtype=np.float32).reshape(2, 3) * 4
    with DeviceArray((2, 3), dtype=np.float32) as arr, Stream() as stream:
        arr.copy_from(host, stream)
        out = np.zeros_like(host)
        arr.view().copy_to(out, stream)
        stream.synchronize()
        assert np.array_equal(out, host)
        assert np.array_equal(DeviceView(arr.ptr, arr.shape, arr.dtype).numpy(), host)
        with pytest.raises(Exception, match="does not fit"):
            arr.copy_from(np.zeros(7, np.float32))


@NEEDS_GPU
def test_wrapper_memcpy_between_raw_pointers():
    cuda = wrapper()
    src = np.arange(16, dtype=np.uint8)
    dst = np.zeros_like(src)
    ptr = cuda.malloc(src.nbytes)
    other = cuda.malloc(src.nbytes)
    try:
        cuda.memcpy(ptr, src.ctypes.data, src.nbytes, MemcpyKind.HostToDevice)
        cuda.memcpy(other, ptr, src.nbytes, MemcpyKind.DeviceToDevice)
        cuda.memcpy(dst.ctypes.data, other, src.nbytes, MemcpyKind.DeviceToHost)
        assert np.array_equal(dst, src)
    finally:
        cuda.free(ptr)
        cuda.free(other)


@NEEDS_GPU
def test_empty_arrays_copy_nothing():
    with DeviceArray((5, 0, 3), dtype=np.float32) as arr:
        host = np.empty((5, 0, 3), np.float32)
        assert arr.copy_to(host) is host and host.nbytes == 0
