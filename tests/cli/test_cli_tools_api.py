"""poly.tools: Polygraphy's programmatic tool API (Tool, BaseArgs, the debug tool and its
subtools, the debug argument groups) over poly's click commands and poly.debug."""

from __future__ import annotations

import argparse
import json
import sys

import pytest

from poly.core import PolyException


def _parser_with(tool):
    parser = argparse.ArgumentParser(prog="poly")
    tool.setup_parser(parser.add_subparsers(dest="tool"))
    return parser


def test_debug_tool_lays_out_polygraphys_subtools():
    from poly.tools.debug.debug import Debug
    from poly.tools.debug.subtool import Build, Precision, Reduce, Repeat
    from poly.tools.debug.subtool.build import Build as BuildAgain

    assert Build is BuildAgain
    assert [type(t) for t in Debug().get_subtools()] == [Build, Precision, Reduce, Repeat]
    parser = _parser_with(Debug())
    args = parser.parse_args(["debug", "reduce", "model.onnx", "-o", "small.onnx", "--mode", "linear",
                              "--check", "python", "-c", "pass", "--onnxrt"])
    assert isinstance(args.subcommand, Reduce)
    assert args.check == ["python", "-c", "pass", "--onnxrt"], "--check takes the rest of the command line"
    assert "model.onnx" in vars(args).values()


def test_repeat_runs_the_command_and_sorts_artifacts(tmp_path, monkeypatch):
    from poly.tools.debug.debug import Debug

    monkeypatch.chdir(tmp_path)
    counter = tmp_path / "count.txt"
    counter.write_text("0")
    script = ("import pathlib, sys; p = pathlib.Path('count.txt'); n = int(p.read_text()) + 1; "
              "p.write_text(str(n)); pathlib.Path('art.txt').write_text(str(n)); sys.exit(0 if n % 2 else 1)")
    args = _parser_with(Debug()).parse_args(
        ["debug", "repeat", "--until", "3", "--artifacts", "art.txt", "--art-dir", "sorted",
         "--save-debug-replay", "replay.json", "--check", sys.executable, "-c", script])
    assert args.subcommand.run(args) == 0
    assert counter.read_text() == "3"
    good = sorted(p.name for p in (tmp_path / "sorted" / "good").iterdir())
    bad = sorted(p.name for p in (tmp_path / "sorted" / "bad").iterdir())
    assert len(good) == 2 and len(bad) == 1
    replay = json.loads((tmp_path / "replay.json").read_text())
    assert [entry["success"] for entry in replay.values()] == [True, False, True]


def test_usage_errors_are_one_line_and_status_2(tmp_path, monkeypatch, capsys):
    from poly.tools.debug.subtool import Repeat

    monkeypatch.chdir(tmp_path)
    args = _parser_with(Repeat()).parse_args(["repeat", "--until", "sometimes", "--check", "true"])
    assert args.subcommand.run(args) == 2
    err = capsys.readouterr()
    assert "--until" in (err.out + err.err) and "Traceback" not in (err.out + err.err)


class Counting(__import__("poly.tools", fromlist=["Tool"]).Tool):
    """A tool built from the debug argument groups, as a Polygraphy subtool is."""

    def __init__(self):
        super().__init__("counting")

    def get_subscriptions_impl(self):
        from poly.tools.debug.subtool.iterative_debug_args import (
            ArtifactSortArgs,
            CheckCmdArgs,
            IterativeDebugArgs,
        )

        return [CheckCmdArgs(), ArtifactSortArgs(allow_no_artifacts_warning=False),
                IterativeDebugArgs(iter_art_opt_default="iteration.txt")]

    def run_impl(self, args):
        from poly.tools.debug.subtool.iterative_debug_args import IterativeDebugArgs

        debug_args = self.arg_groups[IterativeDebugArgs]
        self.seen = []

        def make(context):
            index = context.iteration_info["iteration"]
            with open(debug_args.iter_artifact_path, "w") as f:
                f.write(str(index))
            if index == 1:
                debug_args.skip_iteration(success=True)

        def advance(context):
            self.seen.append((context.iteration_info["iteration"], context.success))
            return len(self.seen) == 4

        return debug_args.iterate(make, advance, suffix="count")


def test_debug_argument_groups_drive_a_poly_debug_loop(tmp_path, monkeypatch):
    from poly.tools.debug.subtool.iterative_debug_args import CheckCmdArgs, IterationContext

    monkeypatch.chdir(tmp_path)
    tool = Counting()
    check = "import sys; sys.exit(int(open(sys.argv[1]).read()) % 2 == 0 and int(open(sys.argv[1]).read()) > 0)"
    parser = argparse.ArgumentParser()
    tool.add_parser_args(parser)
    args = parser.parse_args(["--save-debug-replay", "r.json", "--check", sys.executable, "-c", check,
                              "iteration.txt"])
    summary = tool.run(args)
    assert tool.seen == [(0, True), (1, True), (2, False), (3, True)], "iteration 1 was skipped as a pass"
    assert summary.total == 4 and summary.passed == 3
    (tmp_path / "iteration.txt").write_text("3")  # the loop removed its intermediate artifact
    assert tool.arg_groups[CheckCmdArgs].run_check("iteration.txt") is True  # odd: passes
    (tmp_path / "iteration.txt").write_text("2")
    assert tool.arg_groups[CheckCmdArgs].run_check("iteration.txt") is False
    assert IterationContext(state={"a": 1}).state == {"a": 1}


def test_iterative_args_refuse_to_overwrite_the_artifact(tmp_path, monkeypatch):
    from poly.tools.debug.subtool.iterative_debug_args import IterativeDebugArgs

    monkeypatch.chdir(tmp_path)
    (tmp_path / "iteration.txt").write_text("old")
    group = IterativeDebugArgs(iter_art_opt_default="iteration.txt")
    parser = argparse.ArgumentParser()
    group.add_parser_args(parser)
    with pytest.raises(PolyException, match="iteration.txt already exists, refusing to overwrite"):
        group.parse(parser.parse_args([]))
