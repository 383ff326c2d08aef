"""The HTML page of a ``poly debug localize`` report, checked by parsing it: the plot's points and
rows, the tolerance line, the ranking, escaping, non-finite severities and large graphs."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from poly.debug.localize.html_report import render_html

SVG = "{http://www.w3.org/2000/svg}"
CHAR_W = 0.6 * 11  # a monospace character at the plot's font size


# -- report dicts ----------------------------------------------------------------------------------


def _stat(severity, absdiff=0.01):
    return {"severity": severity, "max_absdiff": absdiff, "max_reldiff": 0.2, "rel_l2": 0.003}


def _node(name, index, error, own=None, inherited=None, passed=None, trt=None, op="Conv"):
    if passed is None:
        passed = error is None or error <= 1
    return {
        "name": name, "op": op, "index": index, "outputs": [f"{name}_out"], "trt_layers": trt, "passed": passed,
        "error": {"worst": _stat(error), "median": _stat(error)},
        "own": None if own is None else {"worst": _stat(own), "median": _stat(own / 2)},
        "inherited": None if inherited is None else {"worst": _stat(inherited), "median": _stat(inherited)},
        "own_passed": None if own is None else own <= 1,
        "nonfinite": {"candidate": False, "reference": False, "from_finite_inputs": False},
    }


def _report(nodes, ranking=(), **extra):
    report = {
        "tool": "poly debug localize", "model": "cand.onnx", "reference": "onnx-ref",
        "candidate_runner": "onnxrt-runner", "reference_runner": "onnx-ref-runner", "samples": 3,
        "options": {"atol": 1e-5, "rtol": 1e-5, "check_error_stat": "elemwise"},
        "first_divergent": None, "first_nonfinite": None, "ranking": list(ranking), "nodes": nodes,
        "evaluations": {"segments": 5, "shadow_runs": 2}, "time_s": 1.23, "peak_rss_bytes": 123456789,
    }
    report.update(extra)
    return report


def _small_report():
    nodes = [
        _node("input_cast", 0, 0.0),
        _node("conv_1", 1, 0.01),
        _node("conv_3", 3, 3.2, own=2.5, inherited=0.7),
        _node("relu_4", 4, 4.0, own=0.1, inherited=3.9),
        _node("conv_7", 7, 40.0, own=30.0, inherited=10.0),
        _node("add_8", 8, 1.0, own=1.0, inherited=0.0),
        _node("out", 9, None),
    ]
    return _report(nodes, ["conv_7", "conv_3", "add_8", "relu_4"], first_divergent="conv_3")


# -- parsing ---------------------------------------------------------------------------------------


def _svg(page):
    match = re.search(r"<svg\b.*?</svg>", page, re.S)
    assert match, "no inline SVG"
    return ET.fromstring(match.group(0))


def _group(svg, cls):
    groups = [g for g in svg.iter(f"{SVG}g") if g.get("class") == cls]
    assert len(groups) == 1, cls
    return groups[0]


def _circles(svg, series):
    return [(float(c.get("cx")), float(c.get("cy"))) for c in _group(svg, f"series-{series}").iter(f"{SVG}circle")]


def _path_points(svg):
    paths = [p for p in svg.iter(f"{SVG}path") if p.get("class") == "series-error"]
    assert len(paths) == 1
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", paths[0].get("d"))]
    return list(zip(numbers[::2], numbers[1::2], strict=True))


def _row_y(svg, label):
    """The y of a y-axis label's row (text baselines sit 4 px under their row)."""
    texts = [t for t in _group(svg, "y-axis").iter(f"{SVG}text") if t.text == label]
    assert len(texts) == 1, label
    return float(texts[0].get("y")) - 4


class _Page(HTMLParser):
    """Start tags in order and the cell texts of every table, by id."""

    def __init__(self, page):
        super().__init__()
        self.tags, self.tables, self.text = [], {}, []
        self._table = self._row = self._cell = None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "table":
            self._table = self.tables.setdefault(attrs.get("id"), [])
        elif tag == "tr" and self._table is not None:
            self._row = []
            self._table.append(self._row)
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


