"""`poly debug localize` with a TensorRT candidate: its tensors read back as debug tensors, a segment
at a time, against an ONNX reference, on the TensorRT double (tests/fixtures/trt_double.py).

The double's engine computes ``y = relu(x @ W + B)`` through the tensors ``t`` and ``u``; the ONNX
model of the same network (MatMul ``matmul`` -> Add ``add`` -> Relu ``relu``) is the plan, and a copy
with ``B`` changed is the reference, so the Add is where the two diverge. Like
test_trt_debug_tensors.py this needs a CUDA GPU and CuPy: it runs on the lent GPU machine."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from poly.core import cuda

pytestmark = pytest.mark.skipif(
    not cuda.cuda_available(),
    reason="needs a CUDA GPU (none here): TrtSource runs the TensorRT double's engine on the lent GPU machine",
)


def _model(bias):
    from fixtures.trt_double import DEBUG_W

    nodes = [helper.make_node("MatMul", ["x", "W"], ["t"], name="matmul"),
             helper.make_node("Add", ["t", "B"], ["u"], name="add"),
             helper.make_node("Relu", ["u"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "debug_engine", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])],
                              [numpy_helper.from_array(DEBUG_W, "W"), numpy_helper.from_array(bias, "B")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.fixture
def engine(tensorrt_double):
    pytest.importorskip("cupy", reason="the execution double computes on the device with CuPy")
    from fixtures.trt_double import DebugNetwork, FakeBuilder, FakeRuntime

    from poly.trt import CreateConfig, EngineBytesFromNetwork, EngineFromBytes, MarkDebug, Profile

    config = CreateConfig(profiles=[Profile().add("x", (1, 4), (3, 4), (8, 4))])
    network = MarkDebug(lambda: (FakeBuilder(), DebugNetwork()), ["t", "u"])
    return EngineFromBytes(EngineBytesFromNetwork(network, config=config), runtime=FakeRuntime())


def test_a_trt_candidate_is_localized_through_its_debug_tensors(engine):
    from fixtures.trt_double import DEBUG_B, debug_reference

    from poly.compare.dataset import SampleChecker
    from poly.debug.localize import GraphPlan, Localizer, ModelSource, OnnxExecutor, TrtSource

    candidate_model = _model(DEBUG_B)
    plan = GraphPlan(candidate_model)
    reference_plan = GraphPlan(_model(DEBUG_B + np.array([0, 0, 0.5, 0], np.float32)))
    source = TrtSource(engine, plan.producer)
    x = np.array([[1, -2, 3, 0], [-1, 0, 2, 5], [4, 1, -3, -2]], np.float32)
    source.start({"x": x})
    values = source.values(["t", "u", "nosuch"])
    assert sorted(values) == ["t", "u"]
    np.testing.assert_array_equal(values["u"], debug_reference(x)["u"])
    assert source.runner.debug_tensors == ["t", "u"]  # only what was asked for is copied

    assert not source.provides("nosuch") and source.provides("y")
    localizer = Localizer(plan, source, ModelSource(reference_plan, OnnxExecutor("onnxrt"), keep=plan.producer),
                          SampleChecker(), shadow_executor=OnnxExecutor("onnxrt"))
    report = localizer.run([{"x": x}, {"x": x * 2}])
    source.close()
    assert report.first_divergent == "add"
    assert report.ranking[0] == "add"
    nodes = {r.name: r for r in report.nodes}
    assert nodes["matmul"].passed and not nodes["add"].passed
    assert nodes["add"].own and nodes["add"].own[0]["max_absdiff"] == pytest.approx(0.5)
