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


def test_an_html_report_named_json_is_pointed_out(poly, models, data, tmp_path):
    """`--report r.json` writes HTML (as its help says) and warns that --report-json writes JSON."""
    ds, golden = data
    named = tmp_path / "r.json"
    result = poly("validate", models["mlp"], "--onnxrt", "--dataset", ds, "--golden", golden, "--atol", "1", "--report", named)
    assert result.exit_code == 0, result.output
    assert "--report-json writes the JSON one" in result.output and str(named) in result.output
    assert named.read_text().lstrip().lower().startswith("<!doctype html")
    plain = poly("validate", models["mlp"], "--onnxrt", "--dataset", ds, "--golden", golden, "--atol", "1",
                 "--report", tmp_path / "r.html")
    assert plain.exit_code == 0 and "--report-json writes" not in plain.output


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
MISSING, SHAPE = 4, 6  # planted in the browser test: a golden without "probs", one with "probs" of shape (1, 5)

# Run in the page by the browser test: where each SVG label and each caption lies once laid out
# with the page's own fonts; what leaves its SVG (clipped), overlaps another label or overflows its
# box is written to the body's data-layout attribute, which --dump-dom then shows.
_LAYOUT_PROBE = """<script>
(function () {
  const problems = [];
  let texts = 0;
  for (const svg of document.querySelectorAll("svg")) {
    const box = svg.getBoundingClientRect();
    const labels = [...svg.querySelectorAll("text")];
    const rects = labels.map((t) => t.getBoundingClientRect());
    texts += labels.length;
    labels.forEach((t, i) => {
      const r = rects[i];
      if (r.width <= 0) problems.push("not drawn: " + t.textContent);
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        problems.push("clipped: " + t.textContent);
      for (let j = 0; j < i; j++) {
        const q = rects[j];
        if (Math.min(r.right, q.right) - Math.max(r.left, q.left) > 0.5 &&
            Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top) > 0.5)
          problems.push("overlap: " + t.textContent + " / " + labels[j].textContent);
      }
    });
  }
  for (const el of document.querySelectorAll("figcaption, figure, td, th, h1, h2, h3"))
    if (el.scrollWidth > el.clientWidth + 1) problems.push("overflows: " + el.textContent.slice(0, 60));
  if (document.documentElement.scrollWidth > document.documentElement.clientWidth)
    problems.push("the page scrolls sideways");
  document.body.setAttribute("data-layout", JSON.stringify({texts: texts, problems: problems}));
})();
</script>"""


@pytest.mark.slow  # starts a browser
@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium; .ci/run installs it)")
def test_html_report_renders_in_headless_chromium(poly, models, data, tmp_path):
    """The report opens in a browser with no network and shows its tables and plots: the
    rendered DOM holds them, and the screenshot has their colours (plot bars, table headers).
    With failures planted (two over tolerance, a golden without the output, one of the wrong
    shape) and the other samples' differences exactly zero, the DOM after layout shows: the
    failures panel with the planted counts, red bars on a log count axis, zero as "0" (no 1e-12
    floor), labelled axes and tolerance lines, the tolerances applied (atol defaulted), and the
    cause of each failure that was not a comparison; and no label leaves its SVG or overlaps
    another (measured in the browser, see _LAYOUT_PROBE)."""
    from fixtures.report_dom import parse, report_facts

    ds, golden = data
    for index, change in ((MISSING, lambda out: out.pop("probs")),
                          (SHAPE, lambda out: out.update(probs=np.zeros((1, 5), np.float32)))):
        path = golden / f"img_{index:03d}.json"
        outputs = dict(RunResults.load(str(path))[0][1][0])
        change(outputs)
        RunResults([("onnxrt-golden", [IterationResult(outputs, runner_name="onnxrt-golden")])]).save(str(path))
    page, rj = tmp_path / "report.html", tmp_path / "report.json"
    result = poly("validate", models["mlp"], "--onnxrt", "--dataset", ds, "--golden", golden, "--rtol", "1e-4",
                  "--report", page, "--report-json", rj)
    assert result.exit_code == 1, result.output
    assert json.loads(rj.read_text())["outputs"]["probs"]["absdiff_histogram"]["zeros"] == N - len(BAD) - 2
    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text().replace("</body>", _LAYOUT_PROBE + "</body>"))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,2400"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", probed.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    for needle in ('id="outputs"', 'id="worst"', "<svg", "<rect", "img_002.npz"):
        assert needle in dom, needle
    root = parse(dom)
    layout = json.loads(root.find("body").attrs["data-layout"])
    assert layout["texts"] > 25 and layout["problems"] == []  # the probe ran, over every label

    facts = report_facts(root)
    passed = N - len(BAD) - 2
    assert facts["verdicts"]["probs"] == {"passed": f"{passed} (66.7%)", "over tolerance": "2 (16.7%)",
                                          "not compared": "2 (16.7%)"}
    assert set(facts["histograms"]) == {("probs", "absolute"), ("probs", "relative")}
    for (_, kind), hist in facts["histograms"].items():
        assert len(hist["failed_bars"]) == len(BAD) and min(hist["failed_bars"]) >= 0.2 * max(hist["bars"])
        assert "0" in hist["xticks"] and "1e-12" not in hist["xticks"]
        assert f"{passed} samples with zero difference" in hist["caption"]
        assert hist["ylabel"] == ["samples (log scale)"]
        assert hist["xlabel"] == [f"largest {kind} difference per sample (log scale)"]
    assert facts["histograms"][("probs", "absolute")]["tolerance"] == ["atol 1e-05"]
    assert facts["histograms"][("probs", "relative")]["tolerance"] == ["rtol 0.0001"]
    assert facts["config"]["atol"] == "1e-05 (default)" and facts["config"]["rtol"] == "0.0001"
    assert facts["outputs"]["probs"]["atol"] == "1e-05" and facts["outputs"]["probs"]["rtol"] == "0.0001"
    causes = facts["causes"]["probs"]
    assert "2 over tolerance" in causes
    assert f"missing from the reference: 1 sample (first: img_{MISSING:03d}.npz)" in causes
    assert f"shape (1, 4) differs from the reference's (1, 5): 1 sample (first: img_{SHAPE:03d}.npz)" in causes

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


def test_a_data_loader_that_gives_no_samples_says_so(poly, models, data, tmp_path):
    _, golden = data
    script = tmp_path / "empty_loader.py"
    script.write_text("def load_data():\n    return iter([])\n")
    rj = tmp_path / "r.json"
    result = poly("validate", models["mlp"], "--onnxrt", "--data-loader-script", script, "--golden", golden,
                  "--report-json", rj)
    assert result.exit_code == 1, result.output
    assert f"No samples found: the data loader of --data-loader-script '{script}' gave none" in result.output
    assert json.loads(rj.read_text())["samples"] == 0  # the report is still written
    assert "0/0 samples passed" not in result.output
