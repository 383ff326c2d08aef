"""
ONNX-Runtime and the reference runner on the real architectures shipped in the onnx wheel
(onnx/backend/test/data/light: ResNet-50, DenseNet-121, ... with generated weights).

Every intermediate activation is compared, not only the final softmax (which these weights make
nearly uniform): each model is run with all node outputs marked as graph outputs.

Tolerance, per tensor: max|ort - ref| <= 1e-4 * max|ref| + 1e-6. The weights of the light
models blow activations up to 1e31 in places, so the bound is relative to each tensor's peak.
Measured worst (onnxruntime 1.31, onnx 1.23): resnet50 1.1e-5, inception_v2 6.2e-6,
densenet121 4.3e-6, squeezenet 4.5e-6, vgg19 9.2e-6, shufflenet 1.8e-6, the others below 1e-6.
Final outputs are also checked against the outputs stored beside each model, with the
tolerances of onnx's own backend test (rtol 1e-3, 2e-3 for DenseNet; atol 1e-7).

The reference evaluator takes 1 to 16 s per model on a CPU core; the slowest models are marked
slow (deselect with -m "not slow"). The models run are those that bring an operator or an
attribute set (kernel, pads, strides, LRN constants, dropout ratio) the others lack: VGG-19 and
Inception-v2 brought only their 2x2 and padded 3x3 pools, 31 s of the reference evaluator for
two node kinds, which test_padded_pools_agree checks on their own.
"""

import numpy as np
import onnx
import pytest
from fixtures import onnx_models
from onnx import numpy_helper

from poly.onnx.runners.onnxrt_runner import OnnxrtRunner
from poly.onnx.runners.ref_ops import corrected_ops
from poly.onnx.runners.ref_runner import OnnxRefRunner
from poly.onnx.runners.session import SessionFromOnnx

REL_TOL = 1e-4
ATOL = 1e-6

# name -> rtol against the output stored beside the model (onnx backend test tolerances)
LIGHT_MODELS = {
    "resnet50": 1e-3,
    "densenet121": 2e-3,
    "squeezenet": 1e-3,
    "bvlc_alexnet": 1e-3,
    "shufflenet": 1e-3,
    "zfnet512": 1e-3,
    "inception_v1": 1e-3,
}
SLOW = {"inception_v1", "densenet121", "zfnet512"}  # 3 to 12 s each in the reference evaluator


def light_path(name):
    return onnx_models.light_model_dir() / f"light_{name}.onnx"


def mark_all_activations(model):
    """A copy of ``model`` whose every node output (weights generators excluded) is a graph output."""
    inferred = onnx.shape_inference.infer_shapes(model)
    value_infos = {vi.name: vi for vi in inferred.graph.value_info}
    marked = onnx.ModelProto()
    marked.CopyFrom(model)
    existing = {out.name for out in model.graph.output}
    for node in model.graph.node:
        if node.op_type in ("ConstantOfShape", "Constant"):
            continue
        for name in node.output:
            if name and name not in existing and name in value_infos:
                marked.graph.output.append(value_infos[name])
                existing.add(name)
    return marked


def onnx_backend_input(value_info):
    """The input onnx's backend test feeds these models (its stored outputs were made from it)."""
    shape = [dim.dim_value for dim in value_info.type.tensor_type.shape.dim]
    count = int(np.prod(shape))
    return (np.arange(count).reshape(shape) / count).astype(np.float32)


