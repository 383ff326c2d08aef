"""TrtRunner's execution logic against a recording double of the engine and execution context
(tests/trt/trt_double.py) on real device buffers.

An engine-capable GPU is needed to run a real TensorRT engine: TensorRT-RTX runs engines only on
compute capability 8.0/8.6/8.9/12.x, and the lent H100/H200 (9.0) have no full TensorRT. So
this suite runs on the lent GPU machine through tools/run_device_tests.sh, and skips here.
"""

from __future__ import annotations

import numpy as np
import pytest

from poly.core import PolyException, cuda

pytestmark = pytest.mark.skipif(
    not cuda.cuda_available(),
    reason="needs a CUDA GPU (none here); no machine here can run a real TensorRT engine, so the runner's "
    "execution path is tested with an execution-context double on the lent GPU: tools/run_device_tests.sh",
)


@pytest.fixture
def double(tensorrt_double):
    pytest.importorskip("cupy", reason="the execution double computes on the device with CuPy")
    from fixtures.trt_double import FakeEngine

    return FakeEngine()


def _calls(context, kind):
    return [c for c in context.calls if c[0] == kind]


def test_numpy_inputs_outputs_and_shape_caching(double):
    from poly.trt import TrtRunner

    x = np.array([[-1, 2, 3, -4], [5, -6, 7, 8]], np.float32)
    with TrtRunner(double) as runner:
        meta = runner.get_input_metadata()
        assert list(meta["x"].shape) == [-1, 4] and str(meta["x"].dtype) == "float32"
        assert (meta["x"].shape.min, meta["x"].shape.max) == ((1, 4), (8, 4))  # profile 0's range
        out = runner.infer({"x": x})
        np.testing.assert_array_equal(out["y"], 2 * x + 1)
        np.testing.assert_array_equal(out["nz"], np.flatnonzero(x > 0))
        assert out["nz"].dtype == np.int64
        assert runner.inference_time > 0
        context = double.contexts[0]
        out2 = runner.infer({"x": x + 1})
        np.testing.assert_array_equal(out2["y"], 2 * (x + 1) + 1)
        assert len(_calls(context, "set_input_shape")) == 1  # same shape: not set again
        y_buffer = runner._output_buffers["y"]
        capacity, ptr = y_buffer.capacity, y_buffer.ptr
        small = np.ones((1, 4), np.float32)
        np.testing.assert_array_equal(runner.infer({"x": small})["y"], 3 * small)
        assert len(_calls(context, "set_input_shape")) == 2
        assert (y_buffer.capacity, y_buffer.ptr) == (capacity, ptr)  # shrinking reuses the buffer
        big = np.ones((8, 4), np.float32)
        np.testing.assert_array_equal(runner.infer({"x": big})["y"], 3 * big)
        assert y_buffer.capacity >= big.nbytes


def test_outputs_are_overwritten_by_the_next_call(double):
    """As with Polygraphy, the runner reuses its output buffers (no allocation per inference)."""
    from poly.trt import TrtRunner

    x = np.ones((2, 4), np.float32)
    with TrtRunner(double) as runner:
        a = runner.infer({"x": x})["y"]
        b = runner.infer({"x": 2 * x})["y"]
        assert np.shares_memory(a, b)  # the same pinned host buffer, overwritten
        np.testing.assert_array_equal(b, 5 * x)
        host = runner._host_outputs["y"]._pinned
        assert host.outside_references == 1  # a and b's memory: reused although viewed, never freed


def test_device_inputs_are_used_in_place(double):
    import cupy as cp

    from poly.trt import TrtRunner

    x = cp.asarray(np.array([[1, -2, 3, 4]], np.float32))
    with TrtRunner(double) as runner:
        out = runner.infer({"x": x})
        assert runner._input_buffers == {}  # no host round trip, no staging copy
        assert ("set_tensor_address", "x", x.data.ptr) in double.contexts[0].calls
        np.testing.assert_array_equal(out["y"], 2 * cp.asnumpy(x) + 1)
        np.testing.assert_array_equal(out["nz"], [0, 2, 3])


