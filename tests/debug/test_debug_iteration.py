"""IterativeDebugger: --until, --iter-info, intermediate artifacts, the debug replay saved after
every iteration, and resuming an interrupted session from it."""

from __future__ import annotations

import json
import sys

import pytest

from poly.core import PolyException
from poly.debug import (
    ArtifactSorter,
    CheckCommand,
    CheckResult,
    DebugReplay,
    IterativeDebugger,
    Repeat,
    SkipIteration,
    Until,
    skip_current_path,
)


class Scripted:
    """A check whose verdicts follow a list (True = pass); records what it was asked."""

    def __init__(self, verdicts, interrupt_at=None):
        self.verdicts = list(verdicts)
        self.calls = 0
        self.interrupt_at = interrupt_at

    def __call__(self, artifact_path=None):
        if self.interrupt_at is not None and self.calls == self.interrupt_at:
            raise KeyboardInterrupt
        verdict = self.verdicts[self.calls]
        self.calls += 1
        return CheckResult(verdict, 0 if verdict else 1)


@pytest.mark.parametrize(
    "until, verdicts, expected",
    [
        ("good", [False, False, True, False], 3),
        ("bad", [True, True, False, True], 3),
        ("4", [True] * 9, 4),
        (1, [False], 1),
    ],
)
def test_until(until, verdicts, expected):
    check = Scripted(verdicts)
    summary = Repeat(IterativeDebugger(check, until=Until(until), save_debug_replay=None)).run()
    assert summary.total == expected == check.calls


@pytest.mark.parametrize("bad", ["0", "-2", "sometimes", "1.5"])
def test_until_rejects_bad_values(bad):
    with pytest.raises(PolyException, match="--until"):
        Until(bad)


def test_iter_info_is_written_for_the_check_and_removed(tmp_path):
    # The check script reads --iter-info and fails on iteration 2 (0-based) only.
    script = tmp_path / "check.py"
    script.write_text(
        "import json, sys\n"
        "info = json.load(open('info.json'))\n"
        "open('seen.txt', 'a').write(str(info['iteration']) + '\\n')\n"
        "sys.exit(1 if info['iteration'] == 2 else 0)\n"
    )
    debugger = IterativeDebugger(
        CheckCommand([sys.executable, str(script)]),
        until=Until("bad"),
        iteration_info_path="info.json",
        save_debug_replay="replay.json",
    )
    summary = Repeat(debugger).run()
    assert summary.total == 3 and summary.passed == 2
    assert (tmp_path / "seen.txt").read_text().split() == ["0", "1", "2"]
    assert not (tmp_path / "info.json").exists()


def test_replay_is_saved_after_every_iteration(tmp_path):
    seen = []

    def make_artifact(context):
        context.state["value"] = context.iteration * 10
        # The replay on disk holds every earlier iteration when this one starts.
        if context.iteration:
            seen.append(len(DebugReplay.load("replay.json")))

    debugger = IterativeDebugger(
        Scripted([True, False, True]), until=Until(3), save_debug_replay="replay.json"
    )
    Repeat(debugger, make_artifact).run()
    assert seen == [1, 2]
    replay = DebugReplay.load("replay.json")
    assert [ctx.success for ctx in replay.values()] == [True, False, True]
    assert [ctx.state["value"] for ctx in replay.values()] == [0, 10, 20]
    raw = json.loads((tmp_path / "replay.json").read_text())
    assert raw["_N1"]["polygraphy_class"] == "IterationContext" and raw["_N1"]["success"] is False


def test_interrupted_session_resumes_where_it_stopped(tmp_path):
    verdicts = [True, True, False, True, True, True]
    first = Scripted(verdicts, interrupt_at=3)
    with pytest.raises(KeyboardInterrupt):
        Repeat(IterativeDebugger(first, until=Until(6), save_debug_replay="replay.json")).run()
    assert len(DebugReplay.load("replay.json")) == 3
    # The `_skip_current` replay counts the interrupted iteration as a failure.
    skip = DebugReplay.load(skip_current_path("replay.json"))
    assert len(skip) == 4 and skip["_N3"].success is False

    second = Scripted(verdicts[3:])
    debugger = IterativeDebugger(
        second, until=Until(6), load_debug_replay="replay.json", save_debug_replay="replay.json"
    )
    summary = Repeat(debugger).run()
    assert second.calls == 3 and summary.replayed == 3 and summary.total == 6
    assert [ctx.success for ctx in DebugReplay.load("replay.json").values()] == verdicts


def test_replay_decides_until(tmp_path):
    # A replay in which iteration 1 failed: `--until bad` stops there without checking anything.
    Repeat(IterativeDebugger(Scripted([True, False]), until=Until("bad"), save_debug_replay="r.json")).run()
    check = Scripted([])
    summary = Repeat(
        IterativeDebugger(check, until=Until("bad"), load_debug_replay="r.json", save_debug_replay=None)
    ).run()
    assert check.calls == 0 and summary.total == 2


def test_intermediate_artifact_removed_unless_asked_and_artifacts_sorted(tmp_path):
    def make_artifact(context):
        with open(context.artifact_path, "w") as f:
            f.write(str(context.iteration))
        with open("log.txt", "w") as f:
            f.write(f"log {context.iteration}")

    sorter = ArtifactSorter(["log.txt"], "arts")
    debugger = IterativeDebugger(
        Scripted([True, False]),
        sorter=sorter,
        iter_artifact_path="debug.onnx",
        until=Until(2),
        save_debug_replay=None,
    )
    Repeat(debugger, make_artifact).run()
    assert not (tmp_path / "debug.onnx").exists()
    assert [p.read_text() for p in (tmp_path / "arts" / "good").iterdir()] == ["log 0"]
    assert [p.name.endswith("_N1_rc1.txt") for p in (tmp_path / "arts" / "bad").iterdir()] == [True]

    debugger = IterativeDebugger(
        Scripted([True]),
        iter_artifact_path="kept.onnx",
        remove_intermediate=False,
        until=Until(1),
        save_debug_replay=None,
    )
    Repeat(debugger, make_artifact).run()
    assert (tmp_path / "kept.onnx").read_text() == "0"
    with pytest.raises(PolyException, match="--iter-artifact: 'kept.onnx' already exists"):
        IterativeDebugger(Scripted([]), iter_artifact_path="kept.onnx", until=Until(1))


def test_skip_iteration_decides_without_the_check():
    def make_artifact(context):
        if context.iteration == 0:
            raise SkipIteration(success=False)

    check = Scripted([True])
    summary = Repeat(IterativeDebugger(check, until=Until(2), save_debug_replay=None), make_artifact).run()
    assert check.calls == 1 and summary.passed == 1 and summary.total == 2


def test_bad_replay_file_is_one_line_error(tmp_path):
    (tmp_path / "notreplay.json").write_text('{"a": 1}')
    with pytest.raises(PolyException, match="--load-debug-replay: 'notreplay.json' is not a debug replay"):
        IterativeDebugger(Scripted([]), until=Until(1), load_debug_replay="notreplay.json")
    with pytest.raises(PolyException, match="does not exist"):
        IterativeDebugger(Scripted([]), until=Until(1), load_debug_replay="missing.json")
