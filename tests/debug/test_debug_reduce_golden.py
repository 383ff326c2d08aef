"""Reduce against golden outputs: a check that compares a candidate with saved golden outputs
(`poly run ... --load-outputs golden.json`) pairs an output that has no golden counterpart of
its name with the golden output at its position. In a model whose Constant nodes are not folded
(and come first, as exporters often write them), every cut then marks a Constant's output and
"fails", and reduce used to end at a Constant. Reduce now marks only golden tensors as outputs
and counts a candidate without any as passing, unchecked. Also: a check that never passes is
reported."""

from __future__ import annotations

import sys

import numpy as np
import onnx
import pytest
from fixtures import debug_models
from fixtures.golden_models import PLANTED, SHAPE, constants_first_model, golden_names

from poly.compare import IterationResult, RunResults
from poly.core import PolyException
from poly.debug import CheckCommand, CheckResult, IterativeDebugger, Reduce

ARTIFACT = "polygraphy_debug.onnx"


class GoldenCheck:
    """Emulates `poly run CANDIDATE --load-outputs golden.json` on a model whose node `n5` is
    wrong: an output of the candidate without a golden output of its name is compared with
    the golden output at its position, an unrelated tensor, and fails; so does `n5`."""

    def __init__(self, golden, planted=PLANTED):
        self.golden = set(golden)
        self.planted = planted
        self.candidates = []

    def __call__(self, artifact_path):
        model = onnx.load(artifact_path)
        onnx.checker.check_model(model)
        self.candidates.append(model)
        unpaired = any(o.name not in self.golden for o in model.graph.output)
        failed = unpaired or any(n.name == self.planted for n in model.graph.node)
        return CheckResult(not failed, int(failed))


def reduce(model, check, **kwargs):
    debugger = IterativeDebugger(check, iter_artifact_path=ARTIFACT, save_debug_replay=None)
    return Reduce(model, debugger, **kwargs).run()


def test_positional_pairing_made_reduce_end_at_a_constant():
    # The behaviour the fix removes, still there when no golden outputs are known.
    model = constants_first_model("Sub")
    result = reduce(model, GoldenCheck(golden_names(model)), reference_outputs=None)
    assert [n.op_type for n in result.model.graph.node] == ["Constant"]


@pytest.mark.parametrize("planted, output", [(PLANTED, "t5"), ("n0", "t0")])
def test_golden_outputs_only_and_constant_cuts_count_as_passing(planted, output):
    model = constants_first_model("Sub")
    check = GoldenCheck(golden_names(model), planted)
    result = reduce(model, check, reference_outputs=golden_names(model))
    assert [n.name for n in result.model.graph.node] == [planted]
    assert [o.name for o in result.model.graph.output] == [output]
    # No candidate the check saw had an output without a golden counterpart, and none was
    # made of Constant nodes only: those were decided without the check.
    golden = set(golden_names(model))
    for candidate in check.candidates:
        assert candidate.graph.output and {o.name for o in candidate.graph.output} <= golden
        assert any(n.op_type != "Constant" for n in candidate.graph.node)
    if planted == "n0":  # the search probed cuts made of Constant nodes only
        assert result.checks < result.iterations


def test_golden_files_of_the_check_command_are_read(tmp_path):
    model = constants_first_model("Sub")
    names = golden_names(model)
    golden = RunResults([("onnxrt-runner", [IterationResult(
        {name: np.zeros(SHAPE, np.float32) for name in names}, runner_name="onnxrt-runner")])])
    golden.save(str(tmp_path / "golden.json"))
    # The check script fails when an output has no golden counterpart, or when n5 is there.
    argv = debug_models.write_check_script(tmp_path / "check.py", f"""
        golden = set({names!r})
        unpaired = any(o.name not in golden for o in model.graph.output)
        sys.exit(1 if unpaired or any(n.name == {PLANTED!r} for n in nodes) else 0)
    """)
    check = CheckCommand([*argv, ARTIFACT, "--load-outputs", str(tmp_path / "golden.json"), "--onnxrt"])
    result = reduce(model, check)
    assert [(n.name, n.op_type) for n in result.model.graph.node] == [(PLANTED, "Sub")]


@pytest.mark.parametrize(
    "command, paths",
    [
        (["poly", "run", "m.onnx", "--onnxrt", "--load-outputs", "a.json", "b.json", "--atol", "1"], ["a.json", "b.json"]),
        (["polygraphy", "run", "m.onnx", "--load-results=a.json", "--trt"], ["a.json"]),
        (["poly run m.onnx --load-outputs 'my golden.json'"], ["my golden.json"]),
        (["poly", "run", "m.onnx", "--onnxrt", "--save-outputs", "x.json"], []),
    ],
)
def test_golden_output_paths_of_a_check_command(command, paths):
    from poly.debug.reduce import golden_output_paths

    assert golden_output_paths(command) == paths


def test_unreadable_golden_file_is_warned_about_and_ignored(tmp_path, capsys):
    (tmp_path / "golden.json").write_text("not json")
    model = constants_first_model("Sub")
    argv = debug_models.node_check(tmp_path / "check.py", PLANTED)
    check = CheckCommand([*argv, ARTIFACT, "--load-outputs", str(tmp_path / "golden.json")])
    result = reduce(model, check)
    assert [n.name for n in result.model.graph.node] == [PLANTED]
    assert "Could not read the golden outputs" in capsys.readouterr().out


def test_golden_outputs_of_another_model_say_so():
    model = constants_first_model("Sub")
    with pytest.raises(PolyException, match="counted as passing"):
        reduce(model, GoldenCheck(["other"]), reference_outputs=["other"])


# -- a check that never passes ----------------------------------------------------------------

def test_a_check_failing_differently_every_time_is_reported(capsys):
    # The output differs at each run (a time stamp), so the check does not fail "the same way";
    # still, no candidate passed: the result (the first node) means nothing by itself.
    check = CheckCommand([sys.executable, "-c", "import sys, time; print(time.time_ns()); sys.exit(1)"])
    result = reduce(debug_models.chain(8, dims=(2, 8)), check)
    assert [n.name for n in result.model.graph.node] == ["n0"]
    out = capsys.readouterr().out
    assert "No candidate passed the check" in out and "Reduced 8 node(s)" in out
    assert out.index("Reduced 8 node(s)") < out.index("No candidate passed the check")


def test_a_real_failure_is_not_reported_as_a_broken_check(tmp_path, capsys):
    argv = debug_models.node_check(tmp_path / "check.py", "n3")
    result = reduce(debug_models.chain(8, dims=(2, 8)), CheckCommand([*argv, ARTIFACT]))
    assert [n.name for n in result.model.graph.node] == ["n3"]
    out = capsys.readouterr().out
    assert "No candidate passed" not in out and "likely broken" not in out


def test_unchecked_passes_do_not_hide_a_broken_check(tmp_path, capsys):
    # Candidates of Constant nodes only pass without the check; the check itself always fails
    # alike (a usage error): that is still reported.
    model = constants_first_model("Sub")
    check = CheckCommand([sys.executable, "-c", "import sys; print('usage: check MODEL'); sys.exit(2)"])
    reduce(model, check, reference_outputs=golden_names(model))
    assert "the --check command itself is likely broken" in capsys.readouterr().out