def test_torch_cuda_tensors_are_accepted(double):
    torch = pytest.importorskip("torch")
    from poly.trt import TrtRunner

    x = torch.arange(8, dtype=torch.float32, device="cuda").reshape(2, 4) - 3
    with TrtRunner(double) as runner:
        out = runner.infer({"x": x})
        assert runner._input_buffers == {}
        np.testing.assert_array_equal(out["y"], 2 * x.cpu().numpy() + 1)


def test_outputs_can_stay_on_the_device(double):
    import cupy as cp

    from poly.trt import TrtRunner

    x = np.full((3, 4), 2, np.float32)
    with TrtRunner(double, copy_outputs_to_host=False) as runner:
        out = runner.infer({"x": x})
        y = cp.asarray(out["y"])  # through __cuda_array_interface__
        assert y.shape == (3, 4)
        np.testing.assert_array_equal(cp.asnumpy(y), 2 * x + 1)
        host = runner.infer({"x": x}, copy_outputs_to_host=True)
        assert isinstance(host["y"], np.ndarray)


def test_profiles_switch_and_shapes_are_checked(double):
    from poly.trt import TrtRunner

    with TrtRunner(double) as runner:
        with pytest.raises(PolyException, match=r"refused shape \(20, 4\).*profile 0 allows \(1, 4\) to \(8, 4\)"):
            runner.infer({"x": np.ones((20, 4), np.float32)}, check_inputs=False)
        runner.set_profile(1)
        context = double.contexts[0]
        assert ("set_optimization_profile_async", 1) in context.calls
        assert runner.get_input_metadata()["x"].shape.max == (64, 4)
        out = runner.infer({"x": np.ones((20, 4), np.float32)})
        assert out["y"].shape == (20, 4)
        with pytest.raises(PolyException, match="profile 2 does not exist"):
            runner.set_profile(2)
    with TrtRunner(double, optimization_profile=1) as runner:
        assert ("set_optimization_profile_async", 1) in double.contexts[-1].calls


def test_a_given_context_is_used_not_recreated(double):
    from poly.trt import TrtRunner

    context = double.create_execution_context()
    with TrtRunner(lambda: context) as runner:
        runner.infer({"x": np.ones((1, 4), np.float32)})
    assert len(double.contexts) == 1 and _calls(context, "execute_async_v3")


def test_input_checks_name_the_tensor(double):
    from poly.trt import TrtRunner

    with TrtRunner(double) as runner:
        with pytest.raises(PolyException, match="Input tensor: x .*dtype"):
            runner.infer({"x": np.ones((1, 4), np.float64)})
        with pytest.raises(PolyException, match="Missing input"):
            runner.infer({})


# -- output lifetimes: never freed under the caller ---------------------------------------------


def test_host_outputs_survive_deactivate_and_new_allocations(double):
    from fixtures.cuda_garbage import fill_new_allocations

    from poly.trt import TrtRunner

    x = np.array([[-1, 2, 3, -4], [5, -6, 7, 8]], np.float32)
    with TrtRunner(double) as runner:
        out = runner.infer({"x": x})
    kept = fill_new_allocations(x.nbytes)  # the runner's blocks would be handed out again if freed
    np.testing.assert_array_equal(out["y"], 2 * x + 1)
    np.testing.assert_array_equal(out["nz"], np.flatnonzero(x > 0))
    del kept


def test_host_outputs_survive_growth(double):
    from fixtures.cuda_garbage import fill_new_allocations

    from poly.trt import TrtRunner

    small, big = np.full((1, 4), 3, np.float32), np.full((8, 4), 5, np.float32)
    with TrtRunner(double) as runner:
        first = runner.infer({"x": small})
        second = runner.infer({"x": big})  # outgrows the pinned output buffers: new blocks
        assert not np.shares_memory(first["y"], second["y"])
        kept = fill_new_allocations(small.nbytes)
        np.testing.assert_array_equal(first["y"], 2 * small + 1)
        np.testing.assert_array_equal(first["nz"], np.arange(4))
        np.testing.assert_array_equal(second["y"], 2 * big + 1)
    del kept


