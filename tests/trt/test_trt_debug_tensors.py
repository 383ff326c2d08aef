"""TrtRunner reads debug tensors back through TensorRT's IDebugListener, on the TensorRT double
(tests/fixtures/trt_double.py) and real device memory.

The engine is built from the user's side: ``DebugNetwork`` (the network TensorRT's ONNX parser
makes of ``y = relu(x @ W + B)``) marked with ``MarkDebug`` (or made with
``mark_unfused_tensors_as_debug_tensors``), a ``CreateConfig`` with a profile,
``EngineBytesFromNetwork`` and ``EngineFromBytes``. The double reports each debug tensor whose
state is on during ``execute_async_v3`` with a scratch copy that it overwrites with garbage as
soon as the callback returns (TensorRT's address is valid only during the call), so the values
below are right only if the runner copied them inside the callback.

Like test_trt_runner_double.py, this needs a CUDA GPU and CuPy: it runs on the lent GPU machine.
"""

from __future__ import annotations

import numpy as np
import pytest

from poly.core import PolyException, cuda

pytestmark = pytest.mark.skipif(
    not cuda.cuda_available(),
    reason="needs a CUDA GPU (none here): the runner's execution path runs on the lent GPU machine against the "
    "TensorRT double",
)

X = np.array([[1, -2, 3, 0], [-1, 0, 2, 5], [4, 1, -3, -2]], np.float32)


@pytest.fixture
def build(tensorrt_double):
    """``build(mark=(), unfused=False)``: the engine loader, through poly's loaders."""
    pytest.importorskip("cupy", reason="the execution double computes on the device with CuPy")
    from fixtures.trt_double import DebugNetwork, FakeBuilder, FakeRuntime

    from poly.trt import CreateConfig, EngineBytesFromNetwork, EngineFromBytes, MarkDebug, Profile

    def make(mark=(), unfused=False):
        def network():
            net = DebugNetwork()
            if unfused:
                assert net.mark_unfused_tensors_as_debug_tensors()
            return FakeBuilder(), net

        config = CreateConfig(profiles=[Profile().add("x", (1, 4), (2, 4), (8, 4))])
        serialized = EngineBytesFromNetwork(MarkDebug(network, list(mark)), config=config)
        return EngineFromBytes(serialized, runtime=FakeRuntime())

    return make


def _reference(x):
    from fixtures.trt_double import debug_reference

    return debug_reference(x)


def _reports(runner, count):
    """The debug tensors the double reported at the last inference, given how many it reported before."""
    return runner.context.debug_reports[count:]


def test_marked_debug_tensors_come_back_with_the_outputs(build):
    from poly.trt import TrtRunner

    with TrtRunner(build(mark=["t", "u", "x_shape"])) as runner:
        out = runner.infer({"x": X})
        ref = _reference(X)
        assert list(out) == ["y", "t", "u", "x_shape"]  # the outputs, then the debug tensors as reported
        for name in ("y", "t", "u"):
            assert out[name].dtype == np.float32 and isinstance(out[name], np.ndarray)
            np.testing.assert_array_equal(out[name], ref[name])
        assert out["x_shape"].dtype == np.int64  # a host tensor (Shape), int64
        np.testing.assert_array_equal(out["x_shape"], [3, 4])
        assert runner.reported_debug_tensors == ["t", "u", "x_shape"]

        small = X[:1] * 2
        again = runner.infer({"x": small})  # new shapes and values, same names
        ref = _reference(small)
        for name in ("t", "u", "x_shape", "y"):
            np.testing.assert_array_equal(again[name], ref[name])


def test_debug_tensors_stay_on_the_device_when_the_outputs_do(build):
    import cupy as cp

    from poly.core.cuda import DeviceView
    from poly.trt import TrtRunner

    with TrtRunner(build(mark=["t", "x_shape"]), copy_outputs_to_host=False) as runner:
        out = runner.infer({"x": X})
        ref = _reference(X)
        assert isinstance(out["t"], DeviceView) and isinstance(out["x_shape"], DeviceView)
        np.testing.assert_array_equal(cp.asnumpy(cp.asarray(out["t"])), ref["t"])
        np.testing.assert_array_equal(cp.asnumpy(cp.asarray(out["x_shape"])), [3, 4])  # copied up from the host
        host = runner.infer({"x": X}, copy_outputs_to_host=True)
        assert isinstance(host["t"], np.ndarray)
        np.testing.assert_array_equal(host["t"], ref["t"])


