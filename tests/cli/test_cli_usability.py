"""What users run into around the commands: global options before the subcommand, a quoted
--check command, a check that is itself broken, diff-tactics without bad replays, one exit
status per kind of failure, log lines printed once, accurate `poly --help`, and `poly
validate`'s progress line and HTML report."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import onnx
import pytest
from fixtures import debug_models
from fixtures.cli_helpers import POLY, run_cli
from fixtures.tactic_replays import make_replays

from poly.compare import IterationResult, RunResults


def _error_lines(text):
    return [line for line in text.splitlines() if line.startswith("[!]")]


def _save(model, path):
    onnx.save(model, str(path))
    return str(path)


# -- global options before the subcommand -------------------------------------------------------

def test_group_option_values_stop_at_the_subcommand(tmp_path):
    model = _save(debug_models.chain(3, dims=(2, 8)), tmp_path / "chain.onnx")
    # a check that fails on the node n1, not whatever the model (that one is refused)
    check = debug_models.node_check(tmp_path / "check.py", ["n1"])
    proc = run_cli(POLY, "--log-format", "timestamp", "debug", "reduce", model, "-o", "r.onnx",
                   "--check", *check, "polygraphy_debug.onnx", cwd=tmp_path)
    assert "No such option" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "r.onnx").exists()
    assert re.search(r"^\[I\] \(\d\d:\d\d:\d\d\) ", proc.stdout, re.M)  # the timestamp format was applied
    two = run_cli(POLY, "--log-format", "timestamp", "no-colors", "--verbosity", "INFO", "inspect", "model", model)
    assert two.returncode == 0, two.stdout + two.stderr


# -- the --check command --------------------------------------------------------------------------

def test_quoted_check_followed_by_options_says_how_to_order_them(tmp_path):
    model = _save(debug_models.chain(3, dims=(2, 8)), tmp_path / "chain.onnx")
    (tmp_path / "t.py").write_text("pass\n")
    proc = run_cli(POLY, "debug", "reduce", model, "-o", "r.onnx", "--check", "python t.py", "--artifacts", "log.txt",
                   cwd=tmp_path)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert "whole command in one quoted argument" in lines[0] and "--artifacts log.txt --check python t.py" in lines[0]
    assert not (tmp_path / "r.onnx").exists()


@pytest.mark.slow
def test_reduce_warns_when_the_check_always_fails_the_same_way(tmp_path):
    model = _save(debug_models.chain(6, dims=(2, 8)), tmp_path / "chain.onnx")
    broken = [sys.executable, "-c", "import sys; print('usage: t.py MODEL', file=sys.stderr); sys.exit(2)"]
    proc = run_cli(POLY, "debug", "reduce", model, "-o", "r.onnx", "--check", *broken, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = _error_lines(proc.stdout + proc.stderr)
    assert len(lines) == 1 and "Every check failed the same way, even the first (exit status 2" in lines[0]
    assert "last printing 'usage: t.py MODEL'" in lines[0] and "probably unrelated to the model" in lines[0]
    assert "Reduced" not in proc.stdout + proc.stderr and not (tmp_path / "r.onnx").exists()
    # `false` fails at once and alike on the node kept and on those left out: the same refusal
    single = run_cli(POLY, "debug", "reduce", model, "-o", "f.onnx", "--check", "false", cwd=tmp_path)
    assert single.returncode == 1 and not (tmp_path / "f.onnx").exists(), single.stdout + single.stderr
    assert "Every check failed the same way, even the first (exit status 1)" in _error_lines(single.stdout + single.stderr)[0]
    # A real failure that depends on the model does not warn.
    argv = debug_models.node_check(tmp_path / "check.py", ["n3"])
    real = run_cli(POLY, "debug", "reduce", model, "-o", "r2.onnx", "--check", *argv, "polygraphy_debug.onnx",
                   cwd=tmp_path)
    assert real.returncode == 0, real.stdout + real.stderr
    assert "likely broken" not in real.stdout + real.stderr


# -- diff-tactics with no bad/ directory ----------------------------------------------------------

def test_diff_tactics_without_bad_dir_counts_zero(tmp_path):
    problem = make_replays(tmp_path)
    if problem:
        pytest.skip(f"Polygraphy could not write replay fixtures here: {problem}")
    for path in (tmp_path / "bad").iterdir():
        path.unlink()
    (tmp_path / "bad").rmdir()
    proc = run_cli(POLY, "inspect", "diff-tactics", "--dir", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert "counting it as 0 bad tactic replays" in out
    assert "Loaded 0 bad tactic replays" in out
    assert "every tactic in the bad replays also appears" not in out



@pytest.mark.parametrize("layout", ["no-subdirs", "empty-subdirs", "no-args", "good-only", "good-bad-empty",
                                    "not-replays"])
def test_diff_tactics_with_no_replays_counts_zero_as_polygraphy_does(tmp_path, layout):
    from fixtures.cli_helpers import POLYGRAPHY, run_poly

    work = tmp_path / "work"
    work.mkdir()
    if layout in ("empty-subdirs", "good-bad-empty", "not-replays"):
        (work / "good").mkdir()
        (work / "bad").mkdir()
    if layout == "not-replays":  # files in a replay directory that are not replays are skipped
        (work / "good" / "notes.txt").write_text("not json")
        (work / "bad" / "other.json").write_text("{}")
    args = {
        "no-subdirs": ["--dir", work], "empty-subdirs": ["--dir", work], "not-replays": ["--dir", work],
        "no-args": [], "good-only": ["--good", work],
        "good-bad-empty": ["--good", work / "good", "--bad", work / "bad"],
    }[layout]
    ours = run_poly("inspect", "diff-tactics", *args, cwd=work)
    out = ours.stdout + ours.stderr
    assert ours.returncode == 0, out
    assert "[I] Loaded 0 good tactic replays." in out.splitlines()
    assert "[I] Loaded 0 bad tactic replays." in out.splitlines()
    assert "Could not determine potentially bad tactics: there are no bad tactic replays" in out
    assert "[!]" not in out
    theirs = run_cli(POLYGRAPHY, "inspect", "diff-tactics", *args, cwd=work)
    assert theirs.returncode == 0 and "Loaded 0 bad tactic replays." in theirs.stdout, theirs.stdout + theirs.stderr


# -- one exit status per kind of failure ------------------------------------------------------------

@pytest.mark.slow
def test_tensorrt_rtx_tactic_limitation_has_one_exit_status(models, tmp_path):
    from poly.trt.tensorrt_module import trt

    if hasattr(trt, "IAlgorithmSelector"):
        pytest.skip("this TensorRT has algorithm selectors: tactic replays work, there is no limitation to report")
    replay = tmp_path / "replay.json"
    replay.write_text("{}")
    model = models["mlp"]
    commands = {
        "convert": ["convert", model, "-o", tmp_path / "m.engine"],
        "run": ["run", model, "--trt"],
        "debug build": ["debug", "build", model, "--until", "1", "--save-debug-replay", tmp_path / "d.json"],
    }
    for name, args in commands.items():
        for flag, path in (("--save-tactics", tmp_path / "new.json"), ("--load-tactics", replay)):
            tail = ["--check", "true"] if name == "debug build" else []
            proc = run_cli(POLY, *args, flag, path, *tail, cwd=tmp_path)
            lines = _error_lines(proc.stderr)
            assert proc.returncode == 1, f"{name} {flag}: {proc.returncode} {proc.stderr}"
            assert len(lines) == 1 and "need full TensorRT" in lines[0], f"{name} {flag}: {proc.stderr}"


# -- log lines printed once ----------------------------------------------------------------------------

def test_input_data_lines_are_logged_once(models, tmp_path):
    inputs = tmp_path / "in.json"
    saved = run_cli(POLY, "run", models["identity"], "--onnxrt", "--save-inputs", inputs)
    assert saved.returncode == 0
    assert saved.stdout.count("Saving inference input data") == 1, saved.stdout
    outputs = tmp_path / "out.json"
    assert run_cli(POLY, "run", models["identity"], "--onnxrt", "--save-outputs", outputs).returncode == 0
    loaded = run_cli(POLY, "run", models["identity"], "--onnxrt", "--load-inputs", inputs, "--load-outputs", outputs)
    assert loaded.returncode == 0
    assert loaded.stdout.count("Loading input data from") == 1, loaded.stdout
    assert loaded.stdout.count("Loading inference results from") == 1, loaded.stdout


# -- poly --help -----------------------------------------------------------------------------------

def test_help_lists_each_group_subcommand():
    from poly.cli.commands.debug.group import SUBCOMMANDS as DEBUG_SUBCOMMANDS
    from poly.cli.main import SUBCOMMANDS

    described = SUBCOMMANDS["debug"][1].split(":", 1)[1]
    assert sorted(word.strip(" .") for word in described.split(",")) == sorted(DEBUG_SUBCOMMANDS)
    proc = run_cli(POLY, "--help")
    assert re.search(r"build, localize, precision,\s+reduce, repeat", proc.stdout), proc.stdout


# -- poly validate ------------------------------------------------------------------------------------

@pytest.fixture
def dataset(models, tmp_path):
    from poly.onnx import OnnxrtRunner, SessionFromOnnx

    ds, golden = tmp_path / "ds", tmp_path / "golden"
    ds.mkdir()
    golden.mkdir()
    rng = np.random.default_rng(0)
    with OnnxrtRunner(SessionFromOnnx(models["mlp"])) as runner:
        for i in range(4):
            x = rng.standard_normal((1, 8)).astype(np.float32)
            np.savez(ds / f"s{i}.npz", x=x)
            out = {k: v.copy() for k, v in runner.infer({"x": x}).items()}
            if i == 1:
                out["probs"][0, 0] = np.nan
            RunResults([("golden", [IterationResult(out, runner_name="golden")])]).save(str(golden / f"s{i}.json"))
    return ds, golden


def test_validate_progress_shows_percent_and_time_left(dataset, models):
    from poly.cli.validate import Progress
    from poly.compare.dataset import Accumulator

    acc = Accumulator()
    progress = Progress(total=8)
    acc.samples = 2
    line = progress.line(acc, 4.0)
    assert "2/8 samples (25%)" in line and "? left" in line and "? samples/s" in line  # no results yet
    assert "/" not in Progress().line(acc, 4.0).split("|")[0]  # unknown size: a count only
    ds, golden = dataset
    proc = subprocess.run([POLY, "validate", models["mlp"], "--onnxrt", "--dataset", ds, "--golden", golden],
                          capture_output=True, text=True, timeout=120)
    # Not a terminal: a log line at the first sample, then every 5 seconds.
    assert re.search(r"\[I\] validate \| \d/4 samples \(\d+%\) \| \S+ left", proc.stderr), proc.stderr


def test_validate_progress_rate_leaves_out_the_start_and_follows_the_run():
    """The rate and the time left come from the results' own pace: 3 s of start-up before the
    first result do not slow them, a first result alone gives no figure, a pace that changes is
    followed within the window, and the last line has the whole run's rate."""
    import io

    from poly.cli.validate import Progress
    from poly.compare.dataset import Accumulator

    acc = Accumulator()
    out = io.StringIO()
    progress = Progress(total=1000, stream=out, interval=0.0, window=10.0)

    def at(samples, elapsed):
        acc.samples = samples
        progress(acc, elapsed)
        return out.getvalue().splitlines()[-1]

    first = at(1, 3.0)
    assert "1/1000 samples" in first and "? left" in first and "? samples/s" in first
    t, n = 3.25, 6
    assert "? left" in at(n, t)  # 0.25 s of results: too short to tell
    while t < 13.0:  # 20 samples a second from the first result on
        t, n = t + 0.25, n + 5
        line = at(n, t)
    assert "20.0 samples/s" in line, line
    assert f"{round((1000 - n) / 20)}s left" in line, line  # (1000 - 201) / 20 s; from the start: 52 s
    while t < 30.0:  # then 2 samples a second: after a window of it, the rate is the new one
        t, n = t + 0.5, n + 1
        line = at(n, t)
    rate = float(line.split(" samples/s")[0].rsplit("| ", 1)[1])
    assert 1.9 <= rate <= 2.1, line
    assert "m" in line.split(" left")[0].rsplit("| ", 1)[1]  # (1000 - 235) / 2 s: minutes
    tty = io.StringIO()
    tty.isatty = lambda: True
    last = Progress(total=1000, stream=tty)
    last(acc, 3.0)
    last.finish(acc, 30.0)
    final = tty.getvalue().rsplit("\r\033[K", 1)[1]
    assert final.startswith(f"{n} samples | {n / 30.0:.1f} samples/s") and "left" not in final, final


def test_validate_html_histogram_labels_do_not_overlap(poly, models, dataset, tmp_path):
    """No two labels of a plot overlap, and none leaves its SVG, measured with the font's own
    widths (fixtures.report_dom); the NaN of sample 1 gets a bar and a label of its own."""
    from fixtures.report_dom import layout_problems, parse

    ds, golden = dataset
    report = tmp_path / "report.html"
    poly("validate", models["mlp"], "--onnxrt", "--dataset", ds, "--golden", golden, "--report", report)
    root = parse(report.read_text())
    svgs = list(root.find_all("svg", cls="histogram"))
    assert svgs
    for svg in svgs:
        assert "NaN" in [t.text() for t in svg.find_all("text", cls="special")]
        assert layout_problems(svg) == []