# -- the plot --------------------------------------------------------------------------------------


def test_the_plot_has_one_point_per_node_per_series_in_topological_order():
    report = _small_report()
    svg = _svg(render_html(report))
    count = len(report["nodes"])
    own, inherited, error = _circles(svg, "own"), _circles(svg, "inherited"), _path_points(svg)
    assert len(own) == len(inherited) == len(error) == count
    # x follows the node's index (not its position): 1 -> 3 leaves a gap twice as wide as 3 -> 4
    xs = [x for x, _ in own]
    assert xs == sorted(xs) and len(set(xs)) == count
    assert [x for x, _ in inherited] == xs == [x for x, _ in error]
    assert (xs[2] - xs[1]) == pytest.approx(2 * (xs[3] - xs[2]), abs=0.2)


def test_severities_are_on_a_log_scale_with_the_tolerance_line_labelled_at_one():
    svg = _svg(render_html(_small_report()))
    own = _circles(svg, "own")
    y_30, y_2_5, y_0_1, y_1 = own[4][1], own[2][1], own[3][1], own[5][1]
    assert y_30 < y_2_5 < y_1 < y_0_1  # larger severities higher up
    decade = _row_y(svg, "0.1") - _row_y(svg, "1")
    assert decade > 0
    assert _row_y(svg, "1") - _row_y(svg, "10") == pytest.approx(decade, abs=0.2)
    assert y_0_1 == pytest.approx(_row_y(svg, "0.1"), abs=0.2)
    assert y_30 == pytest.approx(_row_y(svg, "10") - math.log10(3) * decade, abs=0.2)

    tolerance = _group(svg, "tolerance")
    line = tolerance.find(f"{SVG}line")
    label = tolerance.find(f"{SVG}text")
    assert label is not None and "tolerance" in label.text
    line_y = float(line.get("y1"))
    assert float(line.get("y2")) == line_y
    assert line_y == pytest.approx(_row_y(svg, "1"), abs=0.2)
    assert line_y == pytest.approx(y_1, abs=0.2)
    assert abs(float(label.get("y")) - line_y) <= 6  # the label sits on its line
    assert line.get("stroke-dasharray")
    # the y axis is labelled
    texts = [t.text or "" for t in _group(svg, "y-axis").iter(f"{SVG}text")]
    assert any("severity" in t for t in texts)


def test_zero_and_absent_values_are_drawn_on_the_bottom_row_not_as_tiny_numbers():
    report = _small_report()
    report["nodes"].append(_node("tiny", 10, 1e-6, own=1e-6, inherited=0.0))
    svg = _svg(render_html(report))
    bottom = _row_y(svg, "0 / none")
    lowest_decade = max(float(t.get("y")) - 4 for t in _group(svg, "y-axis").iter(f"{SVG}text")
                        if re.fullmatch(r"[0-9.e+-]+", t.text or ""))
    assert bottom > lowest_decade
    own, inherited, error = _circles(svg, "own"), _circles(svg, "inherited"), _path_points(svg)
    assert own[0][1] == bottom and inherited[0][1] == bottom  # own and inherited absent
    assert error[0][1] == bottom  # severity 0
    assert error[6][1] == bottom  # severity null
    assert inherited[5][1] == bottom  # inherited 0.0
    # a real tiny value stays on the log scale: the axis reaches down to it
    assert own[7][1] == pytest.approx(lowest_decade, abs=0.2)
    assert own[7][1] < bottom
    assert error[7][1] < bottom


