"""Native device buffers, streams, events and pinned memory.

Without a driver (CI, this machine) only the CudaUnavailableError path runs; the rest runs on
the lent GPU machine through tools/run_device_tests.sh.
"""

import numpy as np
import pytest

from poly.core import cuda

NEEDS_GPU = pytest.mark.skipif(
    not cuda.cuda_available(),
    reason="needs an NVIDIA driver and GPU (none here): run tools/run_device_tests.sh on the lent GPU machine",
)


@pytest.mark.skipif(cuda.cuda_available(), reason="a CUDA driver is present: the unavailable path cannot be shown")
@pytest.mark.parametrize("make", [lambda: cuda.DeviceBuffer(16), cuda.Stream, cuda.Event, lambda: cuda.PinnedBuffer(8),
                                  cuda.cuda_mem_get_info])
def test_clear_error_without_a_driver(make):
    with pytest.raises(cuda.CudaUnavailableError, match="CUDA is unavailable"):
        make()
    assert issubclass(cuda.CudaUnavailableError, RuntimeError)


@NEEDS_GPU
def test_round_trip_resize_and_free():
    buf = cuda.DeviceBuffer()
    host = np.arange(1000, dtype=np.float32).reshape(10, 100)
    buf.copy_from(host)
    assert buf.nbytes == host.nbytes and buf.shape == (10, 100) and buf.dtype == np.float32 and buf.ptr != 0
    np.testing.assert_array_equal(buf.numpy(), host)
    cap, ptr = buf.capacity, buf.ptr
    buf.resize(16)  # never shrinks the allocation
    assert buf.capacity == cap and buf.ptr == ptr and buf.nbytes == 16
    buf.resize(cap * 4)
    assert buf.capacity == cap * 4
    out = np.empty(3, np.int64)
    buf.copy_from(np.array([7, -1, 3], np.int64))
    buf.copy_to(out)
    assert out.tolist() == [7, -1, 3]
    with pytest.raises(ValueError, match="bytes"):
        buf.copy_to(np.empty(1, np.int64))
    buf.free()
    assert buf.ptr == 0 and buf.nbytes == 0


@NEEDS_GPU
def test_async_copies_on_a_stream_keep_their_order():
    stream = cuda.Stream()
    pinned = cuda.PinnedBuffer(4 * 1_000_000)
    src = pinned.array(np.float32, (1_000_000,))
    src[:] = np.arange(1_000_000, dtype=np.float32)
    dst_pinned = cuda.PinnedBuffer(4 * 1_000_000)
    dst = dst_pinned.array(np.float32, (1_000_000,))
    dst[:] = 0
    a, b = cuda.DeviceBuffer(), cuda.DeviceBuffer()
    start, end = cuda.Event(), cuda.Event()
    start.record(stream)
    a.copy_from(src, stream)          # host -> a
    b.copy_from_device(a, stream)     # a -> b, ordered after the first copy
    b.copy_to(dst, stream)            # b -> host, ordered after both
    end.record(stream)
    stream.synchronize()
    np.testing.assert_array_equal(dst, src)
    assert start.elapsed_time(end) >= 0.0
    end.synchronize()


@NEEDS_GPU
def test_cupy_and_torch_interop_without_host_copies():
    cupy = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    host = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    buf = cuda.DeviceBuffer()
    buf.copy_from(host)
    # consumers read our memory through __cuda_array_interface__
    np.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(buf)), host)
    np.testing.assert_array_equal(torch.as_tensor(buf, device="cuda").cpu().numpy(), host)
    # and we read theirs device to device
    c = cupy.arange(10, dtype=cupy.int32) * 3
    buf.copy_from_device(c)
    assert buf.shape == (10,) and buf.numpy().tolist() == list(range(0, 30, 3))
    t = torch.linspace(0, 1, 7, device="cuda", dtype=torch.float64)
    buf.copy_from_device(t)
    np.testing.assert_allclose(buf.numpy(), np.linspace(0, 1, 7))
    with pytest.raises(ValueError, match="contiguous"):
        buf.copy_from_device(torch.zeros((4, 4), device="cuda").t())


@NEEDS_GPU
def test_no_leak_over_ten_thousand_allocations():
    free_before, _ = cuda.cuda_mem_get_info()
    for i in range(10_000):
        buf = cuda.DeviceBuffer(1 << 20)
        if i % 1000 == 0:
            buf.copy_from(np.full(16, i, np.int32))
        buf.free()
    free_after, _ = cuda.cuda_mem_get_info()
    assert free_before - free_after < 64 << 20, (free_before, free_after)


@NEEDS_GPU
def test_view_as_describes_the_contents():
    buf = cuda.DeviceBuffer()
    buf.copy_from(np.arange(12, dtype=np.int32))
    buf.view_as((3, 4), np.int32)
    assert buf.shape == (3, 4) and buf.__cuda_array_interface__["typestr"] == "<i4"
    np.testing.assert_array_equal(buf.numpy(), np.arange(12, dtype=np.int32).reshape(3, 4))


# -- memory lifetime: views outlive free() and growth (the CPU-side rule: test_core_memory_ownership.py)


