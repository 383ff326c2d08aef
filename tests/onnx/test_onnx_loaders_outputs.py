"""ModifyOutputs (names, wildcards, MARK_ALL, exclusions, copy) and InferShapes (with ONNX-Runtime's help)."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from fixtures import onnx_models
from onnx import TensorProto, helper, numpy_helper

from poly import constants
from poly.core import PolyException
from poly.onnx.model.io import OnnxFromPath, onnx_from_path
from poly.onnx.surgery.modify_outputs import ModifyOutputs, markable_tensor_names, modify_outputs
from poly.onnx.surgery.shapes import InferShapes, infer_shapes, untyped_tensors


def _names(values):
    return [v.name for v in values]


def _session(model):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _dims(value_info):
    return [
        d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
        for d in value_info.type.tensor_type.shape.dim
    ]


def _quirky_model():
    """Constant node, an unnamed optional output, and a tensor that is both output and consumed."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [
        helper.make_node(
            "Constant", [], ["c"], value=numpy_helper.from_array(np.full((2, 3), 0.5, np.float32))
        ),
        helper.make_node("Add", ["x", "c"], ["a"], name="add"),
        # Dropout's mask output is optional; "" marks it unused.
        helper.make_node("Dropout", ["a"], ["d", ""], name="dropout"),
        helper.make_node("Mul", ["d", "a"], ["y"], name="mul"),
    ]
    return onnx_models._model(helper.make_graph(nodes, "quirky", [x], [y]))


