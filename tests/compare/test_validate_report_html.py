"""The HTML report of `poly validate` as render_html writes it (no browser: the browser test in
tests/cli/test_cli_validate.py reads the same facts from Chromium's DOM): failures visible at any
ratio, zero drawn as zero, labelled axes and tolerance, labels that fit their SVG, the tolerances
applied, and why an output failed when it could not be compared."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from fixtures.report_dom import layout_problems, parse, report_facts, text_width

from poly.compare.dataset import Accumulator, SampleChecker, SampleResult, build_report, render_html
from poly.compare.dataset.sample_check import OutputCheck

N = 20
OVER = {3: 0.05, 11: 2.0}  # sample -> perturbation of output "sum" in its golden
MISSING, SHAPE = 5, 8  # the golden of sample 5 lacks output "r"; that of sample 8 has it as (2, 4)


def _report(config, **tolerances):
    """The report of a two-output model over N samples whose golden outputs equal the model's
    (zero difference) but for the planted failures, checked with ``tolerances``."""
    checker = SampleChecker(**tolerances)
    acc = Accumulator()
    rng = np.random.default_rng(0)
    for i in range(N):
        out = {"sum": rng.standard_normal((2, 3)).astype(np.float32), "r": rng.standard_normal((2, 3)).astype(np.float32)}
        ref = {k: v.copy() for k, v in out.items()}
        if i in OVER:
            ref["sum"][0, 1] += OVER[i]
        if i == MISSING:
            del ref["r"]
        if i == SHAPE:
            ref["r"] = np.zeros((2, 4), np.float32)
        acc.add(SampleResult(i, f"s_{i:03d}.npz", checker.check(out, ref)))
    outcome = SimpleNamespace(accumulator=acc, interrupted=False, passed=False, stopped_early=False, max_failures=None,
                              elapsed=1.0, samples_per_second=float(N))
    return build_report(outcome, config)


@pytest.fixture(scope="module")
def page():
    """The page of a run with the default tolerances (the CLI's config then holds None for them)."""
    return render_html(_report({"model": "m.onnx", "atol": None, "rtol": None, "check_error_stat": "elemwise",
                                "error_quantile": None}))


@pytest.fixture(scope="module")
def facts(page):
    return report_facts(parse(page))


def test_failures_have_a_panel_with_their_counts_and_red_bars(facts):
    assert facts["verdicts"]["sum"] == {"passed": "18 (90%)", "over tolerance": "2 (10%)", "not compared": "0 (0%)"}
    assert facts["verdicts"]["r"] == {"passed": "18 (90%)", "over tolerance": "0 (0%)", "not compared": "2 (10%)"}
    hist = facts["histograms"][("sum", "absolute")]
    assert len(hist["failed_bars"]) == len(OVER)  # 0.05 and 2.0 fall in two bins, one failed sample each
    # a log count axis: one sample is a fifth of the 18 zero-difference samples' bar (a linear axis: 1/18)
    assert min(hist["failed_bars"]) >= 0.2 * max(hist["bars"])
    assert not facts["histograms"][("r", "absolute")]["failed_bars"]


def test_one_failure_among_twenty_thousand_is_drawn_and_written():
    acc = Accumulator()
    for i in range(20_000):
        v = 0.5 if i == 77 else 0.0
        acc.add(SampleResult(i, None, [OutputCheck("y", passed=v == 0, max_absdiff=v, max_reldiff=v, atol=1e-5,
                                                   rtol=1e-5, stat_absdiff=v, stat_reldiff=v)]))
    root = parse(render_html({"status": "failed", "config": {}, **acc.to_dict()}))
    facts = report_facts(root)
    assert facts["verdicts"]["y"]["over tolerance"] == "1 (0.005%)"
    bar = root.find("g", cls="verdict", data_verdict="over tolerance").find("rect")
    assert float(bar.attrs["width"]) >= 3
    hist = facts["histograms"][("y", "absolute")]
    assert len(hist["failed_bars"]) == 1 and hist["failed_bars"][0] >= 0.05 * max(hist["bars"])  # linear: 5e-5


HISTOGRAMS = {(output, kind) for output in ("sum", "r") for kind in ("absolute", "relative")}


def test_zero_differences_are_drawn_as_zero(facts):
    assert set(facts["histograms"]) == HISTOGRAMS
    for key, hist in facts["histograms"].items():
        assert "0" in hist["xticks"], key
        assert "1e-12" not in hist["xticks"], key  # no log axis floor standing in for zero
        assert "18 samples with zero difference" in hist["caption"], key


def test_axes_and_tolerance_are_labelled(facts):
    assert set(facts["histograms"]) == HISTOGRAMS
    for (_, kind), hist in facts["histograms"].items():
        assert hist["ylabel"] == ["samples (log scale)"]
        assert hist["xlabel"] == [f"largest {kind} difference per sample (log scale)"]
        assert hist["tolerance"] == [f"{'atol' if kind == 'absolute' else 'rtol'} 1e-05"]
        assert len(hist["yticks"]) >= 2 and len(hist["xticks"]) >= 4


def _odd_report():
    """Values everywhere: below 1e-12, NaN, Inf, over 1e6, zeros, a long output name, tolerances
    of 0 and over 1e6 (the label left of its line), 2 million samples (long count labels)."""
    acc = Accumulator()
    long = "/model/encoder/layers.11/attention/output/dense/MatMul_output_0_with_a_very_long_name"
    values = [0.0, 3e-14, 1e-9, 1e-3, 0.5, 4e7, math.inf, math.nan]
    for i, v in enumerate(values):
        acc.add(SampleResult(i, None, [
            OutputCheck(long, passed=v < 1e-4, max_absdiff=v, max_reldiff=v, atol=1e-4, rtol=0.0, stat_absdiff=v,
                        stat_reldiff=v),
            OutputCheck("y", passed=True, max_absdiff=v, max_reldiff=v, atol=5e6, rtol=1e6, stat_absdiff=v,
                        stat_reldiff=v)]))
    report = acc.to_dict()
    for dist in report["outputs"].values():
        for key in ("absdiff_histogram", "reldiff_histogram"):
            dist[key]["counts"][0] += 2_000_000  # many exact zeros, to make the count labels long
            dist[key]["zeros"] += 2_000_000
    return {"status": "failed", "config": {}, **report}


@pytest.mark.parametrize("which", ["planted", "odd"])
def test_labels_fit_their_svg(page, which):
    """Clipping, screenshot-free: an SVG clips whatever leaves its viewBox, and its figure only
    scales it (max-width 100%, height auto), so a label is whole exactly when its box, measured in
    DejaVu Sans (the widest common sans font, the one Chromium uses here), lies in the viewBox; no
    two labels may overlap either. Captions are HTML (figcaption, wrapping), never SVG text."""
    page = page if which == "planted" else render_html(_odd_report())
    root = parse(page)
    svgs = list(root.find_all("svg"))
    assert svgs
    for svg in svgs:
        assert layout_problems(svg) == []
        assert svg.attrs["width"] == svg.attrs["viewbox"].split()[2]  # drawn 1:1 where there is room
        for text in svg.find_all("text"):
            assert "/model/" not in text.text()  # the output's name is in the figcaption
    assert "figure svg{display:block;max-width:100%;height:auto}" in page
    for fig in root.find_all("figure"):
        assert fig.find("figcaption").text()


def test_the_layout_check_catches_a_clipped_label():
    """layout_problems is not vacuous: the old caption (a long title in the SVG) is caught."""
    svg = parse('<svg viewBox="0 0 440 206"><text x="28" y="202" font-size="11">'
                '/model/encoder/layers.11/attention/output: absolute difference (max per sample, count peak 37)'
                "</text></svg>").find("svg")
    assert text_width("x" * 10, 10) > 50
    assert any("outside the viewBox" in p for p in layout_problems(svg))


def test_tolerances_show_the_values_applied(facts):
    assert facts["config"]["atol"] == "1e-05 (default)"
    assert facts["config"]["rtol"] == "1e-05 (default)"
    assert facts["config"]["error_quantile"] == "0.99 (default)"
    for output in ("sum", "r"):
        assert facts["outputs"][output]["atol"] == "1e-05" and facts["outputs"][output]["rtol"] == "1e-05"


def test_per_output_tolerances_are_shown_per_output():
    atol = {"sum": 1e-3, "": 1e-5}
    facts = report_facts(parse(render_html(_report({"atol": atol, "rtol": 1e-4}, atol=atol, rtol=1e-4))))
    assert facts["config"]["atol"] == "sum: 0.001; r: 1e-05 (per output)"
    assert facts["config"]["rtol"] == "0.0001"
    assert facts["outputs"]["sum"]["atol"] == "0.001" and facts["outputs"]["r"]["atol"] == "1e-05"
    assert facts["histograms"][("sum", "absolute")]["tolerance"] == ["atol 0.001"]
    assert facts["histograms"][("r", "absolute")]["tolerance"] == ["atol 1e-05"]
    assert facts["histograms"][("sum", "relative")]["tolerance"] == ["rtol 0.0001"]


def test_outputs_table_names_why_an_output_failed(facts):
    r = facts["outputs"]["r"]
    assert r["compared"] == "18" and r["failed"] == "2" and r["pass rate"] == "90.00%"
    causes = facts["causes"]["r"]
    assert "missing from the reference: 1 sample (first: s_005.npz)" in causes
    assert "shape (2, 3) differs from the reference's (2, 4): 1 sample (first: s_008.npz)" in causes
    assert "over tolerance" not in causes
    assert facts["causes"]["sum"] == "failures: 2 over tolerance"