@pytest.mark.parametrize(
    "name",
    [pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name for name in LIGHT_MODELS],
)
def test_ort_and_reference_agree_on_every_activation(name):
    model = onnx.load(str(light_path(name)))
    marked = mark_all_activations(model)
    initializers = {init.name for init in model.graph.initializer}
    inputs = [inp for inp in model.graph.input if inp.name not in initializers]
    feed = {inp.name: onnx_backend_input(inp) for inp in inputs}

    with OnnxrtRunner(SessionFromOnnx(marked)) as runner:
        assert list(runner.get_input_metadata()) == list(feed)
        ort_out = runner.infer(feed)
    with OnnxRefRunner(marked) as runner:
        ref_out = runner.infer(feed)

    assert list(ort_out) == list(ref_out) == [out.name for out in marked.graph.output]
    assert len(ort_out) > 20, "marking every activation failed"
    failures = []
    errors = {}
    for tensor, ref in ref_out.items():
        ort = ort_out[tensor]
        assert ort.shape == ref.shape and ort.dtype == ref.dtype, (tensor, ort.shape, ref.shape)
        errors[tensor] = float(np.max(np.abs(ort.astype(np.float64) - ref))) if ref.size else 0.0
    softmax_inputs = {node.output[0]: node.input[0] for node in model.graph.node if node.op_type == "Softmax"}
    for tensor, ref in ref_out.items():
        err = errors[tensor]
        bound = REL_TOL * float(np.max(np.abs(ref))) + ATOL if ref.size else 0.0
        if tensor in softmax_inputs:
            # softmax moves no output by more than half the largest change of its logits; these
            # weights make logits near 1e10 whose float32 rounding (3e3 apart between the runners,
            # and between thread counts of NumPy's BLAS) decides between a uniform and a one-hot output
            bound = max(bound, 0.5 * errors.get(softmax_inputs[tensor], 0.0))
        if not err <= bound:
            failures.append(f"{tensor}: max abs diff {err:.3g} > {bound:.3g}")
    assert not failures, f"{name}: {len(failures)} tensors differ: {failures[:5]}"

    # The stored outputs of onnx's backend test are an oracle independent of both runners.
    output = model.graph.output[0].name
    stored = numpy_helper.to_array(onnx.load_tensor(str(light_path(name)).replace(".onnx", "_output_0.pb")))
    def matches_stored(out):
        return np.allclose(out[output], stored.reshape(out[output].shape), rtol=LIGHT_MODELS[name], atol=1e-7)

    if 0.5 * errors.get(softmax_inputs.get(output, ""), 0.0) >= 1.0:
        # logits so large that their rounding decides the softmax (SqueezeNet's, near 1e10): each
        # output is a distribution, and one of the runners rounds as the stored output was made
        for out in (ort_out, ref_out):
            assert np.all(out[output] >= 0) and abs(float(np.sum(out[output], dtype=np.float64)) - 1) < 1e-5
        assert matches_stored(ort_out) or matches_stored(ref_out)
    else:
        for out in (ort_out, ref_out):
            np.testing.assert_allclose(
                out[output], stored.reshape(out[output].shape), rtol=LIGHT_MODELS[name], atol=1e-7
            )


def test_light_models_need_the_reference_corrections():
    # Which onnx.reference defects each architecture would hit without poly.onnx.runners.ref_ops.
    def corrected(name):
        return sorted(
            cls.__name__ for cls in corrected_ops(onnx.load(str(light_path(name)), load_external_data=False))
        )

    assert corrected("resnet50") == ["BatchNormalization", "Softmax"]
    assert corrected("squeezenet") == ["Dropout", "Softmax"]
    assert corrected("bvlc_alexnet") == ["Dropout", "LRN", "Softmax"]
    assert "BatchNormalization" in corrected("densenet121")


def test_light_model_by_path_with_default_providers():
    # The plain Polygraphy way: a path into SessionFromOnnx, nothing marked.
    path = light_path("resnet50")
    with OnnxrtRunner(SessionFromOnnx(str(path))) as runner:
        meta = runner.get_input_metadata()
        assert list(meta) == ["gpu_0/data_0"] and list(meta["gpu_0/data_0"].shape) == [1, 3, 224, 224]
        out = runner.infer({"gpu_0/data_0": np.zeros((1, 3, 224, 224), np.float32)})
    assert list(out) == ["gpu_0/softmax_1"] and out["gpu_0/softmax_1"].shape == (1, 1000)


@pytest.mark.parametrize(
    ("op", "attrs"),
    [
        ("MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2]}),  # VGG-19's
        ("MaxPool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [1, 1]}),
        ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [1, 1]}),  # Inception-v2's
        ("AveragePool", {"kernel_shape": [7, 7], "strides": [1, 1]}),
    ],
)
def test_padded_pools_agree(op, attrs):
    """The pools VGG-19 and Inception-v2 add to the models above, on values whose padded border
    would change every average (count_include_pad is 0: the pads are not counted)."""
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 9, 9])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], "pool", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    feed = {"x": np.random.default_rng(0).uniform(1.0, 2.0, (1, 4, 9, 9)).astype(np.float32)}
    with OnnxrtRunner(SessionFromOnnx(model)) as runner:
        ort = runner.infer(feed)["y"]
    with OnnxRefRunner(model) as runner:
        ref = runner.infer(feed)["y"]
    assert ort.shape == ref.shape
    np.testing.assert_allclose(ort, ref, rtol=1e-6)
    if op == "AveragePool" and "pads" in attrs:  # a corner averages 4 values, not 4 of 9 with zeros
        assert ref[0, 0, 0, 0] == pytest.approx(feed["x"][0, 0, :2, :2].mean(), rel=1e-6)
