"""Side by side with the installed `polygraphy`: same verdicts, same exit codes, files
interchangeable in both directions."""

from __future__ import annotations

import pytest
from fixtures.cli_helpers import POLY, POLYGRAPHY, run_cli


@pytest.mark.slow
@pytest.mark.parametrize("tol, code", [("0.001", 0), ("0", 1)])
def test_fp16_verdicts_match_polygraphy(models, tmp_path, tol, code):
    inputs, outputs, fp16 = tmp_path / "inputs.json", tmp_path / "outputs.json", tmp_path / "fp16.onnx"
    # golden data from polygraphy, the fp16 model from poly, the verdicts from both
    assert run_cli(POLYGRAPHY, "run", models["mlp"], "--onnxrt", "--save-inputs", inputs,
                   "--save-outputs", outputs).returncode == 0
    assert run_cli(POLY, "convert", "--fp-to-fp16", "-o", fp16, models["mlp"]).returncode == 0
    args = ["run", "--onnxrt", fp16, "--load-inputs", inputs, "--load-outputs", outputs, "--atol", tol, "--rtol", tol]
    ours, theirs = run_cli(POLY, *args), run_cli(POLYGRAPHY, *args)
    assert theirs.returncode == code, theirs.stdout + theirs.stderr
    assert ours.returncode == code, ours.stdout + ours.stderr
    verdict = "PASSED" if code == 0 else "FAILED"
    assert f"{verdict} | Runtime" in ours.stdout + ours.stderr


def test_poly_results_load_in_polygraphy(models, tmp_path):
    inputs, outputs = tmp_path / "inputs.json", tmp_path / "outputs.json"
    assert run_cli(POLY, "run", models["multi"], "--onnxrt", "--save-inputs", inputs,
                   "--save-outputs", outputs).returncode == 0
    theirs = run_cli(POLYGRAPHY, "run", models["multi"], "--onnxrt", "--load-inputs", inputs, "--load-outputs", outputs)
    assert theirs.returncode == 0, theirs.stdout + theirs.stderr
    inspect = run_cli(POLYGRAPHY, "inspect", "data", outputs)
    assert inspect.returncode == 0