def test_comparator_with_one_iteration_keeps_valid_outputs(double):
    """The Comparator copies outputs only between iterations: with one, it keeps the runner's
    arrays after deactivating it, which must still hold the values."""
    from fixtures.cuda_garbage import fill_new_allocations

    from poly.compare import Comparator
    from poly.trt import TrtRunner

    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)
    results = Comparator.run([TrtRunner(double, name="trt")], data_loader=[{"x": x}])
    kept = fill_new_allocations(x.nbytes)
    ((name, iterations),) = list(results)
    assert name == "trt" and len(iterations) == 1
    np.testing.assert_array_equal(iterations[0]["y"], 2 * x + 1)
    np.testing.assert_array_equal(iterations[0]["nz"], np.flatnonzero(x > 0))
    del kept


def test_device_outputs_survive_deactivate_for_cupy_consumers(double):
    import cupy as cp
    from fixtures.cuda_garbage import fill_new_allocations

    from poly.core.cuda import DeviceView
    from poly.trt import TrtRunner

    x = np.array([[1, -2, 3, 4], [-5, 6, 7, -8]], np.float32)
    with TrtRunner(double, copy_outputs_to_host=False) as runner:
        out = runner.infer({"x": x})
        assert isinstance(out["y"], DeviceView) and out["y"].__cuda_array_interface__["stream"] is None
        y, nz = cp.asarray(out["y"]), cp.asarray(out["nz"])
        del out  # CuPy alone keeps the memory now
        runner.infer({"x": np.ones((8, 4), np.float32)})  # grows the runner's buffers
    kept = fill_new_allocations(x.nbytes)
    np.testing.assert_array_equal(cp.asnumpy(y), 2 * x + 1)
    np.testing.assert_array_equal(cp.asnumpy(nz), np.flatnonzero(x > 0))
    del kept


# -- device inputs written on another stream --------------------------------------------------


def test_device_inputs_wait_for_their_producers_stream(double):
    import cupy as cp
    from fixtures.cuda_garbage import slowly_filled

    from poly.trt import TrtRunner

    producer = cp.cuda.Stream(non_blocking=True)
    with TrtRunner(double) as runner:
        x = slowly_filled(cp, producer, 64 * 4, 2.0).reshape(64, 4)
        with producer:  # the interface CuPy exports names its current stream
            runner.set_profile(1)
            out = runner.infer({"x": x})
        assert (out["y"] == 5.0).all(), f"TensorRT read the input before its producer wrote it: {np.unique(out['y'])}"


# -- shape tensors and TensorRT's False answers -------------------------------------------------


def test_shape_tensor_inputs_are_bound_to_host_memory(tensorrt_double):
    pytest.importorskip("cupy", reason="the execution double computes on the device with CuPy")
    from fixtures.trt_double import ShapeTensorEngine

    from poly.trt import TrtRunner

    engine = ShapeTensorEngine()
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    with TrtRunner(engine) as runner:
        meta = runner.get_input_metadata()
        assert tuple(meta["target"].shape) == (2,) and str(meta["target"].dtype) == "int32"
        out = runner.infer({"x": x, "target": np.array([4, 2], np.int32)})
        np.testing.assert_array_equal(out["r"], x.reshape(4, 2))
        host = runner._shape_inputs["target"]
        assert ("set_tensor_address", "target", host.ctypes.data) in engine.contexts[0].calls
        out = runner.infer({"x": x, "target": np.array([8, 1], np.int32)})
        np.testing.assert_array_equal(out["r"], x.reshape(8, 1))
        with pytest.raises(PolyException, match="TensorRT failed to execute the engine"):
            runner.infer({"x": x, "target": np.array([3, 3], np.int32)})  # 9 elements from 8


def test_refused_device_addresses_name_the_tensor(double):
    import cupy as cp

    from poly.trt import TrtRunner

    storage = cp.zeros(9 * 4, cp.float32)
    misaligned = storage[1:].reshape(-1)[:8].reshape(2, 4)  # 4 bytes past a 256-byte boundary
    assert misaligned.data.ptr % 256 == 4
    with TrtRunner(double) as runner:
        with pytest.raises(PolyException, match=r"Input tensor: x \| TensorRT refused address 0x[0-9a-f]+ "
                                                r"\(set_tensor_address returned False"):
            runner.infer({"x": misaligned})