def test_inf_and_nan_severities_are_drawn_on_the_top_row_with_a_note():
    report = _small_report()
    report["nodes"][4]["own"]["worst"]["severity"] = math.inf
    report["nodes"][4]["error"]["worst"]["severity"] = "nan"  # as JSON writers without NaN give it
    report["nodes"][3]["inherited"]["worst"]["severity"] = float("nan")
    page = render_html(report)
    svg = _svg(page)
    top = _row_y(svg, "Inf/NaN")
    own, inherited, error = _circles(svg, "own"), _circles(svg, "inherited"), _path_points(svg)
    assert own[4][1] == top and error[4][1] == top and inherited[3][1] == top
    highest_decade = min(float(t.get("y")) - 4 for t in _group(svg, "y-axis").iter(f"{SVG}text")
                         if re.fullmatch(r"[0-9.e+-]+", t.text or ""))
    assert top < highest_decade
    assert all(math.isfinite(y) for _, y in own + inherited + error)
    notes = [t for t in _Page(page).text if "infinite or NaN" in t]
    assert len(notes) == 1 and "2 node(s)" in notes[0] and "conv_7" in notes[0] and "relu_4" in notes[0]
    # the table says inf, not a number
    rows = _Page(page).tables["ranking"]
    assert rows[1][1] == "conv_7" and rows[1][4] == "inf"


def test_no_inf_note_without_infinite_values():
    page = render_html(_small_report())
    assert "infinite or NaN" not in page


def test_failed_nodes_are_marked_at_their_x():
    report = _small_report()
    svg = _svg(render_html(report))
    xs = [x for x, _ in _circles(svg, "own")]
    marks = [float(line.get("x1")) for line in _group(svg, "failed-nodes").iter(f"{SVG}line")]
    failed = [i for i, node in enumerate(report["nodes"]) if node["passed"] is False]
    assert failed == [2, 3, 4]
    assert marks == [xs[i] for i in failed]


def test_the_ranked_nodes_are_labelled_near_their_point():
    report = _small_report()
    svg = _svg(render_html(report))
    labels = [t for t in _group(svg, "rank-labels").iter(f"{SVG}text")]
    assert sorted(t.text for t in labels) == ["#1 conv_7", "#2 conv_3", "#3 add_8", "#4 relu_4"]
    xs = [x for x, _ in _circles(svg, "own")]
    by_index = {"conv_7": 4, "conv_3": 2, "add_8": 5, "relu_4": 3}
    for text in labels:
        name = text.text.split(" ", 1)[1]
        centre = float(text.get("x")) + len(text.text) * CHAR_W / 2
        assert abs(centre - xs[by_index[name]]) < len(text.text) * CHAR_W  # over its node


def test_every_caption_fits_in_the_plot_and_rank_labels_do_not_overlap():
    long = "/model/encoder/layers.11/attention/self/query/MatMul_with_a_really_long_generated_name_" * 2
    nodes = [_node(f"n{i}", i, 0.5) for i in range(40)]
    nodes += [_node(long, 40, 9.0, own=9.0, inherited=0.1), _node(long + "_2", 41, 8.0, own=8.0, inherited=0.1),
              _node("x", 42, 7.0, own=7.0, inherited=0.1)]
    svg = _svg(render_html(_report(nodes, [long, long + "_2", "x"])))
    width, height = float(svg.get("width")), float(svg.get("height"))
    spans = []
    for text in svg.iter(f"{SVG}text"):
        if text.get("transform"):  # the rotated axis title
            assert float(text.get("y")) - len(text.text) * CHAR_W / 2 >= 0
            continue
        w = len(text.text) * CHAR_W
        x = float(text.get("x"))
        anchor = text.get("text-anchor") or next(
            (g.get("text-anchor") for g in svg.iter(f"{SVG}g") if text in list(g) and g.get("text-anchor")), "start")
        left = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
        assert 0 <= left and left + w <= width, text.text
        assert 0 < float(text.get("y")) <= height, text.text
        if text.get("class") == "rank-label":
            spans.append((float(text.get("y")), left, left + w))
    assert len(spans) == 3
    for i, (y, a, b) in enumerate(spans):
        for y2, a2, b2 in spans[i + 1:]:
            assert y != y2 or b <= a2 or b2 <= a, "two rank labels overlap"