def _custom_op_model():
    """com.microsoft Gelu, which onnx cannot type, feeding standard ops."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = numpy_helper.from_array(np.ones((8, 4), np.float32), "w")
    nodes = [
        helper.make_node("Gelu", ["x"], ["g"], domain="com.microsoft", name="gelu"),
        helper.make_node("MatMul", ["g", "w"], ["m"], name="matmul"),
        helper.make_node("Relu", ["m"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(nodes, "custom", [x], [y], initializer=[w])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    model.ir_version = 10
    return model


# -- ModifyOutputs ------------------------------------------------------------------------------


def test_mark_named_outputs_with_inferred_types():
    model = onnx_models.branches()
    new = ModifyOutputs(model, outputs=["a2", "nb"])()
    assert _names(new.graph.output) == ["a2", "nb"]
    for output in new.graph.output:
        assert output.type.tensor_type.elem_type == TensorProto.FLOAT
        assert _dims(output) == [1, 4]
    x = np.arange(4, dtype=np.float32).reshape(1, 4) - 2
    a2, nb = _session(new).run(None, {"x": x})
    np.testing.assert_allclose(a2, np.maximum(x, 0) * 2)
    np.testing.assert_allclose(nb, -np.tanh(x), rtol=1e-6)


def test_copy_default_and_in_place():
    model = onnx_models.multi_output()
    copied = modify_outputs(model, outputs=["s"])
    assert _names(model.graph.output) == ["sum", "r"]  # untouched by default
    assert _names(copied.graph.output) == ["s"]

    in_place = ModifyOutputs(model, outputs=["s"], copy=False)()
    assert in_place is model
    assert _names(model.graph.output) == ["s"]


def test_mark_all_skips_what_cannot_be_an_output():
    model = _quirky_model()
    marked = modify_outputs(model, constants.MARK_ALL)
    # Not the Constant's output, not the unnamed Dropout mask; every other node output, once.
    assert _names(marked.graph.output) == ["a", "d", "y"]
    assert markable_tensor_names(model) == ["a", "d", "y"]
    outputs = _session(marked).run(None, {"x": np.ones((2, 3), np.float32)})
    np.testing.assert_allclose(outputs[2], np.full((2, 3), 2.25, np.float32))


def test_mark_all_excludes_subgraph_tensors():
    model = onnx_models.control_flow()
    marked = modify_outputs(model, constants.MARK_ALL)
    assert _names(marked.graph.output) == ["y"]  # then_out/else_out live in the If's branches
    (y,) = _session(marked).run(None, {"x": np.ones(3, np.float32), "cond": np.array(False)})
    np.testing.assert_allclose(y, [3, 3, 3])


def test_mark_all_keeps_node_order_and_marks_old_outputs_once():
    model = onnx_models.multi_output()
    marked = modify_outputs(model, constants.MARK_ALL)
    assert _names(marked.graph.output) == ["r", "s", "sum"]
    assert all(
        o.type.tensor_type.elem_type == TensorProto.FLOAT and _dims(o) == [2, 3] for o in marked.graph.output
    )
    # Value info of tensors that became outputs is not duplicated.
    assert not {vi.name for vi in marked.graph.value_info} & {"r", "s", "sum"}


def test_exclude_outputs_with_mark_all_and_wildcards():
    model = onnx_models.branches()
    marked = modify_outputs(model, constants.MARK_ALL, exclude_outputs=["a*", "y"])
    assert _names(marked.graph.output) == ["b", "nb"]
    only_excluded = modify_outputs(model, exclude_outputs=["nothing_*"], outputs=["a", "b"])
    assert _names(only_excluded.graph.output) == ["a", "b"]
    wildcard = modify_outputs(model, outputs=["*b"])
    assert _names(wildcard.graph.output) == ["b", "nb"]


def test_exclude_outputs_only():
    model = onnx_models.multi_output()
    new = modify_outputs(model, exclude_outputs=["r"])
    assert _names(new.graph.output) == ["sum"]
    # The former output keeps its type as value_info.
    assert "r" in {vi.name for vi in new.graph.value_info}


def test_mark_types():
    model = onnx_models.branches()
    new = modify_outputs(model, mark_types=["relu", "TANH"])
    assert _names(new.graph.output) == ["a", "b"]


def test_unknown_names_are_one_clear_error():
    model = onnx_models.branches()
    with pytest.raises(PolyException, match=r"no tensor named \['a3'\].*did you mean"):
        modify_outputs(model, outputs=["a3"])
    with pytest.raises(PolyException, match="without any output"):
        modify_outputs(model, exclude_outputs=["y"])
    with pytest.raises(PolyException, match=r"no tensor named \['zzz'\]"):
        modify_outputs(model, exclude_outputs=["zzz"])


def test_mark_all_on_resnet50_runs_in_onnxruntime():
    model = onnx_from_path(onnx_models.light_model_dir() / "light_resnet50.onnx")
    marked = ModifyOutputs(
        OnnxFromPath(str(onnx_models.light_model_dir() / "light_resnet50.onnx")), outputs=constants.MARK_ALL
    )()

    every_tensor = [o for node in model.graph.node for o in node.output if o and node.op_type != "Constant"]
    assert len(every_tensor) == 415
    assert _names(marked.graph.output) == every_tensor
    assert all(o.type.tensor_type.elem_type == TensorProto.FLOAT for o in marked.graph.output)

    session = _session(marked)
    assert [o.name for o in session.get_outputs()] == every_tensor
    x = np.random.default_rng(0).random((1, 3, 224, 224), dtype=np.float32)
    outputs = session.run(None, {"gpu_0/data_0": x})
    for value_info, array in zip(marked.graph.output, outputs, strict=True):
        assert list(array.shape) == _dims(value_info), value_info.name
    # The marked model computes what the original does.
    (reference,) = _session(model).run(None, {"gpu_0/data_0": x})
    np.testing.assert_array_equal(outputs[-1], reference)


@pytest.mark.parametrize("name", ["light_squeezenet", "light_inception_v1", "light_shufflenet"])
def test_mark_all_on_other_architectures(name):
    marked = modify_outputs(
        onnx_from_path(onnx_models.light_model_dir() / f"{name}.onnx"), constants.MARK_ALL
    )
    session = _session(marked)
    feed = {i.name: np.ones([d or 1 for d in i.shape], np.float32) for i in session.get_inputs()}
    outputs = session.run(None, feed)
    assert len(outputs) == len(marked.graph.output) == len(markable_tensor_names(marked))
    unshaped = []
    for value_info, array in zip(marked.graph.output, outputs, strict=True):
        assert value_info.type.tensor_type.elem_type == TensorProto.FLOAT
        if value_info.type.tensor_type.HasField("shape"):
            assert list(array.shape) == _dims(value_info), value_info.name
        else:
            unshaped.append(value_info.name)
    # Only the masks of opset-9 Dropouts have no shape that onnx or ONNX-Runtime can infer.
    masks = {n.output[1] for n in marked.graph.node if n.op_type == "Dropout" and len(n.output) > 1}
    assert set(unshaped) <= masks


# -- InferShapes --------------------------------------------------------------------------------


def test_infer_shapes_fixture():
    model = onnx_models.mlp()
    inferred = InferShapes(model)()
    types = {vi.name: _dims(vi) for vi in inferred.graph.value_info}
    assert types == {"h": ["batch", 16], "hb": ["batch", 16], "hr": ["batch", 16], "logits": ["batch", 4]}
    assert not untyped_tensors(inferred)


def test_onnxruntime_completes_what_onnx_cannot_infer():
    model = _custom_op_model()
    onnx_only = infer_shapes(model, allow_onnxruntime=False)
    assert untyped_tensors(onnx_only) == ["g", "m", "y"]

    inferred = infer_shapes(model)
    assert not untyped_tensors(inferred)
    types = {
        vi.name: (vi.type.tensor_type.elem_type, _dims(vi))
        for vi in [*inferred.graph.value_info, *inferred.graph.output]
    }
    assert types["g"] == (TensorProto.FLOAT, ["N", 8])
    assert types["m"] == (TensorProto.FLOAT, ["N", 4])
    assert types["y"] == (TensorProto.FLOAT, ["N", 4])

    # MARK_ALL uses these types too.
    marked = modify_outputs(model, constants.MARK_ALL)
    assert [(o.name, o.type.tensor_type.elem_type) for o in marked.graph.output] == [
        ("g", TensorProto.FLOAT),
        ("m", TensorProto.FLOAT),
        ("y", TensorProto.FLOAT),
    ]


def test_large_model_path_goes_through_files(capsys):
    # A threshold of 0 sends any model down the path used for models over 2 GiB.
    model = _custom_op_model()
    result = InferShapes(model, save_to_disk_threshold_bytes=0)()
    assert "through files" in capsys.readouterr().out
    assert result is model  # shapes added in place rather than to a copy of the weights
    assert not untyped_tensors(model)
    assert {vi.name for vi in model.graph.value_info} >= {"g", "m"}
    np.testing.assert_array_equal(
        numpy_helper.to_array(model.graph.initializer[0]), np.ones((8, 4), np.float32)
    )

    big = onnx_from_path(onnx_models.light_model_dir() / "light_resnet50.onnx")
    expected = {vi.name: _dims(vi) for vi in infer_shapes(big).graph.value_info}
    infer_shapes(big, save_to_disk_threshold_bytes=0)
    assert {vi.name: _dims(vi) for vi in big.graph.value_info} == expected


def test_infer_shapes_from_path(tmp_path):
    path = onnx_models.save(onnx_models.mlp(), tmp_path / "mlp.onnx")
    inferred = infer_shapes(str(path))
    assert isinstance(inferred, onnx.ModelProto)
    assert {vi.name for vi in inferred.graph.value_info} == {"h", "hb", "hr", "logits"}


def test_infer_shapes_error_ok(monkeypatch, capsys):
    from poly.onnx.surgery import shapes

    def broken(*args, **kwargs):
        raise RuntimeError("inference exploded")

    monkeypatch.setattr(shapes.shape_inference, "infer_shapes", broken)
    model = onnx_models.mlp()
    result = infer_shapes(model, allow_onnxruntime=False)
    assert result == model
    assert "inference exploded" in capsys.readouterr().out
    with pytest.raises(PolyException, match="inference exploded"):
        infer_shapes(model, error_ok=False)


# -- the Polygraphy guide's snippets (seed 000), with poly names --------------------------------


def test_seed_mark_all_snippets(tmp_path):
    from poly import constants as poly_constants
    from poly.backend.onnx import FoldConstants, InferShapes, ModifyOutputs, OnnxFromPath

    model_path = str(onnx_models.save(onnx_models.branches(), tmp_path / "your_model.onnx"))

    def load_onnx_with_all_outputs(model_path):
        onnx_loader = OnnxFromPath(model_path)
        modify_outputs_loader = ModifyOutputs(onnx_loader, outputs=poly_constants.MARK_ALL)
        model = modify_outputs_loader()
        return model

    def load_onnx_with_filtered_outputs(model_path, exclude_outputs=None):
        onnx_loader = OnnxFromPath(model_path)
        modify_outputs_loader = ModifyOutputs(
            onnx_loader, outputs=poly_constants.MARK_ALL, exclude_outputs=exclude_outputs
        )
        model = modify_outputs_loader()
        return model

    def create_onnx_processing_pipeline(model_path):
        onnx_loader = OnnxFromPath(model_path)
        shape_infer_loader = InferShapes(onnx_loader)
        fold_constants_loader = FoldConstants(shape_infer_loader)
        all_outputs_loader = ModifyOutputs(fold_constants_loader, outputs=poly_constants.MARK_ALL)
        return all_outputs_loader()

    def safe_load_with_all_outputs(model_path):
        try:
            onnx_loader = OnnxFromPath(model_path)
            modify_outputs = ModifyOutputs(onnx_loader, outputs=poly_constants.MARK_ALL)
            model = modify_outputs()
            return model
        except Exception as e:
            print(f"加载模型失败: {e}")
            return None

    assert poly_constants.MARK_ALL == "mark-all"
    assert _names(load_onnx_with_all_outputs(model_path).graph.output) == ["a", "a2", "b", "nb", "y"]
    filtered = load_onnx_with_filtered_outputs(model_path, exclude_outputs=["a2", "nb"])
    assert _names(filtered.graph.output) == ["a", "b", "y"]
    assert _names(create_onnx_processing_pipeline(model_path).graph.output) == ["a", "a2", "b", "nb", "y"]
    in_place = ModifyOutputs(OnnxFromPath(model_path), outputs=poly_constants.MARK_ALL, copy=False)()
    assert len(in_place.graph.output) == 5
    assert safe_load_with_all_outputs(str(tmp_path / "missing.onnx")) is None


def test_seed_equivalent_python_code_onnxrt_part(tmp_path):
    from poly import constants as poly_constants
    from poly.backend.onnx import ModifyOutputs, OnnxFromPath
    from poly.backend.onnxrt import OnnxrtRunner, SessionFromOnnx

    model_path = str(onnx_models.save(onnx_models.dynamic_identity(), tmp_path / "dynamic_identity.onnx"))
    onnx_loader = OnnxFromPath(model_path)
    onnx_all_outputs = ModifyOutputs(onnx_loader, outputs=poly_constants.MARK_ALL)
    onnxrt_runner = OnnxrtRunner(SessionFromOnnx(onnx_all_outputs))
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    with onnxrt_runner:
        outputs = onnxrt_runner.infer({"X": x})
    np.testing.assert_array_equal(outputs["Y"], x)


def test_seed_node_count_snippet(tmp_path):
    from poly.backend.onnx import gs_from_onnx

    path = onnx_models.save(onnx_models.branches(), tmp_path / "model.onnx")
    model = onnx.load(str(path))
    num_nodes = len(model.graph.node)
    graph = gs_from_onnx(model)
    num_gs_nodes = len(graph.nodes)
    assert num_nodes == num_gs_nodes == 5
