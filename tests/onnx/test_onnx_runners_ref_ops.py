"""
The operators OnnxRefRunner replaces in onnx.reference (poly.onnx.runners.ref_ops): each against the
ONNX specification written out in NumPy here, and against ONNX-Runtime.
"""

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from poly.onnx.runners.onnxrt_runner import OnnxrtRunner
from poly.onnx.runners.ref_ops import corrected_ops
from poly.onnx.runners.ref_runner import OnnxRefRunner
from poly.onnx.runners.session import SessionFromOnnx


def single_node_model(op_type, inputs, shape, opset, initializers=(), n_outputs=1, **attrs):
    outputs = ["y"] + [f"extra{i}" for i in range(1, n_outputs)]
    node = helper.make_node(op_type, inputs, outputs, **attrs)
    graph = helper.make_graph(
        [node],
        op_type.lower(),
        [helper.make_tensor_value_info(inputs[0], TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
        initializer=list(initializers),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model


def run_both(model, x):
    with OnnxrtRunner(SessionFromOnnx(model)) as runner:
        ort_y = runner.infer({"x": x})["y"]
    with OnnxRefRunner(model) as runner:
        ref_y = runner.infer({"x": x})["y"]
    return ort_y, ref_y


def lrn_spec(x, size, alpha, beta, bias):
    channels = x.shape[1]
    square_sum = np.zeros_like(x, dtype=np.float64)
    for c in range(channels):
        lo = max(0, c - math.floor((size - 1) / 2))
        hi = min(channels - 1, c + math.ceil((size - 1) / 2))
        square_sum[:, c] = np.sum(x[:, lo : hi + 1].astype(np.float64) ** 2, axis=1)
    return x / (bias + alpha / size * square_sum) ** beta


@pytest.mark.parametrize("opset", [9, 13, 17])
@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_lrn(opset, size):
    x = np.random.default_rng(size).standard_normal((2, 7, 3, 4)).astype(np.float32) * 3
    model = single_node_model("LRN", ["x"], x.shape, opset, size=size, alpha=0.1, beta=0.75, bias=1.5)
    expected = lrn_spec(x, size, 0.1, 0.75, 1.5)
    if size % 2 == 0:
        # ONNX-Runtime implements odd sizes only; the specification allows any.
        with OnnxRefRunner(model) as runner:
            np.testing.assert_allclose(runner.infer({"x": x})["y"], expected, rtol=1e-6, atol=1e-6)
        return
    ort_y, ref_y = run_both(model, x)
    np.testing.assert_allclose(ref_y, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ort_y, expected, rtol=1e-5, atol=1e-6)


def coerced_spec(x, axis, func):
    axis = axis % x.ndim
    flat = x.astype(np.float64).reshape(int(np.prod(x.shape[:axis])), -1)
    return func(flat).reshape(x.shape)


def softmax_rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def hardmax_rows(x):
    y = np.zeros_like(x)
    y[np.arange(x.shape[0]), x.argmax(axis=1)] = 1
    return y


LEGACY = {
    "Softmax": softmax_rows,
    "LogSoftmax": lambda x: np.log(softmax_rows(x)),
    "Hardmax": hardmax_rows,
}


@pytest.mark.parametrize("op_type", list(LEGACY))
@pytest.mark.parametrize("opset", [9, 11])
@pytest.mark.parametrize("axis", [None, 0, 2, -1])
def test_legacy_softmax_family_coerces_to_2d(op_type, opset, axis):
    x = np.random.default_rng(3).standard_normal((2, 3, 4, 5)).astype(np.float32)
    attrs = {} if axis is None else {"axis": axis}
    model = single_node_model(op_type, ["x"], x.shape, opset, **attrs)
    ort_y, ref_y = run_both(model, x)
    expected = coerced_spec(x, 1 if axis is None else axis, LEGACY[op_type])
    np.testing.assert_allclose(ref_y, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ort_y, expected, rtol=1e-5, atol=1e-6)


def test_squeezenet_shaped_softmax():
    # (1, 1000, 1, 1) at opset 9: onnx.reference alone gives all ones; the specification 1/1000.
    x = np.zeros((1, 1000, 1, 1), np.float32)
    ort_y, ref_y = run_both(single_node_model("Softmax", ["x"], x.shape, 9), x)
    np.testing.assert_allclose(ref_y, 1e-3, rtol=1e-6)
    np.testing.assert_allclose(ort_y, 1e-3, rtol=1e-6)


@pytest.mark.parametrize("op_type", list(LEGACY))
def test_opset_13_softmax_family_is_per_axis(op_type):
    x = np.random.default_rng(4).standard_normal((2, 3, 4)).astype(np.float32)
    model = single_node_model(op_type, ["x"], x.shape, 13, axis=1)
    ort_y, ref_y = run_both(model, x)
    moved = np.moveaxis(x, 1, -1).reshape(-1, 3).astype(np.float64)
    expected = np.moveaxis(LEGACY[op_type](moved).reshape(2, 4, 3), -1, 1)
    np.testing.assert_allclose(ref_y, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ort_y, expected, rtol=1e-5, atol=1e-6)
    assert not any(cls.__name__ == op_type for cls in corrected_ops(model))


def bn_initializers(channels, seed=0):
    rng = np.random.default_rng(seed)
    values = {
        "scale": rng.uniform(0.5, 2, channels),
        "bias": rng.standard_normal(channels),
        "mean": rng.standard_normal(channels),
        "var": rng.uniform(0.1, 3, channels),
    }
    return values, [onnx.numpy_helper.from_array(v.astype(np.float32), k) for k, v in values.items()]


@pytest.mark.parametrize("opset", [7, 9, 13, 15])
def test_batchnorm_inference_uses_running_statistics(opset):
    x = np.random.default_rng(5).standard_normal((2, 4, 3, 3)).astype(np.float32) * 2 + 1
    values, inits = bn_initializers(4)
    model = single_node_model(
        "BatchNormalization",
        ["x", "scale", "bias", "mean", "var"],
        x.shape,
        opset,
        initializers=inits,
        epsilon=1e-3,
    )
    ort_y, ref_y = run_both(model, x)
    shape = (1, -1, 1, 1)
    expected = (x - values["mean"].reshape(shape)) / np.sqrt(values["var"].reshape(shape) + 1e-3)
    expected = expected * values["scale"].reshape(shape) + values["bias"].reshape(shape)
    np.testing.assert_allclose(ref_y, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ort_y, expected, rtol=1e-5, atol=1e-5)


def test_batchnorm_training_mode_is_left_to_onnx_reference():
    _, inits = bn_initializers(4)
    model = single_node_model(
        "BatchNormalization",
        ["x", "scale", "bias", "mean", "var"],
        (2, 4, 3, 3),
        9,
        initializers=inits,
        n_outputs=3,
    )
    assert [cls.__name__ for cls in corrected_ops(model)] == []


def test_corrections_are_only_for_operators_the_model_uses():
    model = single_node_model("Relu", ["x"], (2, 3), 9)
    assert corrected_ops(model) == []
    model = single_node_model("Softmax", ["x"], (2, 3), 9)
    assert [cls.__name__ for cls in corrected_ops(model)] == ["Softmax"]


def test_legacy_dropout_mask_matches_onnxruntime():
    """Dropout below opset 10 has a mask of the input's type (ONNX-Runtime leaves it zero);
    onnx.reference returns a bool mask there, which failed mark-all comparisons on SqueezeNet."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, [2, 3])]
    graph = helper.make_graph([helper.make_node("Dropout", ["x"], ["y", "mask"], ratio=0.5)], "dropout9", [x], outs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 4
    onnx.checker.check_model(model)
    feed = {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}
    with OnnxrtRunner(SessionFromOnnx(model.SerializeToString())) as ort, OnnxRefRunner(model) as ref:
        got_ort, got_ref = ort.infer(feed), ref.infer(feed)
    for name in ("y", "mask"):
        assert got_ref[name].dtype == got_ort[name].dtype == np.float32
        np.testing.assert_array_equal(got_ref[name], got_ort[name])
    np.testing.assert_array_equal(got_ref["y"], feed["x"])
