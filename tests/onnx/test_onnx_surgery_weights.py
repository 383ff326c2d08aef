"""poly.onnx.surgery: InsertNode's wiring, 2:4 sparsity pruning (and its equality with Polygraphy's
pruner), weight stripping's choice and markers, and reconstruction of stripped weights."""

import numpy as np
import onnxruntime as ort
import pytest
from fixtures import onnx_models, weight_models
from onnx import TensorProto, helper, numpy_helper

from poly.core import PolyException
from poly.onnx import (
    InsertNode,
    PruneSparsity,
    ReconstructWeights,
    SparsityPruner,
    StripWeights,
    insert_node,
    prune_sparsity,
    reconstruct_weights,
    strip_weights,
)
from poly.onnx.surgery import is_2_4_sparse, prune_2_4, strippable_initializers

PRUNED_AXES = {"Wc": 1, "Wg": 1, "Wt": 1, "Wh": 0, "Wq": 0, "Wo": 0}
"""weighted_net's weights TensorRT can run sparse, and the axis their groups of four run along:
Conv weights on input channels, Gemm's B (transposed) on its second axis, a MatMul weight behind a
Transpose on the axis the permutation maps K to, behind Cast and Q/DQ on K."""
STRIPPED = {"Wc", "bc", "Wg", "Cg", "Wt", "Wq", "E", "Wo", "W6"}
"""weighted_net's initializers weight stripping removes (as Polygraphy's weight-strip does)."""


def _run(model, feeds):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))


def _weights(model):
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


# ---- 2:4 pruning --------------------------------------------------------------------------------


def test_prune_2_4_keeps_the_two_largest_magnitudes_of_each_group():
    values = np.array([[1.0, -5.0, 0.5, 3.0, 2.0, 2.0, -2.0, 1.0]], np.float32)
    pruned = prune_2_4(values, axis=1)
    # Ties: the first of equal magnitudes goes first (as Polygraphy's pruner).
    np.testing.assert_array_equal(pruned, [[0.0, -5.0, 0.0, 3.0, 0.0, 2.0, -2.0, 0.0]])
    assert pruned.dtype == np.float32 and values[0, 0] == 1.0  # a copy
    assert is_2_4_sparse(pruned, 1) and not is_2_4_sparse(values, 1)
    column = prune_2_4(values.T, axis=0)
    np.testing.assert_array_equal(column, pruned.T)


def test_sparsity_pruner_finds_the_weights_and_axes_tensorrt_uses():
    model = weight_models.weighted_net()
    infos = SparsityPruner(model).candidates()
    assert {info.name: info.axis for info in infos} == PRUNED_AXES


def test_polygraphys_import_path_gives_the_same_pruner():
    from poly.tools.sparse import PruneInfo
    from poly.tools.sparse import SparsityPruner as Compat

    assert Compat is SparsityPruner
    model = weight_models.weighted_net()
    Compat(model).prune()
    checker = Compat(model)
    checker.check()
    assert checker.sparse_tensors == set(PRUNED_AXES)
    assert PruneInfo("Wc", 1) in Compat(model).candidates()


def test_prune_sparsity_gives_each_eligible_weight_the_2_4_pattern():
    model = weight_models.weighted_net()
    pruned = prune_sparsity(model)
    before, after = _weights(model), _weights(pruned)
    for name, array in after.items():
        if name in PRUNED_AXES:
            assert is_2_4_sparse(array, PRUNED_AXES[name]), name
            assert array.dtype == before[name].dtype and array.shape == before[name].shape
            np.testing.assert_array_equal(array, prune_2_4(before[name], PRUNED_AXES[name]))
        else:
            np.testing.assert_array_equal(array, before[name], err_msg=name)
    assert [o.domain for o in pruned.opset_import] == [o.domain for o in model.opset_import]
    assert _run(pruned, weight_models.feed())["y"].shape == (3, 4)
    assert PruneSparsity(model, weights_skip=["Wc"])().graph.initializer[0] == model.graph.initializer[0]


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # inside Polygraphy's float16 path
def test_prune_sparsity_equals_polygraphys_pruner():
    sparse = pytest.importorskip("polygraphy.tools.sparse")
    model = weight_models.weighted_net()
    theirs = _weights(sparse.SparsityPruner(weight_models.weighted_net()).prune())
    ours = _weights(prune_sparsity(model))
    assert ours.keys() == theirs.keys()
    for name in ours:
        np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)


