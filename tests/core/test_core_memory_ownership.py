"""Who frees poly's device and pinned memory, and when: the ownership rule of poly.core.cuda,
shown without a GPU through buffers given a host-memory allocator that records every alloc and
free (the CUDA allocators run the same code on the lent GPU machine: tests/core/test_core_cuda.py).

The rule: a buffer's ``free()`` and growth drop only the buffer's own reference; the memory goes
back to the allocator, exactly once, when the last array or ``DeviceView`` viewing it goes.
"""

import gc

import numpy as np
import pytest

from poly.core import cuda

GARBAGE, POISON = 0xAB, 0xCD


class RecordingAllocator:
    """Host memory standing in for device or pinned memory. New blocks are filled with 0xAB
    garbage; freed blocks are overwritten with 0xCD and kept (never reused), so that a view
    left on freed memory reads the poison instead of crashing."""

    def __init__(self):
        self.live = {}
        self.graveyard = {}
        self.frees = []

    def alloc(self, nbytes):
        block = np.full(nbytes, GARBAGE, np.uint8)
        ptr = block.ctypes.data
        self.live[ptr] = block
        return ptr

    def free(self, ptr):
        assert ptr in self.live, f"free of {ptr:#x}, which is not a live allocation (double free?)"
        block = self.live.pop(ptr)
        block[:] = POISON
        self.graveyard[ptr] = block
        self.frees.append(ptr)

    def bytes_at(self, ptr, nbytes):
        block = self.live.get(ptr)
        block = self.graveyard[ptr] if block is None else block
        return block[:nbytes]


@pytest.fixture
def allocator():
    return RecordingAllocator()


def _collect():
    gc.collect()


def test_pinned_memory_outlives_free_while_an_array_views_it(allocator):
    pinned = cuda.PinnedBuffer(16, allocator=allocator)
    (ptr,) = allocator.live
    array = pinned.array(np.float32, (4,))
    array[:] = [1, 2, 3, 4]
    assert isinstance(array.base, cuda.MemoryBlock) and array.base.ptr == ptr
    assert pinned.outside_references == 1
    pinned.free()
    del pinned
    _collect()
    assert allocator.frees == []  # the array still views it
    np.testing.assert_array_equal(array, [1, 2, 3, 4])
    derived = array[1:].reshape(3, 1)  # NumPy views of the view hold it too
    del array
    _collect()
    assert allocator.frees == []
    np.testing.assert_array_equal(derived.ravel(), [2, 3, 4])
    del derived
    _collect()
    assert allocator.frees == [ptr]  # exactly once, when the last view went


def test_pinned_memory_without_views_is_freed_at_once(allocator):
    pinned = cuda.PinnedBuffer(8, allocator=allocator)
    (ptr,) = allocator.live
    pinned.array(np.uint8, (8,))  # a view that dies immediately
    _collect()
    assert pinned.outside_references == 0
    pinned.free()
    assert allocator.frees == [ptr]
    pinned.free()  # idempotent: still freed once
    del pinned
    _collect()
    assert allocator.frees == [ptr]


def test_device_view_keeps_memory_after_free_and_growth(allocator):
    buffer = cuda.DeviceBuffer(allocator=allocator)
    buffer.view_as((4,), np.float32)
    old = buffer.ptr
    allocator.live[old][:] = np.arange(4, dtype=np.float32).view(np.uint8)  # what a kernel would write
    view = buffer.view()
    assert buffer.outside_references == 1 and view.memory.ptr == old
    assert view.__cuda_array_interface__["data"] == (old, False) and view.shape == (4,)

    buffer.view_as((64,), np.float32)  # grows: a new block, the viewed one is not freed
    assert buffer.ptr != old and allocator.frees == []
    assert allocator.bytes_at(buffer.ptr, 4).tolist() == [GARBAGE] * 4  # fresh memory is garbage...
    np.testing.assert_array_equal(allocator.bytes_at(old, 16).view(np.float32), [0, 1, 2, 3])  # ...the view's is intact

    grown = buffer.ptr
    buffer.free()
    assert allocator.frees == [grown]  # nothing viewed the grown block: freed at once
    assert buffer.ptr == 0 and buffer.nbytes == 0
    np.testing.assert_array_equal(allocator.bytes_at(old, 16).view(np.float32), [0, 1, 2, 3])
    del view
    _collect()
    assert allocator.frees == [grown, old]
    assert not allocator.live


def test_growth_without_views_frees_before_allocating(allocator):
    """The runner's own buffers, never viewed, keep "grow only, free the old block first"."""
    buffer = cuda.DeviceBuffer(16, allocator=allocator)
    first = buffer.ptr
    buffer.resize(8)  # shrinking keeps the block
    assert buffer.ptr == first and buffer.capacity == 16 and allocator.frees == []
    buffer.resize(32)
    assert allocator.frees == [first] and len(allocator.live) == 1 and buffer.capacity == 32


def test_views_outlive_the_buffer_object(allocator):
    buffer = cuda.DeviceBuffer(8, allocator=allocator)
    ptr = buffer.ptr
    view = buffer.view()
    del buffer
    _collect()
    assert allocator.frees == [] and view.ptr == ptr and view.nbytes == 8
    del view
    _collect()
    assert allocator.frees == [ptr]


def test_device_interface_says_no_stream_when_nothing_is_pending(allocator):
    buffer = cuda.DeviceBuffer(allocator=allocator)
    buffer.view_as((2, 3), np.int32)
    interface = buffer.__cuda_array_interface__
    assert interface["version"] == 3 and interface["stream"] is None
    assert interface["shape"] == (2, 3) and interface["typestr"] == "<i4"
    assert buffer.view().__cuda_array_interface__["stream"] is None


def test_stream_zero_is_refused_before_any_copy(allocator):
    class Producer:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (256, False), "strides": None,
                                    "stream": 0, "version": 3}

    buffer = cuda.DeviceBuffer(allocator=allocator)
    with pytest.raises(ValueError, match="'stream' is 0, which version 3 of the interface disallows"):
        buffer.copy_from_device(Producer())


def test_an_allocator_needs_alloc_and_free():
    with pytest.raises(TypeError, match=r"alloc\(nbytes\) -> int and free\(ptr\)"):
        cuda.DeviceBuffer(8, allocator=object())
