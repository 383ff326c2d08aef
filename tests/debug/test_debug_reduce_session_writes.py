"""What a reduce session writes and which checks it runs: candidate models and the debug replay
are written atomically without waiting for the disk (no fsync: they are rewritten every
iteration), yet the replay is whole after every iteration and resumes the session; the final
confirmation check runs only when the result is not already known to fail; `implied_result`
answers from the checks already made; `poly debug reduce` (in process) writes its candidates the
same way and its reduced model durably."""

from __future__ import annotations

import os

import onnx
from click.testing import CliRunner
from fixtures import debug_models

from poly.debug import CheckResult, DebugReplay, IterativeDebugger, Reduce

ARTIFACT = "polygraphy_debug.onnx"


class ModelCheck:
    """Fails when the candidate holds every node named in `fault`; remembers each candidate's nodes."""

    def __init__(self, fault):
        self.fault = set(fault)
        self.candidates = []

    def __call__(self, artifact_path):
        model = onnx.load(artifact_path)
        onnx.checker.check_model(model)
        names = {n.name for n in model.graph.node}
        self.candidates.append(names)
        failed = self.fault <= names
        return CheckResult(not failed, int(failed))


def record_fsyncs(monkeypatch):
    """Records the path of every file or directory flushed with fsync (and still flushes it)."""
    flushed = []
    real = os.fsync

    def record(fd):
        flushed.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real(fd)

    monkeypatch.setattr(os, "fsync", record)
    return flushed


def reducer(model, check, **kwargs):
    debugger = IterativeDebugger(check, iter_artifact_path=ARTIFACT, **kwargs)
    return Reduce(model, debugger)


def test_session_writes_candidates_and_replay_without_fsync(monkeypatch):
    model = debug_models.chain(32, dims=(2, 8))
    flushed = record_fsyncs(monkeypatch)
    check = ModelCheck({"n17"})
    result = reducer(model, check, save_debug_replay="replay.json").run()
    assert flushed == []
    assert [n.name for n in result.model.graph.node] == ["n17"]
    assert len(check.candidates) == result.iterations

    # The replay holds every iteration with the nodes it tested, and replays the whole session.
    replay = DebugReplay.load("replay.json")
    assert len(replay) == result.iterations
    assert [ctx.success for ctx in replay.values()] == [not {"n17"} <= names for names in check.candidates]
    rerun_check = ModelCheck({"n17"})
    rerun = reducer(model, rerun_check, load_debug_replay="replay.json", save_debug_replay=None).run()
    assert rerun.nodes == result.nodes and rerun_check.candidates == [] and rerun.checks == 0


def test_implied_results_follow_the_checked_candidates():
    model = debug_models.chain(16, dims=(2, 8))
    check = ModelCheck({"n9"})
    reduce = reducer(model, check, save_debug_replay=None)
    result = reduce.run()
    assert result.nodes == [9]
    assert {"n9"} in check.candidates  # the single node was checked and failed
    passed = [names for names in check.candidates if "n9" not in names]
    assert {f"n{i}" for i in range(9)} in passed  # the prefix just before it passed

    assert reduce.implied_result([9]) is False
    assert reduce.implied_result([3, 9, 12]) is False  # holds a failing candidate
    assert reduce.implied_result([2, 5]) is True  # within a passing one
    assert reduce.implied_result(range(9)) is True
    assert reduce.implied_result([10, 11]) is None  # no check tells
    assert reduce.implied_result([8, 10]) is None


def test_confirmation_check_runs_only_for_a_result_never_seen_failing():
    # The fault needs the first and last nodes: no smaller candidate fails, so the whole model
    # is the result, and it is checked once more to confirm it fails.
    model = debug_models.chain(8, dims=(2, 8))
    check = ModelCheck({"n0", "n7"})
    result = reducer(model, check, save_debug_replay=None).run()
    assert result.nodes == list(range(8))
    assert check.candidates[-1] == {f"n{i}" for i in range(8)}
    assert check.candidates.count(check.candidates[-1]) == 1
    assert len(check.candidates) == result.checks == result.iterations

    # A single-node fault is seen failing alone: no confirmation check.
    check = ModelCheck({"n5"})
    result = reducer(model, check, save_debug_replay=None).run()
    assert result.nodes == [5] and check.candidates.count({"n5"}) == 1
    assert len(check.candidates) == result.iterations


def test_cli_reduce_writes_candidates_without_fsync_and_the_result_durably(tmp_path, monkeypatch):
    from poly.cli.main import cli

    onnx.save(debug_models.chain(24, dims=(2, 8)), "model.onnx")
    counter = tmp_path / "calls.txt"
    argv = debug_models.node_check(tmp_path / "check.py", "n13", counter)
    flushed = record_fsyncs(monkeypatch)
    result = CliRunner().invoke(
        cli,
        ["debug", "reduce", "model.onnx", "-o", "reduced.onnx", "--check", *argv, ARTIFACT],
        prog_name="poly",
    )
    assert result.exit_code == 0, result.output
    assert [n.name for n in onnx.load("reduced.onnx").graph.node] == ["n13"]
    assert debug_models.count_lines(counter) >= 2  # the check ran on several candidates
    assert os.path.exists("polygraphy_debug_replay.json") and not os.path.exists(ARTIFACT)
    names = [os.path.basename(path) for path in flushed]
    assert any(name.startswith(".reduced.onnx.") for name in names)  # the result, flushed
    assert not any(name.startswith((".polygraphy_debug.onnx.", ".polygraphy_debug_replay")) for name in names)