def test_prune_sparsity_handles_bfloat16_by_magnitude():
    values = np.array([[0.5, -4.0, 0.25, 3.0]], np.float32)
    bits = (values.view(np.uint32) >> 16).astype("<u2")
    weight = helper.make_tensor("w", TensorProto.BFLOAT16, [4, 1], bits.tobytes(), raw=True)
    x = helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [1, 1])
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [x], [y], initializer=[weight])
    pruned = prune_sparsity(helper.make_model(graph))
    kept = np.frombuffer(pruned.graph.initializer[0].raw_data, "<u2")
    restored = (kept.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(restored, [0.0, -4.0, 0.0, 3.0])


# ---- weight stripping -----------------------------------------------------------------------------


def test_strip_weights_removes_the_refittable_weights_and_marks_them():
    model = prune_sparsity(weight_models.weighted_net())
    stripped = strip_weights(model)
    assert stripped.doc_string == "TRT_WEIGHTLESS"
    originals = {t.name: t for t in model.graph.initializer}
    for tensor in stripped.graph.initializer:
        original = originals[tensor.name]
        assert (tensor.data_type, list(tensor.dims)) == (original.data_type, list(original.dims))
        if tensor.name in STRIPPED:
            assert not tensor.raw_data and not tensor.float_data, tensor.name
            sparse = tensor.name in PRUNED_AXES
            assert tensor.doc_string == ("TRT_WEIGHTLESS/SPARSE_2_4" if sparse else "TRT_WEIGHTLESS/"), tensor.name
        else:
            assert tensor.raw_data == original.raw_data and not tensor.doc_string, tensor.name
    # Unpruned weights are not recorded as sparse.
    assert {t.name: t.doc_string for t in strip_weights(weight_models.weighted_net()).graph.initializer}["Wc"] \
        == "TRT_WEIGHTLESS/"


def test_strip_weights_keeps_excluded_small_and_uint8_initializers():
    model = weight_models.weighted_net()
    names, unmet = strippable_initializers(model, exclude={"Wc", "not_there"})
    assert names == STRIPPED - {"Wc"} and unmet == {"not_there"}
    stripped = StripWeights(model, exclude=["Wc"])()
    assert {t.name for t in stripped.graph.initializer if t.doc_string} == STRIPPED - {"Wc"}
    # A Gather table of fewer than 1024 values stays, as do uint8 initializers.
    table = numpy_helper.from_array(np.ones((4, 4), np.float32), "small_table")
    codes = numpy_helper.from_array(np.ones((4, 4), np.uint8), "codes")
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [2])
    graph = helper.make_graph(
        [helper.make_node("Gather", ["small_table", "ids"], ["g"]), helper.make_node("Gather", ["codes", "ids"], ["c"])],
        "g", [ids], [helper.make_tensor_value_info("g", TensorProto.FLOAT, None),
                     helper.make_tensor_value_info("c", TensorProto.UINT8, None)], initializer=[table, codes])
    assert strippable_initializers(helper.make_model(graph))[0] == set()


def test_strip_weights_takes_data_stored_outside_raw_data():
    model = onnx_models.mlp()
    weight = model.graph.initializer[0]
    values = numpy_helper.to_array(weight)
    weight.ClearField("raw_data")
    weight.float_data.extend(values.ravel().tolist())
    stripped = strip_weights(model)
    first = stripped.graph.initializer[0]
    assert first.doc_string == "TRT_WEIGHTLESS/" and not first.float_data and not first.raw_data


# ---- reconstruction -------------------------------------------------------------------------------


def test_reconstruct_weights_gives_random_values_of_the_recorded_shapes_and_types():
    original = prune_sparsity(weight_models.weighted_net())
    stripped = strip_weights(original)
    rebuilt = reconstruct_weights(stripped, seed=5)
    assert rebuilt.doc_string == ""
    before, after = _weights(original), _weights(rebuilt)
    for tensor in rebuilt.graph.initializer:
        name = tensor.name
        assert not tensor.doc_string
        assert after[name].dtype == before[name].dtype and after[name].shape == before[name].shape, name
        if name in STRIPPED:
            assert not np.array_equal(after[name], before[name]), name
            if name in PRUNED_AXES:
                assert is_2_4_sparse(after[name], PRUNED_AXES[name]), name
            else:
                assert np.count_nonzero(after[name]) == after[name].size, name
        else:
            np.testing.assert_array_equal(after[name], before[name])
    again = _weights(ReconstructWeights(stripped, seed=5)())
    for name in after:
        np.testing.assert_array_equal(again[name], after[name])
    assert _run(rebuilt, weight_models.feed())["y"].shape == (3, 4)