def test_thousands_of_nodes_stay_readable_and_small():
    count = 5000
    nodes = [_node(f"/model/block_{i // 10}/op_{i}", i, 0.5 * (1 + i % 3), passed=i % 3 == 0) for i in range(count)]
    for i in range(100, 5000, 500):
        nodes[i]["own"] = {"worst": _stat(float(i)), "median": _stat(1.0)}
        nodes[i]["inherited"] = {"worst": _stat(0.5), "median": _stat(0.5)}
    ranking = [nodes[i]["name"] for i in range(4600, 0, -500)]
    page = render_html(_report(nodes, ranking))
    assert len(page) < 3_000_000
    svg = _svg(page)
    assert len(_circles(svg, "own")) == len(_circles(svg, "inherited")) == len(_path_points(svg)) == count
    assert len([t for t in svg.iter(f"{SVG}text") if t.get("class") == "rank-label"]) == 5
    assert len(list(svg.iter(f"{SVG}text"))) < 40  # ticks, rows, legend and 5 labels: no per-point labels
    assert all(float(c.get("r")) <= 1.5 for c in _group(svg, "series-own").iter(f"{SVG}circle"))
    assert float(svg.get("width")) <= 1400
    # the x tick labels do not touch each other
    ticks = sorted(float(t.get("x")) for t in _group(svg, "x-axis").iter(f"{SVG}text")
                   if (t.text or "").isdigit())
    assert len(ticks) >= 3
    assert all(b - a > len(str(count)) * CHAR_W for a, b in zip(ticks, ticks[1:], strict=False))
    # the table of every node is collapsed
    parsed = _Page(page)
    assert re.search(r'<details><summary>[^<]*</summary><table id="nodes">.*</table></details>', page, re.S)
    assert len(parsed.tables["nodes"]) == count + 1


def test_the_node_table_is_open_up_to_200_rows():
    page = render_html(_report([_node(f"n{i}", i, 0.1) for i in range(200)]))
    assert "<details" not in page and len(_Page(page).tables["nodes"]) == 201
    page = render_html(_report([_node(f"n{i}", i, 0.1) for i in range(201)]))
    assert "<details" in page and len(_Page(page).tables["nodes"]) == 202


# -- the page --------------------------------------------------------------------------------------


def test_the_header_names_the_node_to_blame_and_the_first_bad_nodes():
    report = _small_report()
    report["first_nonfinite"] = "relu_4"
    parsed = _Page(render_html(report))
    text = " ".join(parsed.text)
    h1 = re.search(r"<h1[^>]*>(.*?)</h1>", render_html(report), re.S).group(1)
    assert "conv_7" in h1 and "to blame" in h1
    cards = re.findall(r'<div class="card">(.*?)<b>(.*?)</b></div>', render_html(report))
    assert ("first divergent node", "conv_3") in cards
    assert ("first NaN/Inf from finite inputs", "relu_4") in cards
    assert "cand.onnx (onnxrt-runner)" in text and "onnx-ref (onnx-ref-runner)" in text


def test_no_divergence_when_the_ranking_is_empty():
    page = render_html(_report([_node("a", 0, 0.1), _node("b", 1, 0.2)]))
    h1 = re.search(r"<h1[^>]*>(.*?)</h1>", page, re.S).group(1)
    assert "no divergence" in h1 and "to blame" not in h1
    assert "ranking" not in _Page(page).tables
    assert not list(_group(_svg(page), "rank-labels").iter(f"{SVG}text"))


def test_ranking_rows_are_in_ranking_order_with_own_and_inherited_severities():
    report = _small_report()
    rows = _Page(render_html(report)).tables["ranking"]
    assert rows[0][:8] == ["rank", "node", "op", "outputs", "own worst", "own median", "inherited worst",
                           "inherited median"]
    assert "TensorRT layers" not in rows[0]
    body = rows[1:]
    assert [r[0] for r in body] == ["1", "2", "3", "4"]
    assert [r[1] for r in body] == report["ranking"]
    assert body[0][2:8] == ["Conv", "conv_7_out", "30", "15", "10", "10"]
    assert body[3][4:6] == ["0.1", "0.05"]


def test_ranking_shows_tensorrt_layers_when_known():
    report = _small_report()
    report["nodes"][4]["trt_layers"] = ["conv_7 + relu", "reformat"]
    rows = _Page(render_html(report)).tables["ranking"]
    assert rows[0][-1] == "TensorRT layers"
    assert rows[1][-1] == "conv_7 + relu, reformat" and rows[2][-1] == "-"


