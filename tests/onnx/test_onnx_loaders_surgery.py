"""FoldConstants, ExtractSubgraph and the onnx-graphsurgeon conversions, on fixtures and real architectures.

Tolerances: folding and extraction change no arithmetic, so their outputs must match the
original's within rtol=1e-5 of each output's largest magnitude (measured: bit-identical).
"""

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import onnxruntime as ort
import pytest
from fixtures import onnx_models
from onnx import TensorProto, helper, numpy_helper

from poly.core import PolyException, TensorMetadata, constants
from poly.onnx.model.graph import GsFromOnnx, OnnxFromGs, gs_from_onnx, onnx_from_gs
from poly.onnx.model.io import OnnxFromPath, onnx_from_path
from poly.onnx.surgery.extract import ExtractSubgraph, extract_subgraph
from poly.onnx.surgery.fold import FoldConstants, count_nodes, default_fold_size_threshold, fold_constants
from poly.onnx.surgery.modify_outputs import modify_outputs

RTOL = 1e-5


def _run(model, feeds):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))


def _assert_close(expected, actual):
    assert expected.keys() <= actual.keys()
    for name, a in expected.items():
        b = actual[name]
        assert a.shape == b.shape, name
        scale = float(np.abs(a).max()) or 1.0
        np.testing.assert_allclose(b, a, rtol=RTOL, atol=RTOL * scale, err_msg=name)


def _light(name):
    return onnx_from_path(onnx_models.light_model_dir() / f"{name}.onnx")


def _image(seed=0):
    return np.random.default_rng(seed).random((1, 3, 224, 224), dtype=np.float32)


# -- FoldConstants ------------------------------------------------------------------------------


def test_fold_fixture_to_one_node():
    model = onnx_models.constant_foldable()
    folded = FoldConstants(model)()
    assert [n.op_type for n in folded.graph.node] == ["Add"]
    (constant,) = folded.graph.initializer
    np.testing.assert_array_equal(numpy_helper.to_array(constant), [[0.5, 1.0], [1.5, 2.0]])
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    _assert_close(_run(model, {"x": x}), _run(folded, {"x": x}))
    assert len(model.graph.node) == 3  # the given model is untouched
    assert folded.ir_version == model.ir_version and folded.opset_import == model.opset_import
    assert folded.producer_name == model.producer_name == "poly-tests"


def _shape_chain_model():
    """y = Reshape(x, concat(shape(x)[0:1] * 1, [-1])): foldable only once shapes are known."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 12])
    inits = [
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
        numpy_helper.from_array(np.array([1], np.int64), "one"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus_one"),
    ]
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Shape", ["r"], ["s"]),
        helper.make_node("Slice", ["s", "zero", "one"], ["s0"]),
        helper.make_node("Mul", ["s0", "one"], ["s1"]),
        helper.make_node("Concat", ["s1", "minus_one"], ["new_shape"], axis=0),
        helper.make_node("Reshape", ["r", "new_shape"], ["y"]),
    ]
    return onnx_models._model(helper.make_graph(nodes, "shape_chain", [x], [y], initializer=inits))


def test_fold_shapes_to_a_fixed_point():
    model = _shape_chain_model()
    folded = fold_constants(model)
    assert [n.op_type for n in folded.graph.node] == ["Relu", "Reshape"]
    new_shape = {t.name: numpy_helper.to_array(t) for t in folded.graph.initializer}["new_shape"]
    np.testing.assert_array_equal(new_shape, [2, -1])
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    _assert_close(_run(model, {"x": x}), _run(folded, {"x": x}))

    without_shapes = fold_constants(model, fold_shapes=False)
    assert "Shape" in [n.op_type for n in without_shapes.graph.node]
    one_pass = fold_constants(model, num_passes=1)
    assert count_nodes(one_pass) <= count_nodes(model)


def _expand_model(elements=1024):
    """x + Expand(0.5, [elements, elements]): folding would store a 4 MiB constant."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [elements, elements])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [elements, elements])
    inits = [
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
        numpy_helper.from_array(np.array([elements, elements], np.int64), "shape"),
    ]
    nodes = [
        helper.make_node("Expand", ["half", "shape"], ["big"]),
        helper.make_node("Add", ["x", "big"], ["y"]),
    ]
    return onnx_models._model(helper.make_graph(nodes, "expand", [x], [y], initializer=inits))


def test_fold_size_cap_prevents_bloat():
    model = _expand_model()
    assert default_fold_size_threshold(model) == 1 << 20
    capped = fold_constants(model, size_threshold="auto")
    assert [n.op_type for n in capped.graph.node] == ["Expand", "Add"]
    assert capped.ByteSize() < 2048

    uncapped = fold_constants(model, size_threshold=float("inf"))
    assert [n.op_type for n in uncapped.graph.node] == ["Add"]
    assert uncapped.ByteSize() > 4 * 1024 * 1024
    # Polygraphy's default: no cap
    assert [n.op_type for n in fold_constants(model).graph.node] == ["Add"]

    x = np.ones((1024, 1024), np.float32)
    expected = _run(model, {"x": x})
    _assert_close(expected, _run(capped, {"x": x}))
    _assert_close(expected, _run(uncapped, {"x": x}))


