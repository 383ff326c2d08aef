"""poly-onnx's Polygraphy paths: SetUpperBound and its search for unbounded data-dependent
shapes (compared with Polygraphy's on the same model), OnnxFromTfGraph, PluginRefRunner and
poly.backend.onnx.util."""

from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import pytest
from onnx import TensorProto, helper

from poly.core import PolyException

polygraphy = pytest.importorskip("polygraphy", reason="the dev group installs Polygraphy to compare with")


def _unbounded_range_model():
    """x[1,4] -> ReduceMax -> Cast(int64) -> Range(0, that, 1) -> Cast(float) -> y: the Range's
    length depends on the input values (like Polygraphy's unbounded_dds test model)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [
        helper.make_node("ReduceMax", ["x"], ["reduce_out"], keepdims=0, name="reduce"),
        helper.make_node("Cast", ["reduce_out"], ["limit"], to=TensorProto.INT64, name="cast"),
        helper.make_node("Constant", [], ["start"], value=helper.make_tensor("s", TensorProto.INT64, [], [0])),
        helper.make_node("Constant", [], ["delta"], value=helper.make_tensor("d", TensorProto.INT64, [], [1])),
        helper.make_node("Range", ["start", "limit", "delta"], ["range_out"], name="range"),
        helper.make_node("Cast", ["range_out"], ["y"], to=TensorProto.FLOAT, name="cast_out"),
    ]
    model = helper.make_model(helper.make_graph(nodes, "dds", [x], [y]), opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model)


def _min_nodes(model):
    graph = gs.import_onnx(model)
    return {n.outputs[0].name: n.inputs[1].values.tolist() for n in graph.nodes if n.op == "Min"}


def test_unbounded_tensors_are_those_polygraphy_finds():
    from polygraphy.backend.onnx import util as their_util

    from poly.backend.onnx import util

    model = _unbounded_range_model()
    ours = [t.name for t in util.get_unbounded_dds_tensors(gs.import_onnx(model))]
    theirs = [t.name for t in their_util.get_unbounded_dds_tensors(gs.import_onnx(model))]
    assert ours == ["limit"]
    assert set(theirs) >= set(ours), "Polygraphy also flags the outputs of Constant nodes; poly knows they are constant"


@pytest.mark.parametrize("bounds, expected", [(1000, 1000), ({"": 2000}, 2000), ({"limit": 4000, "": 5}, 4000)])
def test_set_upper_bound_caps_the_runtime_value_like_polygraphy(bounds, expected):
    from polygraphy.backend.onnx import SetUpperBound as TheirSetUpperBound

    from poly.backend.onnx import SetUpperBound, set_upper_bound

    model = _unbounded_range_model()
    ours = SetUpperBound(model, upper_bounds=bounds)()
    assert _min_nodes(ours) == {"limit": expected}
    assert _min_nodes(set_upper_bound(model, bounds)) == {"limit": expected}
    assert not _min_nodes(model), "the input model is copied, not changed"
    onnx.checker.check_model(ours)
    theirs = TheirSetUpperBound(model, upper_bounds=bounds)()
    assert {v for v in _min_nodes(theirs).values()} == {expected}

    import onnxruntime as ort

    session = ort.InferenceSession(ours.SerializeToString(), providers=["CPUExecutionProvider"])
    big = session.run(None, {"x": np.full((1, 4), 1e6, np.float32)})[0]
    assert big.shape == (expected,), "the Range is capped at run time"
    small = session.run(None, {"x": np.full((1, 4), 3, np.float32)})[0]
    assert small.tolist() == [0.0, 1.0, 2.0]


def test_set_upper_bound_names_unknown_tensors():
    from poly.backend.onnx import SetUpperBound

    with pytest.raises(PolyException, match=r"does not have: \['nope'\]"):
        SetUpperBound(_unbounded_range_model(), upper_bounds={"nope": 3})()


def test_onnx_from_tf_graph_imports_and_says_tensorflow_is_unsupported():
    from poly.backend.onnx import OnnxFromTfGraph, onnx_from_tf_graph

    loader = OnnxFromTfGraph(lambda: None, opset=13)
    with pytest.raises(PolyException, match="TensorFlow is not supported"):
        loader()
    with pytest.raises(PolyException, match="TensorFlow is not supported"):
        onnx_from_tf_graph(None)


def test_get_num_nodes_counts_subgraphs():
    from poly.backend.onnx import util

    body = helper.make_graph([helper.make_node("Identity", ["a"], ["b"]), helper.make_node("Identity", ["b"], ["c"])],
                             "body", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1])],
                             [helper.make_tensor_value_info("c", TensorProto.FLOAT, [1])])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, [1])
    node = helper.make_node("If", ["cond"], ["out"], then_branch=body, else_branch=body)
    model = helper.make_model(helper.make_graph([node], "g", [cond], [out]))
    assert util.get_num_nodes(model) == 5


def _instance_norm_graph():
    x = gs.Variable("x", dtype=np.float32, shape=(2, 3, 4, 4))
    scale = gs.Constant("scale", np.array([1.0, 2.0, 0.5], np.float32))
    bias = gs.Constant("bias", np.array([0.0, 1.0, -1.0], np.float32))
    mid = gs.Variable("mid", dtype=np.float32)
    y = gs.Variable("y", dtype=np.float32, shape=(2, 3, 4, 4))
    nodes = [gs.Node("InstanceNormalization", inputs=[x, scale, bias], outputs=[mid], attrs={"epsilon": 1e-3}),
             gs.Node("Identity", inputs=[mid], outputs=[y])]
    return gs.Graph(nodes=nodes, inputs=[x], outputs=[y], opset=17)


def test_pluginref_runner_matches_onnxruntime_and_polygraphy():
    import onnxruntime as ort
    from polygraphy.backend.pluginref import PluginRefRunner as TheirRunner

    from poly.backend.pluginref import PluginRefRunner

    graph = _instance_norm_graph()
    feed = {"x": np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)}
    with PluginRefRunner(lambda: graph, name="ref") as runner:
        assert runner.name == "ref"
        ours = runner.infer(feed)["y"]
    model = gs.export_onnx(_instance_norm_graph())
    model.ir_version = 8  # what any installed ONNX-Runtime reads
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(ours, session.run(None, feed)[0], rtol=1e-4, atol=1e-4)
    with TheirRunner(lambda: _instance_norm_graph()) as theirs:
        np.testing.assert_allclose(ours, theirs.infer(feed)["y"], rtol=1e-6, atol=1e-6)


def test_pluginref_runner_names_ops_without_a_reference():
    from poly.backend.pluginref import PluginRefRunner

    a = gs.Variable("a", dtype=np.bool_, shape=(2,))
    out = gs.Variable("out", dtype=np.bool_, shape=(2,))
    graph = gs.Graph(nodes=[gs.Node("Not", inputs=[a], outputs=[out])], inputs=[a], outputs=[out])
    with PluginRefRunner(graph) as runner:
        with pytest.raises(PolyException, match="Op: Not does not have a reference implementation registered"):
            runner.infer({"a": np.array([True, False])})
