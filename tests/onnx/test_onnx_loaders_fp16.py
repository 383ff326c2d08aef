"""ConvertToFp16 on fixtures and real architectures.

Tolerance: every output of the converted model is within 5e-3 of the largest magnitude of
the same output of the float32 model. Measured: fixtures <= 6e-4 (onnx.reference); a ShuffleNet
stage computed entirely in float16 (onnx.reference) 1.1e-3; every layer of whole Inception-v2
and ShuffleNet on ONNX-Runtime's CPU provider <= 2.2e-3 (DenseNet-121: 1.4e-3). The light
ResNet-50's activations reach 1e19 and overflow float16: it is not used here.
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from fixtures import onnx_models
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from poly.core import constants
from poly.onnx.model.io import onnx_from_path
from poly.onnx.surgery.extract import extract_subgraph
from poly.onnx.surgery.fp16 import (
    DEFAULT_FP16_OP_BLOCK_LIST,
    ConvertToFp16,
    convert_to_fp16,
    onnxruntime_fp16_op_block_list,
)
from poly.onnx.surgery.modify_outputs import modify_outputs

TOL = 5e-3


def _assert_close(expected, actual):
    assert len(expected) == len(actual)
    for name, a in expected.items():
        b = actual[name]
        assert b.dtype == a.dtype and b.shape == a.shape, name
        if not np.issubdtype(a.dtype, np.floating):
            np.testing.assert_array_equal(b, a, err_msg=name)
            continue
        scale = float(np.abs(a).max()) or 1.0
        error = float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max())
        assert error <= TOL * scale, f"{name}: {error} > {TOL} * {scale}"


def _reference(model, feeds):
    names = [o.name for o in model.graph.output]
    return dict(zip(names, ReferenceEvaluator(model).run(None, feeds), strict=True))


def _ort(model, feeds):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))


def _elem_types(values):
    return [v.type.tensor_type.elem_type for v in values]


def _feeds(model, rng):
    feeds = {}
    for value_info in model.graph.input:
        tensor_type = value_info.type.tensor_type
        shape = [d.dim_value or 3 for d in tensor_type.shape.dim]
        if tensor_type.elem_type == TensorProto.BOOL:
            feeds[value_info.name] = np.array(True)
        else:
            dtype = helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)
            feeds[value_info.name] = (rng.standard_normal(shape) * 2).astype(dtype)
    return feeds


@pytest.mark.parametrize(
    "name",
    ["mlp", "branches", "multi_output", "constant_foldable", "identity", "dynamic_identity", "control_flow"],
)
def test_fixtures_keep_float32_io(name):
    model = onnx_models.ALL[name]()
    converted = ConvertToFp16(model)()
    onnx.checker.check_model(converted, full_check=True)
    assert _elem_types(converted.graph.input) == _elem_types(model.graph.input)
    assert _elem_types(converted.graph.output) == _elem_types(model.graph.output)
    if name != "control_flow":  # If bodies stay float32
        assert TensorProto.FLOAT16 in {vi.type.tensor_type.elem_type for vi in converted.graph.value_info}
    assert all(t.data_type == TensorProto.FLOAT16 for t in converted.graph.initializer)
    feeds = _feeds(model, np.random.default_rng(0))
    _assert_close(_reference(model, feeds), _reference(converted, feeds))
    # The given model is untouched.
    assert model == onnx_models.ALL[name]()


def test_mlp_structure_and_float16_io():
    model = onnx_models.mlp()
    converted = convert_to_fp16(model)
    assert [n.op_type for n in converted.graph.node] == [
        "Cast",
        "MatMul",
        "Add",
        "Relu",
        "MatMul",
        "Softmax",
        "Cast",
    ]

    half_io = convert_to_fp16(model, keep_io_types=False)
    assert [n.op_type for n in half_io.graph.node] == ["MatMul", "Add", "Relu", "MatMul", "Softmax"]
    assert _elem_types(half_io.graph.input) == _elem_types(half_io.graph.output) == [TensorProto.FLOAT16]
    x = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    (probs,) = ReferenceEvaluator(half_io).run(None, {"x": x.astype(np.float16)})
    assert probs.dtype == np.float16
    _assert_close(_reference(model, {"x": x}), {"probs": probs.astype(np.float32)})


def test_block_lists_keep_float32():
    model = onnx_models.mlp()
    converted = convert_to_fp16(model, op_block_list=["Relu"], node_block_list=["softmax"])
    ops = [n.op_type for n in converted.graph.node]
    assert ops == ["Cast", "MatMul", "Add", "Cast", "Relu", "Cast", "MatMul", "Cast", "Softmax"]
    relu = next(n for n in converted.graph.node if n.op_type == "Relu")
    types = {vi.name: vi.type.tensor_type.elem_type for vi in converted.graph.value_info}
    assert types[relu.input[0]] == types[relu.output[0]] == TensorProto.FLOAT
    x = np.random.default_rng(2).standard_normal((3, 8)).astype(np.float32)
    _assert_close(_reference(model, {"x": x}), _reference(converted, {"x": x}))
    assert "Resize" in DEFAULT_FP16_OP_BLOCK_LIST and "Range" in DEFAULT_FP16_OP_BLOCK_LIST


def test_shape_computations_stay_float32():
    # y = Reshape(Concat(x, x), Cast(Cast(Shape(x), float) * [1, 2], int64)): in float16, 4097 * 2
    # would become 8192 and the Reshape would fail.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4097])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8194])
    scale = numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "scale")
    nodes = [
        helper.make_node("Concat", ["x", "x"], ["z"], axis=1),
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["sf", "scale"], ["sf2"]),
        helper.make_node("Cast", ["sf2"], ["new_shape"], to=TensorProto.INT64),
        helper.make_node("Reshape", ["z", "new_shape"], ["y"]),
    ]
    model = onnx_models._model(helper.make_graph(nodes, "shape_math", [x], [y], initializer=[scale]))
    converted = convert_to_fp16(model)
    cast_to = [
        next(a.i for a in n.attribute if a.name == "to") for n in converted.graph.node if n.op_type == "Cast"
    ]
    assert TensorProto.FLOAT in cast_to and TensorProto.INT64 in cast_to
    assert {t.name: t.data_type for t in converted.graph.initializer}["scale"] == TensorProto.FLOAT
    data = np.random.default_rng(3).standard_normal((1, 4097)).astype(np.float32)
    _assert_close(_ort(model, {"x": data}), _ort(converted, {"x": data}))


def test_subgraph_reading_a_converted_tensor():
    # r = Relu(x) becomes float16; the If branches read r from the outer graph and stay float32.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    one = helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array(1.5, np.float32)))
    then_g = helper.make_graph(
        [one, helper.make_node("Add", ["r", "one"], ["then_out"])],
        "then", [], [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [3])],
    )  # fmt: skip
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["r"], ["else_out"])],
        "else", [], [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [3])],
    )  # fmt: skip
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("If", ["cond"], ["i"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Mul", ["i", "r"], ["y"]),
    ]
    model = onnx_models._model(helper.make_graph(nodes, "if_reads_r", [x, cond], [y]))
    converted = convert_to_fp16(model)
    onnx.checker.check_model(converted, full_check=True)
    if_node = next(n for n in converted.graph.node if n.op_type == "If")
    then_add = next(a.g for a in if_node.attribute if a.name == "then_branch").node[1]
    assert then_add.input[0] != "r"  # reads a float32 Cast of r instead
    for flag in (True, False):
        feeds = {"x": np.array([-1.0, 0.5, 2.0], np.float32), "cond": np.array(flag)}
        _assert_close(_reference(model, feeds), _reference(converted, feeds))


def test_shufflenet_stage_in_float16():
    # A real stage of ShuffleNet (grouped and depthwise convolutions, batch norm, channel shuffle,
    # pooling, concat, residual sum), every layer's output compared, all arithmetic in float16.
    model = onnx_from_path(onnx_models.light_model_dir() / "light_shufflenet.onnx")
    stage = modify_outputs(extract_subgraph(model, ["r3"], ["r28"]), constants.MARK_ALL)
    converted = convert_to_fp16(stage)
    compute = [n for n in converted.graph.node if n.op_type not in ("Cast", "ConstantOfShape")]
    assert len(compute) == 25
    x = np.random.default_rng(4).random((1, 24, 56, 56), dtype=np.float32)
    expected = _reference(stage, {"r3": x})
    actual = _reference(converted, {"r3": x})
    _assert_close(expected, actual)


@pytest.mark.slow  # real architectures
@pytest.mark.parametrize(
    "name, inp, ort_block_list",
    [
        ("light_inception_v2", "data_0", False),
        ("light_shufflenet", "gpu_0/data_0", False),
        ("light_shufflenet", "gpu_0/data_0", True),
    ],
)
def test_real_architectures_on_onnxruntime(name, inp, ort_block_list):
    # Every layer's output is compared. ONNX-Runtime's CPU provider computes ops it has no float16
    # kernel for in float32 between Casts it inserts; the rounding of weights and of tensors
    # between layers to float16 is what is measured.
    model = modify_outputs(onnx_from_path(onnx_models.light_model_dir() / f"{name}.onnx"), constants.MARK_ALL)
    block_list = onnxruntime_fp16_op_block_list() if ort_block_list else None
    converted = convert_to_fp16(model, op_block_list=block_list)
    onnx.checker.check_model(converted)
    # Weights are produced in float16.
    constant_of_shape = [n for n in converted.graph.node if n.op_type == "ConstantOfShape"]
    assert constant_of_shape and all(
        n.attribute[0].t.data_type == TensorProto.FLOAT16 for n in constant_of_shape
    )
    convs = [n for n in converted.graph.node if n.op_type == "Conv"]
    half = {
        vi.name for vi in converted.graph.value_info if vi.type.tensor_type.elem_type == TensorProto.FLOAT16
    }
    assert all((n.output[0] in half) != ort_block_list for n in convs)
    x = np.random.default_rng(5).random((1, 3, 224, 224), dtype=np.float32)
    _assert_close(_ort(model, {inp: x}), _ort(converted, {inp: x}))


def test_onnxruntime_block_list():
    block_list = onnxruntime_fp16_op_block_list()
    assert {"Conv", "Relu", "MatMul"} <= set(block_list) and "Concat" not in block_list
    assert set(DEFAULT_FP16_OP_BLOCK_LIST) <= set(block_list)


def test_seed_identity_fp16_conversion(tmp_path):
    # seed 004: `polygraphy convert --fp-to-fp16 -o identity_fp16.onnx identity.onnx`, inspected as
    # 3 nodes with float32 input and output, then compared on ONNX-Runtime with atol=rtol=1e-3.
    from poly.backend.onnx import ConvertToFp16 as SeedConvertToFp16
    from poly.backend.onnx import OnnxFromPath, SaveOnnx

    path = onnx_models.save(onnx_models.identity(), tmp_path / "identity.onnx")
    SaveOnnx(SeedConvertToFp16(OnnxFromPath(str(path))), str(tmp_path / "identity_fp16.onnx"))()
    converted = onnx.load(str(tmp_path / "identity_fp16.onnx"))
    assert [n.op_type for n in converted.graph.node] == ["Cast", "Identity", "Cast"]
    assert _elem_types(converted.graph.input) == _elem_types(converted.graph.output) == [TensorProto.FLOAT]
    x = np.random.default_rng(6).random((1, 1, 2, 2), dtype=np.float32)
    np.testing.assert_allclose(_ort(converted, {"x": x})["y"], x, atol=1e-3, rtol=1e-3)