def test_reconstruct_weights_with_the_original_values_restores_the_model():
    original = weight_models.weighted_net()
    values = {t.name: t for t in original.graph.initializer}
    values["Wo"] = numpy_helper.to_array(values["Wo"])  # arrays work as well as tensors
    rebuilt = reconstruct_weights(strip_weights(original), values=values)
    expected, actual = _run(original, weight_models.feed()), _run(rebuilt, weight_models.feed())
    np.testing.assert_array_equal(actual["y"], expected["y"])


def test_reconstruct_weights_rejects_values_of_another_shape():
    stripped = strip_weights(weight_models.weighted_net())
    with pytest.raises(PolyException, match="Wo.*shape \\[2, 2\\].*\\[8, 6\\]"):
        reconstruct_weights(stripped, values={"Wo": np.zeros((2, 2), np.float32)})


def test_reconstruct_weights_fills_bfloat16_and_float16():
    tensors = []
    for name, data_type, dims in (("b", TensorProto.BFLOAT16, [2, 4]), ("h", TensorProto.FLOAT16, [4])):
        tensor = TensorProto(name=name, data_type=data_type, dims=dims, doc_string="TRT_WEIGHTLESS/")
        tensors.append(tensor)
    graph = helper.make_graph([], "g", [], [], initializer=tensors)
    rebuilt = reconstruct_weights(helper.make_model(graph), seed=0)
    bf16, fp16 = rebuilt.graph.initializer
    assert len(bf16.raw_data) == 2 * 8 and len(fp16.raw_data) == 2 * 4
    values = (np.frombuffer(bf16.raw_data, "<u2").astype(np.uint32) << 16).view(np.float32)
    assert np.all(np.isfinite(values)) and np.count_nonzero(values) == 8


# ---- node insertion -------------------------------------------------------------------------------


def test_insert_node_on_an_edge_keeps_the_graph_output_name():
    model = onnx_models.identity()
    inserted = insert_node(model, op="LeakyRelu", inputs=["y"], outputs=["y"], name="leaky", attrs={"alpha": 0.5})
    nodes = inserted.graph.node
    assert [n.op_type for n in nodes] == ["Identity", "LeakyRelu"]
    assert list(nodes[0].output) == ["y_polygraphy_surgeon_insert_output"]
    assert list(nodes[1].input) == ["y_polygraphy_surgeon_insert_output"] and list(nodes[1].output) == ["y"]
    assert nodes[1].name == "leaky" and helper.get_attribute_value(nodes[1].attribute[0]) == 0.5
    assert [o.name for o in inserted.graph.output] == ["y"]
    x = np.array([[[[-2.0, 1.0], [3.0, -4.0]]]], np.float32)
    np.testing.assert_array_equal(_run(inserted, {"x": x})["y"], np.where(x > 0, x, 0.5 * x))


def test_insert_node_replaces_the_subgraph_between_inputs_and_outputs():
    model = onnx_models.multi_output()  # x -> Relu -> r; r -> Sigmoid -> s; x + s -> sum
    inserted = InsertNode(model, op="Neg", inputs=["r"], outputs=["s"])()
    ops = [n.op_type for n in inserted.graph.node]
    assert "Sigmoid" not in ops and ops.index("Neg") > ops.index("Relu")
    x = np.array([[-1.0, 2.0, 3.0], [4.0, -5.0, 0.5]], np.float32)
    out = _run(inserted, {"x": x})
    np.testing.assert_array_equal(out["sum"], x - np.maximum(x, 0))
    # A graph output read and rewritten: the node's result keeps the name, for the output and
    # the old consumers alike; the tensor the node reads is renamed.
    edge = insert_node(model, op="Neg", inputs=["r"], outputs=["r"])
    relu, sigmoid = (next(n for n in edge.graph.node if n.op_type == op) for op in ("Relu", "Sigmoid"))
    assert list(relu.output) == ["r_polygraphy_surgeon_insert_output"] and list(sigmoid.input) == ["r"]
    out = _run(edge, {"x": x})
    np.testing.assert_array_equal(out["r"], -np.maximum(x, 0))
    np.testing.assert_allclose(out["sum"], x + 1 / (1 + np.exp(np.maximum(x, 0))), rtol=1e-6)
    # An intermediate tensor read and rewritten: its consumers read the node's new tensor.
    mlp = insert_node(onnx_models.mlp(), op="Neg", inputs=["hr"], outputs=["hr"])
    fc2 = next(n for n in mlp.graph.node if n.name == "fc2")
    assert list(fc2.input) == ["hr_polygraphy_surgeon_insert_output", "w2"]


def test_insert_node_names_a_missing_tensor():
    with pytest.raises(PolyException, match="Tensor: nowhere does not exist in the model"):
        insert_node(onnx_models.identity(), op="Relu", inputs=["nowhere"], outputs=["y"])
