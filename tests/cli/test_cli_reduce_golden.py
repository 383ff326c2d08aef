"""`poly debug reduce` against layer-wise golden outputs on a model whose Constant nodes are not
folded: the check `poly run polygraphy_debug.onnx --onnxrt --load-outputs golden.json` would
compare a cut's Constant output with the golden file's first output (no golden tensor has its
name) and fail, so reduce ended at a Constant; it must find the planted node."""

from __future__ import annotations

import onnx
import pytest
from fixtures.cli_helpers import POLY, run_cli
from fixtures.golden_models import PLANTED, constants_first_model, lone_constant_model

DEBUG_ONNX = "polygraphy_debug.onnx"


def _run(*args, cwd):
    proc = run_cli(POLY, *args, cwd=cwd)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


@pytest.mark.slow  # a whole reduction, a poly process per step
def test_reduce_with_golden_outputs_finds_the_planted_node_not_a_constant(tmp_path):
    onnx.save(constants_first_model("Add"), str(tmp_path / "good.onnx"))
    onnx.save(constants_first_model("Sub"), str(tmp_path / "broken.onnx"))
    proc = _run("run", "good.onnx", "--onnxrt", "--save-inputs", "inputs.json", "--onnx-outputs", "mark", "all",
                "--save-outputs", "golden.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = _run("data", "to-input", "inputs.json", "golden.json", "-o", "layerwise_inputs.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr

    against_golden = ["--onnxrt", "--load-inputs", "layerwise_inputs.json", "--load-outputs", "golden.json"]
    # A lone Constant's output, compared by position with the golden file's first output, fails:
    # what misled reduce.
    lone = lone_constant_model()
    onnx.save(lone, str(tmp_path / "lone.onnx"))
    assert _run("run", "lone.onnx", *against_golden, cwd=tmp_path).returncode == 1

    proc = _run("debug", "reduce", "broken.onnx", "-o", "reduced.onnx", "--load-inputs", "layerwise_inputs.json",
                "--check", POLY, "run", DEBUG_ONNX, *against_golden, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reduced = onnx.load(str(tmp_path / "reduced.onnx"))
    assert [(n.name, n.op_type) for n in reduced.graph.node] == [(PLANTED, "Sub")]
    out = proc.stdout + proc.stderr
    assert "compares against golden outputs" in out
    assert "Reduced 15 node(s) to 1 node(s)" in out and "No candidate passed" not in out
    assert [o.name for o in reduced.graph.output] == ["t5"]
    # The reduced model fails the same check on its own.
    assert _run("run", "reduced.onnx", *against_golden, cwd=tmp_path).returncode == 1
