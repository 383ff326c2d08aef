"""`poly run` driven as a user would, including the seed command lines."""

from __future__ import annotations

import json

from fixtures.cli_helpers import POLY, run_cli

from poly.compare import RunResults


def test_run_two_backends_passes(poly, models):
    result = poly("run", models["identity"], "--onnxrt", "--onnx-ref")
    assert result.exit_code == 0, result.output
    assert "Accuracy Comparison | onnxrt-runner" in result.output
    assert "PASSED | simple | All outputs matched" in result.output
    assert result.output.strip().splitlines()[-1].startswith("[I] PASSED | Runtime:")


def test_seed_mark_all_outputs_and_input_shapes(poly, models):
    result = poly("run", models["dynamic"], "--onnxrt", "--onnx-ref", "--onnx-outputs", "mark", "all",
                  "--input-shapes", "X:[1,1,4,4]")
    assert result.exit_code == 0, result.output
    assert "shape=(1, 1, 4, 4)" in result.output


def test_seed_fp16_roundtrip_with_saved_data(poly, models, tmp_path):
    inputs, outputs, fp16 = tmp_path / "inputs.json", tmp_path / "outputs_fp32.json", tmp_path / "m_fp16.onnx"
    assert poly("run", models["mlp"], "--onnxrt", "--save-inputs", inputs, "--save-outputs", outputs).exit_code == 0
    assert poly("convert", "--fp-to-fp16", "-o", fp16, models["mlp"]).exit_code == 0
    assert poly("run", "--onnxrt", fp16, "--validate").exit_code == 0
    result = poly("run", "--onnxrt", fp16, "--load-inputs", inputs, "--load-outputs", outputs,
                  "--atol", "0.001", "--rtol", "0.001")
    assert result.exit_code == 0, result.output
    strict = poly("run", "--onnxrt", fp16, "--load-inputs", inputs, "--load-outputs", outputs,
                  "--atol", "0", "--rtol", "0")
    assert strict.exit_code == 1 and "FAILED" in strict.output


def test_save_outputs_round_trip(poly, models, tmp_path):
    out = tmp_path / "golden.json"
    assert poly("run", models["multi"], "--onnxrt", "--save-outputs", out, "--seed", "3",
                "--iterations", "2", "--val-range", "[-1,1]").exit_code == 0
    loaded = RunResults.load(str(out))
    assert len(loaded) == 1 and len(list(loaded.values())[0]) == 2
    again = poly("run", models["multi"], "--onnx-ref", "--load-outputs", out, "--seed", "3", "--iterations", "2",
                 "--val-range", "[-1,1]")
    assert again.exit_code == 0, again.output
    differs = poly("run", models["multi"], "--onnx-ref", "--load-outputs", out, "--seed", "4", "--iterations", "2",
                   "--val-range", "[-1,1]")
    assert differs.exit_code == 1


def test_data_loader_script(poly, models, tmp_path):
    script = tmp_path / "data_loader.py"
    script.write_text("import numpy as np\n"
                      "def load_data():\n"
                      "    for _ in range(2):\n"
                      "        yield {'X': np.ones((1, 1, 3, 3), dtype=np.float32)}\n")
    result = poly("run", models["dynamic"], "--onnxrt", "--onnx-ref", "--data-loader-script", script)
    assert result.exit_code == 0, result.output
    assert "shape=(1, 1, 3, 3)" in result.output


def test_example_model_subprocess():
    proc = run_cli(POLY, "run", "--example", "--onnxrt", "--onnx-ref")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASSED | Runtime:" in proc.stdout and "probs" in proc.stdout


def test_saved_results_are_polygraphy_json(poly, models, tmp_path):
    out = tmp_path / "r.json"
    assert poly("run", models["identity"], "--onnxrt", "--save-outputs", out).exit_code == 0
    data = json.loads(out.read_text())
    assert data["polygraphy_class"] == "RunResults"