def test_ranking_shows_why_a_node_has_no_own_error():
    report = _small_report()
    assert "shadow run errors" not in _Page(render_html(report)).tables["ranking"][0]
    report["nodes"][2].update(own=None, inherited=None, shadow_errors=["<Conv> failed alone"])
    rows = _Page(render_html(report)).tables["ranking"]
    assert rows[0][-1] == "shadow run errors"
    assert rows[2][1] == "conv_3" and rows[2][4:8] == ["-", "-", "-", "-"] and rows[2][-1] == "<Conv> failed alone"
    assert rows[1][-1] == "-"


def test_sections_come_in_order_and_the_run_is_summarised():
    page = render_html(_small_report())
    positions = [page.index(marker) for marker in
                 ('<h1 id="verdict"', "<svg", '<table id="ranking"', '<table id="nodes"', '<table id="run"')]
    assert positions == sorted(positions)
    run = dict(row for row in _Page(page).tables["run"])
    assert run["samples"] == "3" and run["atol"] == "1e-05" and run["check_error_stat"] == "elemwise"
    assert run["segments"] == "5" and run["shadow runs"] == "2"
    assert run["time"] == "1.23 s" and run["peak RSS"] == "117.7 MiB"


def test_the_page_is_self_contained():
    page = render_html(_small_report())
    parsed = _Page(page)
    tags = {tag for tag, _ in parsed.tags}
    assert not tags & {"script", "link", "img", "iframe", "object"}
    for _, attrs in parsed.tags:
        for key, value in attrs.items():
            assert key not in ("src", "href") and not key.startswith("on"), (key, value)


def test_every_name_is_escaped():
    bad = '<script>alert("x")</script>&'
    report = _small_report()
    node = report["nodes"][4]
    node.update(name=bad, op=bad, outputs=[bad], trt_layers=[bad])
    report.update(ranking=[bad, "conv_3"], first_divergent=bad, first_nonfinite=bad, model=bad, reference=bad,
                  candidate_runner=bad, reference_runner=bad, tool=bad, options={bad: bad})
    report["nodes"][4]["own"]["worst"]["severity"] = math.inf  # named in the note under the plot
    page = render_html(report)
    parsed = _Page(page)
    assert "script" not in {tag for tag, _ in parsed.tags}
    assert "<script" not in page
    assert page.count("&lt;script&gt;") >= 10
    svg = _svg(page)  # still well-formed: the name comes back whole from the parser
    assert any(t.text == f"#1 {bad}" for t in svg.iter(f"{SVG}text"))
    assert parsed.tables["ranking"][1][1] == bad
    assert any(row[1] == bad for row in parsed.tables["nodes"][1:])


def test_tooltips_name_each_point_in_small_graphs():
    svg = _svg(render_html(_small_report()))
    titles = [c.find(f"{SVG}title").text for c in _group(svg, "series-own").iter(f"{SVG}circle")]
    assert titles[4].startswith("conv_7:") and "30" in titles[4]
    assert "not measured" in titles[0]


def test_an_empty_report_renders():
    page = render_html(_report([], first_divergent=None))
    assert "<svg" not in page
    assert "No node was compared" in page
    assert "no divergence" in page
    _Page(page)
    page = render_html({"nodes": None, "ranking": None})
    assert "no divergence" in page and "<table id=\"run\">" in page


def test_a_report_without_own_errors_renders():
    nodes = [_node(f"n{i}", i, 2.0 if i > 2 else 0.5) for i in range(6)]
    page = render_html(_report(nodes, ["n5"]))
    svg = _svg(page)
    bottom = _row_y(svg, "0 / none")
    assert all(y == bottom for _, y in _circles(svg, "own") + _circles(svg, "inherited"))
    # the ranked node's label points at its full-run error instead
    leader = _group(svg, "rank-labels").find(f"{SVG}line")
    assert float(leader.get("y2")) == pytest.approx(_path_points(svg)[5][1], abs=0.1)
    assert _Page(page).tables["ranking"][1][4:8] == ["-", "-", "-", "-"]