@pytest.mark.slow  # real architectures
@pytest.mark.parametrize(
    "name, inp, mark_types, max_bytes",
    [
        # Weights up to 1 MiB are materialized; larger ones (Gemm weights up to 150 MB) stay ConstantOfShape.
        ("light_bvlc_alexnet", "data_0", ["Conv", "Gemm", "Softmax"], 1 << 20),
        ("light_resnet50", "gpu_0/data_0", ["Conv", "Gemm", "Softmax"], 32 << 20),
        ("light_densenet121", "data_0", ["Conv", "GlobalAveragePool"], 32 << 20),
    ],
)
def test_fold_real_architectures(name, inp, mark_types, max_bytes):
    # Intermediate outputs make the comparison sensitive to every layer, not only the last.
    model = modify_outputs(_light(name), mark_types=mark_types)
    folded = FoldConstants(model, size_threshold="auto")()
    assert count_nodes(folded) < count_nodes(model)
    threshold = default_fold_size_threshold(model)
    assert all(numpy_helper.to_array(t).nbytes <= threshold for t in folded.graph.initializer)
    assert folded.ByteSize() <= max_bytes
    x = _image()
    _assert_close(_run(model, {inp: x}), _run(folded, {inp: x}))


def test_fold_error_ok(monkeypatch, capsys):
    from poly.onnx.surgery import fold

    def broken(self, *args, **kwargs):
        raise RuntimeError("fold exploded")

    monkeypatch.setattr(fold.FoldConstants, "_fold_pass", broken)
    model = onnx_models.constant_foldable()
    assert fold_constants(model).graph.node == model.graph.node
    assert "fold exploded" in capsys.readouterr().out
    with pytest.raises(PolyException, match="fold exploded"):
        fold_constants(model, error_ok=False)


# -- ExtractSubgraph ----------------------------------------------------------------------------


def test_extract_resnet50_residual_block():
    model = _light("light_resnet50")
    x = _image(1)
    everything = _run(modify_outputs(model, constants.MARK_ALL), {"gpu_0/data_0": x})

    # r25 -> three convolutions -> Sum with the skip connection -> r35.
    block = ExtractSubgraph(
        OnnxFromPath(str(onnx_models.light_model_dir() / "light_resnet50.onnx")),
        input_metadata=TensorMetadata().add("r25", np.float32, (1, 256, 56, 56)),
        output_metadata=TensorMetadata().add("r35", np.float32, None),
    )()
    assert [i.name for i in block.graph.input] == ["r25"]
    assert [o.name for o in block.graph.output] == ["r35"]
    assert [n.op_type for n in block.graph.node if n.op_type != "ConstantOfShape"] == [
        "Conv", "BatchNormalization", "Relu", "Conv", "BatchNormalization", "Relu", "Conv", "BatchNormalization", "Sum", "Relu",
    ]  # fmt: skip
    onnx.checker.check_model(block)
    _assert_close({"r35": everything["r35"]}, _run(block, {"r25": everything["r25"]}))


def test_extract_by_names_infers_metadata():
    model = _light("light_resnet50")
    sub = extract_subgraph(model, ["r25"], ["r28", "r31"])
    (inp,) = sub.graph.input
    assert inp.type.tensor_type.elem_type == TensorProto.FLOAT
    assert [d.dim_value for d in inp.type.tensor_type.shape.dim] == [1, 256, 56, 56]
    outputs = _run(sub, {"r25": np.ones((1, 256, 56, 56), np.float32)})
    assert outputs["r28"].shape == outputs["r31"].shape == (1, 64, 56, 56)


def test_extract_with_dynamic_batch_and_dict_metadata():
    model = onnx_models.mlp()
    sub = extract_subgraph(model, {"hr": ("float32", ("batch", 16))}, {"probs": (np.float32, None)})
    assert [n.op_type for n in sub.graph.node] == ["MatMul", "Softmax"]
    hr = np.random.default_rng(0).random((5, 16), dtype=np.float32)
    full = _run(modify_outputs(model, outputs=["hr", "probs"]), {"x": np.zeros((5, 8), np.float32)})
    assert _run(sub, {"hr": hr})["probs"].shape == (5, 4)
    _assert_close({"probs": full["probs"]}, _run(sub, {"hr": full["hr"]}))


def test_extract_from_graph_returns_graph():
    graph = gs_from_onnx(onnx_models.branches())
    sub = extract_subgraph(graph, {"a": (np.float32, (1, 4))}, {"a2": (np.float32, (1, 4))})
    assert isinstance(sub, gs.Graph)
    assert [n.op for n in sub.nodes] == ["Mul"]
    assert len(graph.nodes) == 5  # the given graph is untouched


def test_extract_errors_name_the_tensor():
    model = onnx_models.branches()
    with pytest.raises(PolyException, match="tensor 'nope' does not exist"):
        extract_subgraph(model, ["nope"], ["y"])
    # Cutting at a2 only leaves nb's producers reading x, which is no longer an input.
    with pytest.raises(PolyException, match=r"tensor 'x' is consumed by \['tanh \(Tanh\)'\] but is neither"):
        extract_subgraph(model, ["a2"], ["y"])


# -- onnx-graphsurgeon --------------------------------------------------------------------------


def test_gs_round_trip_keeps_model_fields():
    model = onnx_models.mlp()
    graph = GsFromOnnx(model)()
    assert [n.op for n in graph.nodes] == ["MatMul", "Add", "Relu", "MatMul", "Softmax"]
    back = OnnxFromGs(graph)()
    assert back.ir_version == model.ir_version
    assert back.opset_import == model.opset_import
    x = np.ones((2, 8), np.float32)
    _assert_close(_run(model, {"x": x}), _run(back, {"x": x}))
    assert onnx_from_gs(lambda: graph).graph.name == model.graph.name


def test_gs_export_of_ir3_model_stays_valid():
    model = _light("light_squeezenet")
    assert model.ir_version == 3
    graph = gs_from_onnx(model)
    graph.inputs = [t for t in graph.inputs if isinstance(t, gs.Variable)]
    exported = onnx_from_gs(graph)
    assert exported.ir_version == 4  # initializers need not be inputs from IR 4 on
    onnx.checker.check_model(exported)
