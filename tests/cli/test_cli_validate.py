"""`poly validate`: verdicts sample by sample as `poly run --load-outputs` gives them, planted bad
samples reported, corrupt samples skipped, early stop, reports and usage errors."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from poly.compare import IterationResult, RunResults

N = 12
BAD = {2: 0.05, 9: 2e-3}


@pytest.fixture
def data(models, tmp_path):
    """A dataset directory for the mlp model and golden RunResults (one JSON per sample) from
    ONNX-Runtime, with planted bad samples."""
    from poly.onnx import OnnxrtRunner, SessionFromOnnx

    rng = np.random.default_rng(3)
    ds, golden = tmp_path / "ds", tmp_path / "golden"
    ds.mkdir()
    golden.mkdir()
    with OnnxrtRunner(SessionFromOnnx(models["mlp"])) as runner:
        for i in range(N):
            x = rng.standard_normal((1, 8)).astype(np.float32)
            np.savez(ds / f"img_{i:03d}.npz", x=x)
            out = {k: v.copy() for k, v in runner.infer({"x": x}).items()}
            if i in BAD:
                out["probs"][0, 1] += BAD[i]
            RunResults([("onnxrt-golden", [IterationResult(out, runner_name="onnxrt-golden")])]).save(
                str(golden / f"img_{i:03d}.json"))
    return ds, golden


def test_verdicts_match_poly_run_and_reports(poly, models, data, tmp_path):
    ds, golden = data
    rj, rh = tmp_path / "out" / "report.json", tmp_path / "out" / "report.html"
    result = poly("validate", models["mlp"], "--onnxrt", "--dataset", ds, "--golden", golden, "--atol", "1e-4",
                  "--rtol", "1e-4", "--workers", "3", "--report-json", rj, "--report", rh)
    assert result.exit_code == 1, result.output
    report = json.loads(rj.read_text())
    failed = {s["index"] for s in report["failed_samples"]}
    assert failed == set(BAD)
    assert [w["file"] for w in report["worst_samples"][:2]] == ["img_002.npz", "img_009.npz"]
    assert report["samples"] == N and report["passed"] == N - len(BAD)

    for i in range(N):
        run = poly("run", models["mlp"], "--onnxrt", "--load-inputs", ds / f"img_{i:03d}.npz",
                   "--load-outputs", golden / f"img_{i:03d}.json", "--atol", "1e-4", "--rtol", "1e-4")
        assert run.exit_code == (1 if i in failed else 0), (i, run.output)

    page = rh.read_text()
    assert "http://" not in page and "https://" not in page
    assert "<svg" in page and 'id="outputs"' in page and "img_002.npz" in page
    assert "FAILED | sample 2 (img_002.npz)" in result.output
    assert "samples/s" in result.output  # progress lines (stderr is not a TTY here)


@pytest.mark.parametrize("stat", ["max", "mean", "median", "quantile"])
def test_check_error_stat_matches_poly_run(poly, models, data, stat):
    ds, golden = data
    args = ["--atol", "1e-3", "--rtol", "1e-3", "--check-error-stat", stat, "--error-quantile", "0.5"]
    result = poly("validate", models["mlp"], "--onnxrt", "--load-inputs", ds, "--load-outputs", golden, *args)
    for i in BAD:
        run = poly("run", models["mlp"], "--onnxrt", "--load-inputs", ds / f"img_{i:03d}.npz",
                   "--load-outputs", golden / f"img_{i:03d}.json", *args)
        assert (f"sample {i} (img_{i:03d}.npz)" in result.output) == (run.exit_code == 1), run.output
    expected = any(
        poly("run", models["mlp"], "--onnxrt", "--load-inputs", ds / f"img_{i:03d}.npz",
             "--load-outputs", golden / f"img_{i:03d}.json", *args).exit_code for i in BAD)
    assert result.exit_code == (1 if expected else 0), result.output


def test_second_backend_as_reference_passes(poly, models, data):
    ds, _ = data
    result = poly("validate", models["mlp"], "--onnxrt", "--onnx-ref", "--dataset", ds, "--atol", "1e-5",
                  "--rtol", "1e-5")
    assert result.exit_code == 0, result.output
    assert f"PASSED | validate | {N}/{N} samples passed" in result.output


def test_corrupt_sample_is_reported_and_skipped(poly, models, data, tmp_path):
    ds, golden = data
    (ds / "img_004.npz").write_bytes(b"\x00garbage")
    rj = tmp_path / "r.json"
    result = poly("validate", models["mlp"], "--onnxrt", "--dataset", ds, "--golden", golden, "--atol", "1e-4",
                  "--rtol", "1e-4", "--report-json", rj)
    assert result.exit_code == 1
    assert "Unreadable sample 4 (img_004.npz)" in result.output
    report = json.loads(rj.read_text())
    assert report["errors"] == 1 and report["samples"] == N
    assert {s["index"] for s in report["failed_samples"]} == set(BAD)


def test_max_failures(poly, models, data, tmp_path):
    ds, golden = data
    rj = tmp_path / "r.json"
    result = poly("validate", models["mlp"], "--onnxrt", "--dataset", ds, "--golden", golden, "--atol", "1e-4",
                  "--rtol", "1e-4", "--max-failures", "1", "--workers", "1", "--prefetch", "1", "--report-json", rj)
    assert result.exit_code == 1
    report = json.loads(rj.read_text())
    assert report["stopped_early"] and report["samples"] < N and report["failed"] >= 1


@pytest.mark.parametrize("args", [
    ["--dataset", "DS", "--golden", "G"],  # no backend
    ["--onnxrt", "--golden", "G"],  # no dataset
    ["--onnxrt", "--onnx-ref", "--dataset", "DS", "--golden", "G"],  # two references
    ["--onnxrt", "--dataset", "DS"],  # no reference
    ["--onnxrt", "--dataset", "DS", "--golden", "G", "--check-error-stat", "worst"],
    ["--onnxrt", "--dataset", "DS", "--golden", "G", "--atol", "tiny"],
    ["--onnxrt", "--dataset", "DS", "--golden", "G", "--workers", "0"],
])
def test_usage_errors(poly, models, data, args):
    ds, golden = data
    args = [str(ds) if a == "DS" else str(golden) if a == "G" else a for a in args]
    result = poly("validate", models["mlp"], *args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


def _commands_section(help_text):
    """The subcommands `poly --help` lists under "Commands:": name -> one-line description
    (click wraps a long description onto indented continuation lines)."""
    lines = help_text.splitlines()
    start = lines.index("Commands:") + 1
    commands, name = {}, None
    for line in lines[start:]:
        if not line.strip():
            break
        head = re.match(r"  (\S+)\s{2,}(\S.*)$", line)
        if head:
            name = head.group(1)
            commands[name] = head.group(2).strip()
        else:  # a continuation of the previous description
            commands[name] += " " + line.strip()
    return commands


def test_listed_in_help(poly):
    result = poly("--help")
    assert result.exit_code == 0, result.output
    commands = _commands_section(result.output)
    assert "run" in commands  # the section was parsed at all
    assert commands.get("validate") == "Validate a model over a whole dataset against golden outputs."


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow  # starts a browser
@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium; .ci/run installs it)")
def test_html_report_renders_in_headless_chromium(poly, models, data, tmp_path):
    """The report opens in a browser with no network and shows its tables and plots: the
    rendered DOM holds them, and the screenshot has their colours (plot bars, table headers)."""
    ds, golden = data
    page = tmp_path / "report.html"
    poly("validate", models["mlp"], "--onnxrt", "--dataset", ds, "--golden", golden, "--atol", "1e-4",
         "--rtol", "1e-4", "--report", page)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,2400"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    for needle in ('id="outputs"', 'id="worst"', "<svg", "<rect", "img_002.npz"):
        assert needle in dom, needle
    shot = tmp_path / "shot.png"
    subprocess.run([CHROMIUM, *flags, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120)
    import matplotlib.image

    pixels = (matplotlib.image.imread(str(shot))[..., :3] * 255).round().astype(int)

    def count(hex_colour):
        rgb = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)])
        return int(np.all(np.abs(pixels - rgb) <= 2, axis=-1).sum())

    assert count("#0969da") > 200, "no histogram bars drawn"      # the plots' bars
    assert count("#f0f0f0") > 500, "no table header drawn"        # the tables' header cells
    assert count("#cf222e") > 20, "no failure marked"             # failed verdicts / tolerance line


def test_a_float64_sample_is_cast_as_poly_run_casts_it(poly, models, data, tmp_path):
    ds, golden = data
    with np.load(ds / "img_000.npz") as sample:
        np.savez(ds / "img_000.npz", x=sample["x"].astype(np.float64))
    rj = tmp_path / "r.json"
    result = poly("validate", models["mlp"], "--onnxrt", "--dataset", ds, "--golden", golden, "--atol", "1e-4",
                  "--rtol", "1e-4", "--report-json", rj)
    assert "Input 'x': the samples hold float64, the model takes float32: casting them" in result.output
    report = json.loads(rj.read_text())
    assert report["errors"] == 0 and report["samples"] == N and report["compared"] == N
    assert {s["index"] for s in report["failed_samples"]} == set(BAD)


def test_the_pass_rate_counts_unreadable_samples_as_not_passed(poly, models, data, tmp_path):
    ds, golden = data
    (ds / "img_004.npz").write_bytes(b"\x00garbage")
    rj = tmp_path / "r.json"
    result = poly("validate", models["mlp"], "--onnxrt", "--dataset", ds, "--golden", golden, "--atol", "1e-4",
                  "--rtol", "1e-4", "--report-json", rj)
    passed = N - 1 - len(BAD)
    report = json.loads(rj.read_text())
    assert report["passed"] == passed and report["pass_rate"] == pytest.approx(passed / N)
    assert f"pass rate: {100 * passed / N:.2f}%" in result.output
    assert f"{passed}/{N} samples passed" in result.output


def test_a_data_loader_that_gives_no_samples_is_a_usage_error(poly, models, data, tmp_path):
    _, golden = data
    script = tmp_path / "empty_loader.py"
    script.write_text("def load_data():\n    return iter([])\n")
    result = poly("validate", models["mlp"], "--onnxrt", "--data-loader-script", script, "--golden", golden)
    assert result.exit_code == 2, result.output
    assert f"No samples found: --data-loader-script '{script}' gave none" in result.output
    assert "0/0 samples passed" not in result.output