def test_a_chosen_subset_is_the_only_one_reported_and_copied(build):
    from poly.trt import TrtRunner

    with TrtRunner(build(mark=["t", "u", "x_shape"])) as runner:
        runner.infer({"x": X})  # all of them: three buffers
        runner.set_debug_tensors(["u"])
        assert runner.debug_tensors == ["u"]
        before = len(runner.context.debug_reports)
        out = runner.infer({"x": X})
        assert set(out) == {"y", "u"}
        np.testing.assert_array_equal(out["u"], _reference(X)["u"])
        assert _reports(runner, before) == ["u"]  # TensorRT was told to report u only
        assert not runner.context.get_debug_state("t") and runner.context.get_debug_state("u")
        assert set(runner._debug._host) == {"u"}  # the buffers of t and x_shape were dropped

        runner.set_debug_tensors("t")  # one name
        assert set(runner.infer({"x": X})) == {"y", "t"}
        runner.set_debug_tensors([])
        before = len(runner.context.debug_reports)
        assert set(runner.infer({"x": X})) == {"y"}
        assert _reports(runner, before) == [] and runner._debug._host == {}
        runner.set_debug_tensors(None)  # all again
        assert set(runner.infer({"x": X})) == {"y", "t", "u", "x_shape"}


def test_a_selection_made_before_activation_applies_to_the_first_inference(build):
    from poly.trt import TrtRunner

    runner = TrtRunner(build(mark=["t", "u"]))
    runner.set_debug_tensors(["t"])
    with runner:
        out = runner.infer({"x": X})
        assert set(out) == {"y", "t"}
        assert ("set_tensor_debug_state", "t", True) in runner.context.calls


def test_all_debug_tensors_are_turned_on_whatever_their_state(build):
    """A context handed over with its debug states off still reports every debug tensor."""
    from poly.trt import TrtRunner

    engine = build(mark=["t", "u"])()
    context = engine.create_execution_context()
    context.set_all_tensors_debug_state(False)
    with TrtRunner(lambda: context) as runner:
        out = runner.infer({"x": X})
        np.testing.assert_array_equal(out["t"], _reference(X)["t"])
        np.testing.assert_array_equal(out["u"], _reference(X)["u"])


def test_an_unknown_name_fails_naming_it(build, monkeypatch):
    from fixtures.trt_double import FakeContext

    from poly.trt import TrtRunner

    with TrtRunner(build(mark=["t"])) as runner:
        runner.infer({"x": X})  # the unfused tensors (none here) are known now
        with pytest.raises(PolyException, match=r"Debug tensor\(s\) \['nope'\] \| not debug tensor\(s\) of this engine"):
            runner.set_debug_tensors(["t", "nope"])

    with TrtRunner(build(mark=["t"])) as runner:
        runner.set_debug_tensors(["nope", "t"])  # may be an unfused tensor: checked at the next inference
        with pytest.raises(PolyException, match=r"\['nope'\] \| not debug tensor\(s\) of this engine; TensorRT reported \['t'\]"):
            runner.infer({"x": X})
        assert runner.debug_tensors == ["t"]
        assert set(runner.infer({"x": X})) == {"y", "t"}

    # A TensorRT without unfused debug tensors: every name is checked at once.
    monkeypatch.delattr(FakeContext, "unfused_tensors_debug_state")
    with TrtRunner(build(mark=["t"])) as runner:
        with pytest.raises(PolyException, match=r"\['y'\] \| not debug tensor"):
            runner.set_debug_tensors(["y"])  # an output, not a debug tensor


def test_unfused_debug_tensors_are_reported_and_chosen_by_name(build):
    from poly.trt import TrtRunner

    with TrtRunner(build(unfused=True)) as runner:
        out = runner.infer({"x": X})
        assert set(out) == {"y", "t"}  # u is fused away (PWN(/shift/Add, /act/Relu)): only t is left
        np.testing.assert_array_equal(out["t"], _reference(X)["t"])
        assert runner.context.unfused_tensors_debug_state

        runner.set_debug_tensors([])
        assert set(runner.infer({"x": X})) == {"y"}
        assert runner.reported_debug_tensors == ["t"]  # still reported (learned), not copied
        assert runner._debug._host == {}
        runner.set_debug_tensors(["t"])
        np.testing.assert_array_equal(runner.infer({"x": X})["t"], _reference(X)["t"])

    runner = TrtRunner(build(unfused=True))
    runner.set_debug_tensors(["t"])  # not known before TensorRT reports it: accepted, then checked
    with runner:
        assert set(runner.infer({"x": X})) == {"y", "t"}


def test_debug_values_outlive_the_runner(build):
    """Like the outputs, the arrays returned keep their memory after deactivation."""
    from fixtures.cuda_garbage import fill_new_allocations

    from poly.trt import TrtRunner

    with TrtRunner(build(mark=["u"])) as runner:
        out = runner.infer({"x": X})
    kept = fill_new_allocations(X.nbytes)
    np.testing.assert_array_equal(out["u"], _reference(X)["u"])
    del kept


def test_engines_without_debug_tensors_return_their_outputs_only(tensorrt_double):
    pytest.importorskip("cupy", reason="the execution double computes on the device with CuPy")
    from fixtures.trt_double import FakeEngine

    from poly.trt import TrtRunner

    engine = FakeEngine()
    with TrtRunner(engine) as runner:
        out = runner.infer({"x": X})
        assert set(out) == {"y", "nz"}
        assert any(call[0] == "set_debug_listener" for call in engine.contexts[0].calls)
        assert runner.reported_debug_tensors == []
