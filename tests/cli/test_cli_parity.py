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


@pytest.fixture(scope="module")
def mixed_results(tmp_path_factory):
    """Saved results of two runners (names of different lengths), two iterations, several dtypes."""
    import numpy as np

    from poly.compare import IterationResult, RunResults

    rng = np.random.default_rng(7)
    first = {
        "f32": (rng.standard_normal((3, 4)) * 5).astype(np.float32),
        "f16": rng.standard_normal((2, 5)).astype(np.float16),
        "i64": rng.integers(-100, 100, (4,)),
        "u8": rng.integers(0, 255, (6,)).astype(np.uint8),
        "mask": rng.standard_normal((2, 2)) > 0,
        "scalar": np.array(3.5, np.float32),
        "big": rng.standard_normal((40, 30)).astype(np.float32),
        "nan": np.array([1.0, np.nan, 3.0], np.float32),
    }
    second = {name: value[::-1].copy() if value.ndim else value for name, value in first.items()}
    path = tmp_path_factory.mktemp("inspect-data") / "results.json"
    RunResults([("runner-a", [IterationResult(first, runner_name="runner-a"), IterationResult(second, runner_name="runner-a")]),
                ("longer-runner-b", [IterationResult(second, runner_name="longer-runner-b")])]).save(str(path))
    return path


@pytest.mark.parametrize("flags", [[], ["--all"], ["--all", "--show-values", "--histogram"], ["-s", "-n", "1"]],
                         ids=["plain", "all", "all-values-histogram", "num-items"])
def test_inspect_data_prints_what_polygraphy_prints(mixed_results, flags):
    from fixtures.cli_helpers import run_poly

    theirs = run_cli(POLYGRAPHY, "inspect", "data", mixed_results, *flags)
    assert theirs.returncode == 0, theirs.stderr
    ours = run_poly("inspect", "data", mixed_results, *flags)
    assert ours.returncode == 0, ours.stderr
    expected = [line for line in theirs.stdout.splitlines() if "'colored' module" not in line]
    assert ours.stdout.splitlines() == expected