@NEEDS_GPU
def test_pinned_arrays_survive_free_and_new_allocations():
    from fixtures.cuda_garbage import fill_new_allocations

    n = 1 << 18
    pinned = cuda.PinnedBuffer(4 * n)
    values = pinned.array(np.float32, (n,))
    values[:] = np.arange(n, dtype=np.float32)
    pinned.free()
    del pinned
    kept = fill_new_allocations(4 * n)
    np.testing.assert_array_equal(values, np.arange(n, dtype=np.float32))
    del kept


@NEEDS_GPU
def test_device_views_survive_free_and_growth_for_cupy_consumers():
    cupy = pytest.importorskip("cupy")
    from fixtures.cuda_garbage import fill_new_allocations

    host = np.random.default_rng(1).standard_normal((256, 64)).astype(np.float32)
    buf = cuda.DeviceBuffer()
    buf.copy_from(host)
    consumer = cupy.asarray(buf.view())  # CuPy keeps the view, the view keeps the memory
    buf.resize(buf.capacity * 4)  # growth: a new block
    kept = fill_new_allocations(host.nbytes)
    np.testing.assert_array_equal(cupy.asnumpy(consumer), host)
    regrown = cupy.asarray(buf.view())
    buf.free()
    kept += fill_new_allocations(4 * host.nbytes)
    np.testing.assert_array_equal(cupy.asnumpy(consumer), host)
    assert regrown.shape == (4 * host.nbytes,)  # the grown buffer viewed as bytes, still readable
    cupy.asnumpy(regrown)
    del kept


@NEEDS_GPU
def test_no_leak_when_views_come_and_go():
    free_before, _ = cuda.cuda_mem_get_info()
    for _ in range(2000):
        buf = cuda.DeviceBuffer(1 << 20)
        view = buf.view()
        buf.free()
        del view
    free_after, _ = cuda.cuda_mem_get_info()
    assert free_before - free_after < 64 << 20, (free_before, free_after)


# -- the "stream" key of __cuda_array_interface__ (version 3)


@NEEDS_GPU
def test_exported_stream_names_the_last_writer():
    host = np.arange(8, dtype=np.float32)
    buf = cuda.DeviceBuffer()
    buf.view_as((8,), np.float32)
    assert buf.__cuda_array_interface__["stream"] is None  # nothing written through poly
    stream = cuda.Stream()
    buf.copy_from(host, stream)
    assert buf.__cuda_array_interface__["stream"] == stream.ptr
    view = buf.view()
    stream.free()  # the view and the buffer keep the stream alive for their consumers
    assert view.__cuda_array_interface__["stream"] == buf.__cuda_array_interface__["stream"] != 0
    np.testing.assert_array_equal(view.numpy(), host)
    buf.copy_from(host + 1)  # no stream: the legacy default stream
    assert buf.__cuda_array_interface__["stream"] == 1
    np.testing.assert_array_equal(buf.numpy(), host + 1)


@NEEDS_GPU
@pytest.mark.parametrize("consumer_stream", [False, True], ids=["legacy-stream", "poly-stream"])
def test_copy_from_device_waits_for_the_producers_stream(consumer_stream):
    cupy = pytest.importorskip("cupy")
    from fixtures.cuda_garbage import slowly_filled

    producer = cupy.cuda.Stream(non_blocking=True)  # no implicit ordering with other streams
    n = 1 << 22
    x = slowly_filled(cupy, producer, n, 7.0)
    stream = cuda.Stream() if consumer_stream else None
    buf = cuda.DeviceBuffer()
    with producer:  # CuPy names its current stream in the interface it exports
        assert x.__cuda_array_interface__["stream"] == producer.ptr
        buf.copy_from_device(x, stream)
    assert not producer.done, "the slow kernel finished before the copy was queued: the race cannot show"
    out = buf.numpy(stream)
    assert (out == 7.0).all(), f"read before the producer's kernel finished: {np.unique(out)[:4]}"


@NEEDS_GPU
def test_stream_wait_for_and_synchronize_stream_by_handle():
    cupy = pytest.importorskip("cupy")
    from fixtures.cuda_garbage import slowly_filled

    producer = cupy.cuda.Stream(non_blocking=True)
    x = slowly_filled(cupy, producer, 1 << 20, 3.0)
    stream = cuda.Stream()
    stream.wait_for(producer.ptr)  # device-side: the host goes on
    assert not producer.done
    out = cuda.DeviceBuffer()
    out.copy_from_device(_Unannounced(x), stream)  # no "stream" key: ordered only by wait_for
    assert (out.numpy(stream) == 3.0).all()
    y = slowly_filled(cupy, producer, 1 << 20, 4.0)
    cuda.synchronize_stream(producer.ptr)  # host-side
    assert producer.done and (cupy.asnumpy(y) == 4.0).all()


class _Unannounced:
    """A device array whose interface names no stream (version 2 producers)."""

    def __init__(self, array):
        self._array = array
        interface = dict(array.__cuda_array_interface__)
        interface.pop("stream", None)
        self.__cuda_array_interface__ = interface
