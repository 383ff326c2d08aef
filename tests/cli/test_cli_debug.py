"""`poly debug repeat` and `poly debug reduce` as real processes: --check takes the rest of the
command line, artifacts are sorted, planted faults are found with `poly run --onnxrt` and with
plain scripts, an interrupted reduction resumes from its replay, usage errors are one line."""

from __future__ import annotations

import json
import math
import sys

import onnx
import pytest
from fixtures import debug_models
from fixtures.cli_helpers import POLY, run_cli

DEBUG_ONNX = "polygraphy_debug.onnx"


def _one_error_line(proc):
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert len(lines) == 1, proc.stderr
    return lines[0]


def _save(model, path):
    onnx.save(model, str(path))
    return str(path)


def _replay(path):
    return json.loads(path.read_text())


def test_repeat_sorts_artifacts_until_n(tmp_path):
    # The check writes a log and fails on its 2nd run (0-based 1).
    script = tmp_path / "flaky.py"
    script.write_text(
        "import os, sys\n"
        "n = len(open('runs.txt').read()) if os.path.exists('runs.txt') else 0\n"
        "open('runs.txt', 'a').write('x')\n"
        "open('log.txt', 'w').write(f'run {n}')\n"
        "sys.exit(4 if n == 1 else 0)\n"
    )
    proc = run_cli(
        POLY,
        "debug",
        "repeat",
        "--until",
        "3",
        "--artifacts",
        "log.txt",
        "--art-dir",
        "arts",
        "--check",
        sys.executable,
        script,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    good = sorted(p.read_text() for p in (tmp_path / "arts" / "good").iterdir())
    bad = list((tmp_path / "arts" / "bad").iterdir())
    assert good == ["run 0", "run 2"]
    assert [p.read_text() for p in bad] == ["run 1"] and bad[0].name.endswith("_N1_rc4.txt")
    assert [c["success"] for c in _replay(tmp_path / "polygraphy_debug_replay.json").values()] == [
        True,
        False,
        True,
    ]


def test_repeat_until_bad_with_fail_regex(tmp_path):
    # Exit status is always 0; only the output tells: the 3rd run prints the failure marker.
    script = tmp_path / "noisy.py"
    script.write_text(
        "import os\n"
        "n = len(open('runs.txt').read()) if os.path.exists('runs.txt') else 0\n"
        "open('runs.txt', 'a').write('x')\n"
        "print('RESULT: ' + ('MISMATCH' if n == 2 else 'ok'))\n"
    )
    proc = run_cli(
        POLY,
        "debug",
        "repeat",
        "--until",
        "bad",
        "--fail-regex",
        "RESULT: MISMATCH",
        "--check",
        sys.executable,
        script,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "runs.txt").read_text() == "xxx"


@pytest.mark.parametrize(
    "args, needle",
    [
        (["debug", "repeat", "--check", "true"], "--until"),
        (["debug", "repeat", "--until", "sometimes", "--check", "true"], "--until"),
        (
            [
                "debug",
                "repeat",
                "--until",
                "1",
                "--fail-code",
                "1",
                "--ignore-fail-code",
                "2",
                "--check",
                "true",
            ],
            "--fail-code and --ignore-fail-code",
        ),
        (["debug", "repeat", "--until", "1", "--fail-code", "one", "--check", "true"], "--fail-code"),
        (["debug", "repeat", "--until", "1", "--check"], "--check"),
        (["debug", "reduce", "{model}", "--check", "true"], "-o/--output"),
        (["debug", "reduce", "missing.onnx", "-o", "out.onnx", "--check", "true"], "missing.onnx"),
        (
            [
                "debug",
                "reduce",
                "{model}",
                "-o",
                "o.onnx",
                "--no-reduce-inputs",
                "--no-reduce-outputs",
                "--check",
                "true",
            ],
            "--no-reduce-inputs and --no-reduce-outputs",
        ),
        (
            [
                "debug",
                "reduce",
                "{model}",
                "-o",
                "o.onnx",
                "--model-input-shapes",
                "x:[2,",
                "--check",
                "true",
            ],
            "--model-input-shapes",
        ),
    ],
)
def test_usage_errors_are_one_line(tmp_path, args, needle):
    model = _save(debug_models.chain(4, dims=(2, 8)), tmp_path / "chain.onnx")
    proc = run_cli(POLY, *[a.format(model=model) for a in args], cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert needle in _one_error_line(proc)


@pytest.mark.slow  # a whole reduction, a poly process per step
def test_reduce_finds_planted_op_with_poly_run_onnxrt(tmp_path):
    model = debug_models.plant_custom_op(debug_models.chain(24, dims=(2, 8)), "n13")
    path = _save(model, tmp_path / "planted.onnx")
    proc = run_cli(
        POLY,
        "debug",
        "reduce",
        path,
        "-o",
        "reduced.onnx",
        "--min-good",
        "good.onnx",
        "--check",
        POLY,
        "run",
        DEBUG_ONNX,
        "--onnxrt",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reduced = onnx.load(str(tmp_path / "reduced.onnx"))
    assert [(n.name, n.op_type) for n in reduced.graph.node] == [("n13", "FaultyExp")]
    assert len(_replay(tmp_path / "polygraphy_debug_replay.json")) <= math.ceil(math.log2(24)) + 1
    good = onnx.load(str(tmp_path / "good.onnx"))
    assert "n13" not in {n.name for n in good.graph.node} and good.graph.node
    assert not (tmp_path / DEBUG_ONNX).exists()
    # The minimal passing model runs in `poly run`: it is a valid, runnable model.
    assert run_cli(POLY, "run", "good.onnx", "--onnxrt", cwd=tmp_path).returncode == 0


@pytest.mark.slow  # a whole reduction, a poly process per step
def test_reduce_linear_with_quoted_check_finds_the_branch(tmp_path):
    path = _save(debug_models.two_branches(3), tmp_path / "branches.onnx")
    argv = debug_models.node_check(tmp_path / "check.py", ["b0", "b1", "b2"])
    proc = run_cli(
        POLY,
        "debug",
        "reduce",
        path,
        "-o",
        "reduced.onnx",
        "--mode",
        "linear",
        "--check",
        " ".join([*argv, DEBUG_ONNX]),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reduced = onnx.load(str(tmp_path / "reduced.onnx"))
    assert sorted(n.name for n in reduced.graph.node) == ["b0", "b1", "b2"]


@pytest.mark.slow  # a whole reduction, a poly process per step
def test_reduce_resumes_an_interrupted_session(tmp_path):
    path = _save(debug_models.chain(40, dims=(2, 8)), tmp_path / "chain.onnx")
    counter = tmp_path / "calls.txt"
    # The check interrupts `poly` itself (SIGINT to its parent) on its 4th run.
    script = tmp_path / "check.py"
    script.write_text(
        "import os, signal, sys, onnx\n"
        f"counter = {str(counter)!r}\n"
        "n = len(open(counter).read().split()) if os.path.exists(counter) else 0\n"
        "open(counter, 'a').write('x ')\n"
        "if n == 3 and not os.path.exists('resumed'):\n"
        "    os.kill(os.getppid(), signal.SIGINT)\n"
        "model = onnx.load(sys.argv[1])\n"
        "sys.exit(1 if any(node.name == 'n27' for node in model.graph.node) else 0)\n"
    )
    check = ["--check", sys.executable, script, DEBUG_ONNX]
    cmd = ["debug", "reduce", path, "-o", "reduced.onnx"]
    first = run_cli(POLY, *cmd, *check, cwd=tmp_path)
    assert first.returncode != 0 and not (tmp_path / "reduced.onnx").exists()
    assert "--load-debug-replay" in first.stdout + first.stderr
    saved = len(_replay(tmp_path / "polygraphy_debug_replay.json"))
    assert saved == 3

    (tmp_path / "resumed").write_text("")
    calls_before = len(counter.read_text().split())
    second = run_cli(POLY, *cmd, "--load-debug-replay", "polygraphy_debug_replay.json", *check, cwd=tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    reduced = onnx.load(str(tmp_path / "reduced.onnx"))
    assert [n.name for n in reduced.graph.node] == ["n27"]
    total = len(_replay(tmp_path / "polygraphy_debug_replay.json"))
    assert len(counter.read_text().split()) - calls_before == total - saved, second.stdout
