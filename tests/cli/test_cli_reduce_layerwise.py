"""The layer-wise `debug reduce` workflow of Polygraphy's example (examples/cli/debug/
02_reducing_failing_onnx_models) with ONNX-Runtime as the backend under test: golden layer-wise
outputs from a good model, `data to-input`, then bisect and linear reductions of a model with a
planted wrong node against them; and the data loader flags of `debug reduce` feeding its
fallback shape inference."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from fixtures import debug_models
from fixtures.cli_helpers import POLY, run_cli
from onnx import TensorProto, helper, numpy_helper

from poly.compare import save_inputs

DEBUG_ONNX = "polygraphy_debug.onnx"


def _vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, list(shape))


def _model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "layerwise", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


def _two_input_model(scale_op="Mul"):
    """x1 -> Relu -> {scale_op}(a) -> Add(b) -> Sigmoid -> Add(Abs(x0)) -> Y; `scale` is the
    node the broken model changes (Mul -> Div)."""
    shape = (1, 3, 4, 4)
    a = numpy_helper.from_array(np.full(shape, 3.0, np.float32), "a")
    b = numpy_helper.from_array(np.full(shape, 0.5, np.float32), "b")
    nodes = [
        helper.make_node("Relu", ["x1"], ["relu_out"], name="relu"),
        helper.make_node("Abs", ["x0"], ["abs_out"], name="abs"),
        helper.make_node(scale_op, ["relu_out", "a"], ["scale_out"], name="scale"),
        helper.make_node("Add", ["scale_out", "b"], ["add_out"], name="add"),
        helper.make_node("Sigmoid", ["add_out"], ["sig_out"], name="sigmoid"),
        helper.make_node("Add", ["abs_out", "sig_out"], ["Y"], name="join"),
    ]
    return _model(nodes, [_vi("x0", shape), _vi("x1", shape)], [_vi("Y", shape)], [a, b])


def _run(*args, cwd):
    proc = run_cli(POLY, *args, cwd=cwd)
    assert "Traceback" not in proc.stdout + proc.stderr
    return proc


@pytest.mark.slow  # a whole reduction
def test_layerwise_reduce_finds_the_planted_node(tmp_path):
    onnx.save(_two_input_model("Mul"), str(tmp_path / "good.onnx"))
    onnx.save(_two_input_model("Div"), str(tmp_path / "broken.onnx"))

    # 2. golden values for every tensor, and the inputs used; merged into layer-wise inputs
    proc = _run("run", "good.onnx", "--onnxrt", "--save-inputs", "inputs.json", "--onnx-outputs", "mark", "all",
                "--save-outputs", "layerwise_golden.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = _run("data", "to-input", "inputs.json", "layerwise_golden.json", "-o", "layerwise_inputs.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr

    against_golden = ["--onnxrt", "--load-inputs", "layerwise_inputs.json", "--load-outputs", "layerwise_golden.json"]
    check = ["--check", POLY, "run", DEBUG_ONNX, *against_golden]
    # The whole broken model fails the check (its outputs differ from the golden ones).
    proc = _run("run", "broken.onnx", *against_golden, cwd=tmp_path)
    assert proc.returncode == 1

    # 3. bisect, then 5. linear, each given the layer-wise inputs as the check is
    proc = _run("debug", "reduce", "broken.onnx", "-o", "initial_reduced.onnx", "--mode=bisect",
                "--load-inputs", "layerwise_inputs.json", *check, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = _run("debug", "reduce", "initial_reduced.onnx", "-o", "final_reduced.onnx", "--mode=linear",
                "--load-inputs", "layerwise_inputs.json", *check, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr

    final = onnx.load(str(tmp_path / "final_reduced.onnx"))
    assert [(n.name, n.op_type) for n in final.graph.node] == [("scale", "Div")]
    # Its computed input comes from the layer-wise file; its weight stays a weight.
    assert [i.name for i in final.graph.input] == ["relu_out"]
    assert [o.name for o in final.graph.output] == ["scale_out"]
    # 6. and the reduced model still fails the check on its own
    assert _run("run", "final_reduced.onnx", *against_golden, cwd=tmp_path).returncode == 1


def _data_dependent_model():
    """x [4] -> NonZero -> Cast -> Identity (`ident`) -> y: the shape of `c` depends on x's values."""
    nodes = [
        helper.make_node("NonZero", ["x"], ["nz"], name="nonzero"),
        helper.make_node("Cast", ["nz"], ["c"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("Identity", ["c"], ["y"], name="ident"),
    ]
    return _model(nodes, [_vi("x", [4])], [_vi("y", [1, "n"])])


def _reduced_input_shape(tmp_path, *data_flags):
    onnx.save(_data_dependent_model(), str(tmp_path / "model.onnx"))
    check = debug_models.node_check(tmp_path / "check.py", "ident")
    proc = _run("debug", "reduce", "model.onnx", "-o", "reduced.onnx", *data_flags, "--check", *check, DEBUG_ONNX, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reduced = onnx.load(str(tmp_path / "reduced.onnx"))
    assert [n.name for n in reduced.graph.node] == ["ident"]
    [inp] = reduced.graph.input
    assert inp.name == "c"
    return [d.dim_value for d in inp.type.tensor_type.shape.dim]


@pytest.mark.slow  # a whole reduction
def test_reduce_fallback_shape_inference_runs_on_the_loaded_inputs(tmp_path):
    # Two nonzero values: `c` is [1, 2]. Tensors that are not model inputs (a layer-wise file)
    # are ignored by the fallback run.
    save_inputs([{"x": np.array([1, 0, 0, 2], np.float32), "c": np.zeros((1, 7), np.float32)}],
                str(tmp_path / "inputs.json"))
    assert _reduced_input_shape(tmp_path, "--load-inputs", "inputs.json") == [1, 2]


@pytest.mark.slow  # a whole reduction
def test_reduce_fallback_shape_inference_uses_the_data_loader_script(tmp_path):
    (tmp_path / "data.py").write_text(
        "import numpy as np\n"
        "def load_data():\n"
        "    yield {'x': np.array([0, 0, 0, 5], np.float32)}\n"
    )
    assert _reduced_input_shape(tmp_path, "--data-loader-script", "data.py") == [1, 1]


def test_reduce_data_loader_flag_errors_are_one_line(tmp_path):
    onnx.save(_data_dependent_model(), str(tmp_path / "model.onnx"))
    for args, needle in (
        (["--load-inputs", "missing.json"], "missing.json"),
        (["--val-range", "bad"], "--val-range"),
    ):
        proc = _run("debug", "reduce", "model.onnx", "-o", "r.onnx", *args, "--check", "true", cwd=tmp_path)
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert proc.returncode == 2 and len(lines) == 1 and needle in lines[0], proc.stderr
