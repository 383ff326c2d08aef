"""`poly inspect`, `poly convert` and `poly surgeon` on small models."""

from __future__ import annotations

import onnx


def test_inspect_model_show_layers_attrs_weights(poly, models):
    result = poly("inspect", "model", models["mlp"], "--show", "layers", "attrs", "weights")
    assert result.exit_code == 0, result.output
    assert "Graph Input(s)" in result.output and "Node(s)" in result.output and "[Op:" in result.output


def test_inspect_data_inputs_and_results(poly, models, tmp_path):
    inputs, outputs = tmp_path / "in.json", tmp_path / "out.json"
    assert poly("run", models["identity"], "--onnxrt", "--save-inputs", inputs, "--save-outputs", outputs).exit_code == 0
    res = poly("inspect", "data", outputs)
    assert res.exit_code == 0 and "Run Results" in res.output and "Stats: mean=" in res.output
    res = poly("inspect", "data", inputs, "--show-values")
    assert res.exit_code == 0 and "x [dtype=float32, shape=(1, 1, 2, 2)]" in res.output and "[!]" not in res.output


def test_convert_fp16(poly, models, tmp_path):
    out = tmp_path / "fp16.onnx"
    assert poly("convert", "--fp-to-fp16", "-o", out, models["mlp"]).exit_code == 0
    model = onnx.load(str(out))
    assert any(i.data_type == onnx.TensorProto.FLOAT16 for i in model.graph.initializer)


def test_surgeon_extract(poly, models, tmp_path):
    out = tmp_path / "sub.onnx"
    result = poly("surgeon", "extract", models["multi"], "--inputs", "x:[2,3]:float32", "--outputs", "r:auto",
                  "-o", out)
    assert result.exit_code == 0, result.output
    model = onnx.load(str(out))
    assert [o.name for o in model.graph.output] == ["r"]
    assert poly("run", out, "--onnxrt", "--onnx-ref").exit_code == 0


def test_surgeon_sanitize(poly, models, tmp_path):
    out = tmp_path / "s.onnx"
    result = poly("surgeon", "sanitize", models["foldable"], "--fold-constants", "--cleanup", "-o", out)
    assert result.exit_code == 0, result.output
    assert len(onnx.load(str(out)).graph.node) <= len(onnx.load(models["foldable"]).graph.node)
    out2 = tmp_path / "d.onnx"
    assert poly("surgeon", "sanitize", models["dynamic"], "--override-input-shapes", "X:[1,1,5,5]",
                "-o", out2).exit_code == 0
    dims = onnx.load(str(out2)).graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_value for d in dims] == [1, 1, 5, 5]
