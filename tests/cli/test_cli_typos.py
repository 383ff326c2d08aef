"""
A typo on the command line is one clear line and exit status 2, never a run that passes: an
--input-shapes input the model does not have, a shape of the wrong rank or against a fixed
dimension, a negative tolerance, a quantile outside [0, 1], an output name in a per-output value
that no output has. (Polygraphy warns and runs on the model's own shape or the default tolerance;
its API keeps doing so: the strict checks are the CLI's.)
"""

from __future__ import annotations

import numpy as np
import pytest

from poly.compare import DataLoader
from poly.core import PolyUsageError, TensorMetadata


def _one_error_line(result) -> str:
    errors = [line for line in result.output.splitlines() if line.startswith("[!]")]
    assert len(errors) == 1, result.output
    assert "PASSED" not in result.output and "Traceback" not in result.output, result.output
    return errors[0]


@pytest.mark.parametrize(("model", "shape", "expected"), [
    ("dynamic", "Y:[1,1,4,4]", "Input 'Y' (given a shape or dtype, e.g. by --input-shapes) is not an input of "
                               "the model: its inputs are X"),
    ("dynamic", "x:[1,1,4,4]", "its inputs are X; did you mean 'X'?"),
    ("dynamic", "X:[1,1,4]", "Input 'X': the shape given, [1, 1, 4], has rank 3, but the model's input has shape "
                             "['N', 1, 'H', 'W'] (rank 4)"),
    ("multi", "x:[2,4]", "Input 'x': the shape given, [2, 4], does not fit the model's input shape [2, 3]: "
                         "dimension 1 is fixed to 3"),
])
def test_an_input_shape_the_model_cannot_take_is_a_usage_error(poly, models, model, shape, expected):
    result = poly("run", models[model], "--onnxrt", "--input-shapes", shape)
    assert result.exit_code == 2, result.output
    assert expected in _one_error_line(result)
    assert "Inference Output" not in result.output  # nothing ran


def test_an_input_shape_that_fits_runs(poly, models):
    result = poly("run", models["dynamic"], "--onnxrt", "--onnx-ref", "--input-shapes", "X:[2,1,3,5]")
    assert result.exit_code == 0, result.output
    assert "shape=(2, 1, 3, 5)" in result.output


@pytest.mark.parametrize(("flags", "expected"), [
    (["--atol", "-1"], "Invalid value for '--atol': '-1': -1 is out of range: expected a value at least 0"),
    (["--rtol", "1e-3", "probs:-2e-3"], "Invalid value for '--rtol': 'probs:-2e-3': -2e-3 is out of range"),
    (["--error-quantile", "1.5"], "Invalid value for '--error-quantile': '1.5': 1.5 is out of range: expected a "
                                  "value between 0 and 1"),
])
def test_a_tolerance_out_of_range_is_a_usage_error(poly, models, flags, expected):
    result = poly("run", models["mlp"], "--onnxrt", "--onnx-ref", *flags)
    assert result.exit_code == 2, result.output
    assert expected in result.output


@pytest.mark.parametrize("flags", [["--atol", "nosuch:1e-3"], ["--check-error-stat", "nosuch:median"],
                                   ["--atol", "1e-3", "prob*:1e-2"]])
def test_a_per_output_value_for_no_output_is_a_usage_error(poly, models, flags):
    result = poly("run", models["mlp"], "--onnxrt", "--onnx-ref", *flags)
    assert result.exit_code == 2, result.output
    name = flags[-1].split(":")[0]
    line = _one_error_line(result)
    assert f"{flags[0]} {name}:...: no output is named '{name}' (the outputs compared are probs)" in line


def test_per_output_values_for_real_outputs_still_decide(poly, models):
    # the named output gets its value: a zero tolerance for "sum" fails it, exit 1 (not 2)
    ok = poly("run", models["multi"], "--onnxrt", "--onnx-ref", "--atol", "1e-3", "sum:1e-2", "r:1e-2")
    assert ok.exit_code == 0, ok.output
    script = poly("run", models["multi"], "--onnxrt", "--onnx-ref", "--atol", "sum:1e-2", "--gen-script", "-")
    assert "require_output_names(results, {'--atol': ['sum']})" in script.output


def test_the_api_keeps_polygraphy_s_warning_and_strict_raises():
    given = TensorMetadata().add("Y", dtype=None, shape=[1, 1, 2, 2])
    model = TensorMetadata().add("X", dtype=np.float32, shape=[1, 1, 2, 2])
    lenient = DataLoader(input_metadata=given)
    lenient.input_metadata = model
    assert lenient[0]["X"].shape == (1, 1, 2, 2)  # Polygraphy's behaviour: a warning, the model's own shape
    strict = DataLoader(input_metadata=given, strict=True)
    strict.input_metadata = model
    with pytest.raises(PolyUsageError, match="Input 'Y' .* its inputs are X"):
        strict[0]


@pytest.mark.parametrize(("flag", "name", "expected"), [
    ("--inputs", "nosuch:auto:auto", "--inputs nosuch: {model} has no tensor named 'nosuch'"),
    ("--outputs", "PROBS:auto", "--outputs PROBS: {model} has no tensor named 'PROBS'; did you mean 'probs'?"),
])
def test_extract_names_a_tensor_the_model_lacks(poly, models, tmp_path, flag, name, expected):
    result = poly("surgeon", "extract", models["mlp"], flag, name, "-o", tmp_path / "sub.onnx")
    assert result.exit_code == 2, result.output
    assert expected.format(model=models["mlp"]) in result.output
    assert "Cannot mark outputs" not in result.output and not (tmp_path / "sub.onnx").exists()
