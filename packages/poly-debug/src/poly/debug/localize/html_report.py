"""
The HTML page of a ``poly debug localize`` report: a self-contained document (inline CSS and SVG,
no scripts, no network) with the verdict, a plot of the error along the graph, the ranking of the
nodes to blame, every compared node and the run's options. It follows the look of ``poly
validate``'s report (``poly.compare.dataset.report``).

The plot: x is the node's index in topological order, y its severity (how many times over the
tolerance its worst sample is; 1 is the tolerance) on a log scale. Three series: the node's own
error (the node alone on the reference's inputs), the error it inherits from upstream, and the
full-run error as a line. Values that a log scale cannot show have rows of their own: zero or
absent at the bottom ("0 / none"), infinite or NaN at the top ("Inf/NaN"). Failed nodes are ticked
on a lane under the plot; only the five nodes ranked first are labelled.
"""

from __future__ import annotations

import html
import json
import math
import unicodedata
from typing import Any

__all__ = ["render_html"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em;color:#222;background:#fafafa}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}
.cards{display:flex;gap:1em;flex-wrap:wrap}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.8em 1.2em;min-width:8em}
.card b{display:block;font-size:1.2em;overflow-wrap:anywhere}
.passed{color:#1a7f37}.failed{color:#cf222e}.note{color:#9a6700}
table{border-collapse:collapse;background:#fff;margin:.5em 0}
th,td{border:1px solid #ddd;padding:.3em .7em;text-align:right;font-variant-numeric:tabular-nums}
th{background:#f0f0f0}td.l,th.l{text-align:left}
#nodes td:nth-child(-n+5),#nodes th:nth-child(-n+5),#nodes td:nth-child(n+13),#nodes th:nth-child(n+13){text-align:left}
#nodes td:first-child,#nodes th:first-child{text-align:right}
figure{margin:0;background:#fff;border:1px solid #ddd;border-radius:6px;padding:.5em;display:inline-block;max-width:100%;overflow-x:auto}
figcaption{font-size:.9em;color:#555}
summary{cursor:pointer}
"""

# -- formatting ------------------------------------------------------------------------------------


def _num(value: Any) -> float | None:
    """A number of the report as a float: JSON writers may give inf and NaN as strings."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _fmt(value: Any) -> str:
    """A table cell's text, escaped: "-" for null, 4 significant digits for floats."""
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return html.escape(", ".join(str(v) for v in value)) if value else "-"
    if isinstance(value, dict):
        return html.escape(json.dumps(value, default=str))
    return html.escape(str(value))


def _sev_cell(value: Any) -> str:
    """A severity's table cell, red above the tolerance."""
    sev = _num(value)
    if sev is None:
        return "<td>-</td>"
    failed = math.isnan(sev) or sev > 1
    return f'<td class="failed">{_fmt(sev)}</td>' if failed else f"<td>{_fmt(sev)}</td>"


def _stat(node: dict[str, Any], key: str, which: str = "worst", field: str = "severity") -> Any:
    """``node[key][which][field]``, or None where any level is missing."""
    part = node.get(key)
    if not isinstance(part, dict):
        return None
    part = part.get(which)
    return part.get(field) if isinstance(part, dict) else None


def _bytes(value: Any) -> str:
    size = _num(value)
    if size is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{size:.0f} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return "-"  # pragma: no cover


# -- the plot --------------------------------------------------------------------------------------

_FONT = 11
"""Font size of every text in the plot (monospace, so that widths can be computed)."""
_ADVANCE = 0.62
"""Advance of one monospace character, in em (0.6 in common monospace fonts, plus a margin)."""
_LANE = 15
_TOP_LABELS = 5
_TOOLTIP_LIMIT = 500
"""Up to this many nodes, every marker carries a tooltip with the node's name and value."""
_COLORS = {"own": "#0969da", "inherited": "#bf8700", "error": "#6e7781", "failed": "#cf222e"}
_SERIES = (("own", "own (node alone)"), ("inherited", "inherited (from upstream)"))


def _text_width(text: str, size: float = _FONT) -> float:
    """The width of ``text`` in the plot's monospace font; wide (East Asian) characters count twice."""
    cells = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
    return cells * _ADVANCE * size


def _is_inf_or_nan(value: float | None) -> bool:
    """Drawn on the top row: +inf and NaN (-inf, like zero, is on the bottom one)."""
    return value is not None and (math.isnan(value) or value == math.inf)


def _decade_label(k: int) -> str:
    return f"{10.0 ** k:g}" if -3 <= k <= 4 else f"1e{k}"


class _Scale:
    """Severity to y: a log scale between two decades, with a row above for Inf/NaN and one
    below for zero or absent values."""

    def __init__(self, values: list[float], top: float, height: float) -> None:
        positive = [v for v in values if math.isfinite(v) and v > 0]
        lo = min((math.floor(math.log10(v)) for v in positive), default=-2)
        hi = max((math.ceil(math.log10(v)) for v in positive), default=1)
        lo, hi = min(lo, -1), max(hi, 1)  # the tolerance (1) always lies inside
        self.step = max(1, math.ceil((hi - lo) / 8))  # at most 9 decade labels
        self.lo, self.hi = math.floor(lo / self.step) * self.step, math.ceil(hi / self.step) * self.step
        self.inf_y = top
        self.top = top + 14
        self.bottom = self.top + height
        self.zero_y = self.bottom + 14

    def y(self, value: float | None) -> float:
        if value is None or value <= 0 or value == -math.inf:
            return self.zero_y
        if not math.isfinite(value):  # inf and NaN
            return self.inf_y
        frac = (math.log10(value) - self.lo) / (self.hi - self.lo)
        return self.bottom - frac * (self.bottom - self.top)

    def ticks(self) -> list[int]:
        return list(range(self.lo, self.hi + 1, self.step))


def _x_ticks(lo: float, hi: float, width: float, label_width: float) -> list[int]:
    """Round node indices for the x axis, spaced so that their labels do not touch."""
    span = max(hi - lo, 1)
    for exp in range(0, 12):
        for mult in (1, 2, 5):
            step = mult * 10**exp
            if step * width / span >= max(label_width + 12, 70):
                first = math.ceil(lo / step) * step
                return list(range(int(first), int(hi) + 1, step))
    return [int(lo)]  # pragma: no cover


def _svg_plot(nodes: list[dict[str, Any]], ranking: list[str]) -> tuple[str, list[str]]:
    """The inline SVG of the error along the graph, and the notes to print under it."""
    count = len(nodes)
    esc = html.escape
    indices = [_num(n.get("index")) for n in nodes]
    xs = [float(i) if x is None or not math.isfinite(x) else x for i, x in enumerate(indices)]
    series = {
        "error": [_num(_stat(n, "error")) for n in nodes],
        "own": [_num(_stat(n, "own")) for n in nodes],
        "inherited": [_num(_stat(n, "inherited")) for n in nodes],
    }
    every = [v for values in series.values() for v in values if v is not None]
    plot_w = min(max(560, 6 * count), 1100)
    plot_h = max(220, _text_width("severity (× tolerance, log)") + 30)
    radius = 3.0 if count <= 200 else 2.0 if count <= 1000 else 1.2
    stroke = 1.2 if count <= 1000 else 0.6

    # margins from the widths of the labels they hold
    scale = _Scale(every, 0.0, plot_h)
    row_labels = ["Inf/NaN", "0 / none", "failed"]
    tick_labels = [_decade_label(k) for k in scale.ticks()]
    left = 8 + _FONT + 8 + max(_text_width(t) for t in tick_labels + row_labels) + 8
    tolerance_label = "tolerance"
    right = _text_width(tolerance_label) + 14
    width = left + plot_w + right

    # the ranked nodes' labels, in lanes above the plot so that no two overlap
    by_name: dict[str, int] = {}
    for i, node in enumerate(nodes):
        by_name.setdefault(str(node.get("name")), i)
    labelled = [(rank, name, by_name[name]) for rank, name in enumerate(ranking[:_TOP_LABELS], 1)
                if name in by_name]
    texts = [f"#{rank} {name}" for rank, name, _ in labelled]
    width = max([width] + [_text_width(t) + 16 for t in texts])
    lo_x, hi_x = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if hi_x == lo_x:
        lo_x, hi_x = lo_x - 0.5, hi_x + 0.5
    inset = 6.0

    def px(x: float) -> float:
        return left + inset + (x - lo_x) / (hi_x - lo_x) * (plot_w - 2 * inset)

    lanes: list[list[tuple[float, float]]] = []
    placed: list[tuple[int, str, float, int]] = []
    for (_, _, i), text in sorted(zip(labelled, texts, strict=True), key=lambda item: xs[item[0][2]]):
        w = _text_width(text)
        lx = min(max(px(xs[i]) - w / 2, 8.0), width - 8 - w)
        free = [lane for lane, spans in enumerate(lanes) if all(lx + w + 6 <= a or lx >= b + 6 for a, b in spans)]
        if not free:
            lanes.append([])
        lane = free[0] if free else len(lanes) - 1
        lanes[lane].append((lx, lx + w))
        placed.append((i, text, lx, lane))
    top = 14 + len(lanes) * _LANE + (6 if lanes else 0)
    scale = _Scale(every, top, plot_h)
    fail_y = scale.zero_y + 14
    axis_y = fail_y + 9
    tick_y = axis_y + 4 + _FONT
    title_y = tick_y + 6 + _FONT

    # the legend, wrapped to the plot's width
    legend = [("own", "own (node alone on reference inputs)"), ("inherited", "inherited (from upstream)"),
              ("error", "full-run error"), ("failed", "failed node"), ("tolerance", "tolerance (severity 1)")]
    legend_rows: list[list[tuple[str, str, float]]] = [[]]
    cursor = 8.0
    for key, text in legend:
        item_w = 18 + _text_width(text) + 16
        if legend_rows[-1] and cursor + item_w > width - 8:
            legend_rows.append([])
            cursor = 8.0
        legend_rows[-1].append((key, text, cursor))
        cursor += item_w
    legend_y = title_y + 8 + _FONT
    height = legend_y + (len(legend_rows) - 1) * _LANE + 8

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" id="plot" width="{width:.0f}" height="{height:.0f}" '
           f'font-family="monospace" font-size="{_FONT}" role="img" aria-label="severity along the graph">',
           f'<rect x="0" y="0" width="{width:.0f}" height="{height:.0f}" fill="#fff"/>']
    right_x = left + plot_w
    # grid, axis breaks, tolerance
    out.append('<g class="grid" stroke="#eee">')
    out.extend(f'<line x1="{left:.1f}" y1="{scale.y(10.0 ** k):.1f}" x2="{right_x:.1f}" y2="{scale.y(10.0 ** k):.1f}"/>'
               for k in scale.ticks())
    out.append("</g>")
    out.append(f'<rect x="{left:.1f}" y="{scale.top:.1f}" width="{plot_w}" height="{plot_h:.1f}" fill="none" stroke="#999"/>')
    for y in (scale.inf_y, scale.zero_y, fail_y):
        out.append(f'<line x1="{left:.1f}" y1="{y:.1f}" x2="{right_x:.1f}" y2="{y:.1f}" stroke="#ddd" '
                   'stroke-dasharray="2 3"/>')
    tol_y = scale.y(1.0)
    out.append(f'<g class="tolerance"><line x1="{left:.1f}" y1="{tol_y:.1f}" x2="{right_x:.1f}" y2="{tol_y:.1f}" '
               f'stroke="{_COLORS["failed"]}" stroke-dasharray="5 3"/>'
               f'<text x="{right_x + 4:.1f}" y="{tol_y + 4:.1f}" fill="{_COLORS["failed"]}">{tolerance_label}</text></g>')
    # y axis
    out.append('<g class="y-axis" text-anchor="end">')
    for k, label in zip(scale.ticks(), tick_labels, strict=True):
        y = scale.y(10.0**k)
        out.append(f'<line x1="{left - 4:.1f}" y1="{y:.1f}" x2="{left:.1f}" y2="{y:.1f}" stroke="#555"/>'
                   f'<text x="{left - 6:.1f}" y="{y + 4:.1f}">{label}</text>')
    for y, label in zip((scale.inf_y, scale.zero_y, fail_y), row_labels, strict=True):
        out.append(f'<text x="{left - 6:.1f}" y="{y + 4:.1f}">{label}</text>')
    mid = (scale.top + scale.bottom) / 2
    out.append(f'<text x="{8 + _FONT:.1f}" y="{mid:.1f}" text-anchor="middle" '
               f'transform="rotate(-90 {8 + _FONT:.1f} {mid:.1f})">severity (× tolerance, log)</text></g>')
    # x axis
    xlabel_w = _text_width(str(int(hi_x)) if hi_x >= 0 else str(int(lo_x)))
    out.append(f'<g class="x-axis" text-anchor="middle"><line x1="{left:.1f}" y1="{axis_y:.1f}" x2="{right_x:.1f}" '
               f'y2="{axis_y:.1f}" stroke="#555"/>')
    for tick in _x_ticks(lo_x, hi_x, plot_w - 2 * inset, xlabel_w) if nodes else []:
        x = px(tick)
        out.append(f'<line x1="{x:.1f}" y1="{axis_y:.1f}" x2="{x:.1f}" y2="{axis_y + 4:.1f}" stroke="#555"/>'
                   f'<text x="{x:.1f}" y="{tick_y:.1f}">{tick}</text>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{title_y:.1f}">node index (topological order)</text></g>')

    # the series
    tips = count <= _TOOLTIP_LIMIT

    def tip(i: int, label: str, value: float | None) -> str:
        if not tips:
            return ""
        shown = "not measured" if value is None else _fmt(value)
        return f"<title>{esc(str(nodes[i].get('name')))}: {label} {shown}</title>"

    points = [f"{px(x):.1f} {scale.y(v):.1f}" for x, v in zip(xs, series["error"], strict=True)]
    if points:
        out.append(f'<path class="series-error" d="M{points[0]}{"L" if len(points) > 1 else ""}{" ".join(points[1:])}" '
                   f'fill="none" stroke="{_COLORS["error"]}" stroke-width="{stroke}"/>')
    out.append(f'<g class="failed-nodes" stroke="{_COLORS["failed"]}" stroke-width="{max(stroke, 1)}">')
    for i, node in enumerate(nodes):
        if node.get("passed") is False:
            x = px(xs[i])
            out.append(f'<line x1="{x:.1f}" y1="{fail_y - 5:.1f}" x2="{x:.1f}" y2="{fail_y + 5:.1f}">'
                       f'{tip(i, "failed, severity", series["error"][i])}</line>')
    out.append("</g>")
    for key, label in _SERIES:
        color = _COLORS[key]
        style = f'fill="{color}" fill-opacity="0.8"' if key == "own" else f'fill="none" stroke="{color}"'
        out.append(f'<g class="series-{key}" {style}>')
        for i, (x, v) in enumerate(zip(xs, series[key], strict=True)):
            body = tip(i, label, v)
            end = f">{body}</circle>" if body else "/>"
            out.append(f'<circle cx="{px(x):.1f}" cy="{scale.y(v):.1f}" r="{radius}"{end}')
        out.append("</g>")

    # the ranked nodes' labels, with a leader line to their point (own error, else the full-run one)
    # (leaders first, texts over them on a white halo)
    out.append('<g class="rank-labels">')
    for i, _, _, lane in placed:
        value = series["own"][i] if series["own"][i] is not None else series["error"][i]
        x, y = px(xs[i]), scale.y(value)
        out.append(f'<line x1="{x:.1f}" y1="{10 + lane * _LANE + _FONT + 3:.1f}" x2="{x:.1f}" y2="{y:.1f}" '
                   'stroke="#444" stroke-width="0.6" stroke-dasharray="2 2"/>')
    for _, text, lx, lane in placed:
        out.append(f'<text class="rank-label" x="{lx:.1f}" y="{10 + lane * _LANE + _FONT:.1f}" font-weight="bold" '
                   f'stroke="#fff" stroke-width="3" paint-order="stroke">{esc(text)}</text>')
    out.append("</g>")

    # legend
    out.append('<g class="legend">')
    for row, items in enumerate(legend_rows):
        y = legend_y + row * _LANE
        for key, text, x in items:
            if key in ("own", "inherited"):
                style = f'fill="{_COLORS[key]}"' if key == "own" else f'fill="none" stroke="{_COLORS[key]}"'
                out.append(f'<circle cx="{x + 7:.1f}" cy="{y - 4:.1f}" r="3.5" {style}/>')
            elif key == "failed":
                out.append(f'<line x1="{x + 7:.1f}" y1="{y - 9:.1f}" x2="{x + 7:.1f}" y2="{y + 1:.1f}" '
                           f'stroke="{_COLORS["failed"]}"/>')
            else:
                dash = ' stroke-dasharray="5 3"' if key == "tolerance" else ""
                color = _COLORS["failed" if key == "tolerance" else "error"]
                out.append(f'<line x1="{x:.1f}" y1="{y - 4:.1f}" x2="{x + 14:.1f}" y2="{y - 4:.1f}" '
                           f'stroke="{color}"{dash}/>')
            out.append(f'<text x="{x + 18:.1f}" y="{y:.1f}">{esc(text)}</text>')
    out.append("</g></svg>")

    notes = []
    nonfinite = [i for i in range(count) if any(_is_inf_or_nan(values[i]) for values in series.values())]
    if nonfinite:
        names = ", ".join(str(nodes[i].get("name")) for i in nonfinite[:5])
        more = f" and {len(nonfinite) - 5} more" if len(nonfinite) > 5 else ""
        notes.append(f"{len(nonfinite)} node(s) with an infinite or NaN severity are drawn on the top row "
                     f"(Inf/NaN): {names}{more}.")
    if any(v is None for v in series["own"]):
        notes.append("Own and inherited errors are measured only for divergent nodes: the others' are drawn "
                     "on the bottom row (0 / none), with zero errors.")
    if not tips:
        notes.append(f"More than {_TOOLTIP_LIMIT} nodes: markers carry no tooltips; see the tables below.")
    return "".join(out), notes


# -- the page --------------------------------------------------------------------------------------


def _ranking_table(report: dict[str, Any], by_name: dict[str, dict[str, Any]]) -> str:
    ranking = [str(name) for name in report.get("ranking") or []]
    rows = [by_name.get(name, {"name": name}) for name in ranking]
    trt = any(row.get("trt_layers") for row in rows)
    errors = any(row.get("shadow_errors") for row in rows)
    out = ['<table id="ranking"><tr><th>rank</th><th class="l">node</th><th class="l">op</th>'
           '<th class="l">outputs</th><th>own worst</th><th>own median</th><th>inherited worst</th>'
           "<th>inherited median</th>" + ('<th class="l">TensorRT layers</th>' if trt else "")
           + ('<th class="l">shadow run errors</th>' if errors else "") + "</tr>"]
    for rank, (name, node) in enumerate(zip(ranking, rows, strict=True), 1):
        out.append(f'<tr><td>{rank}</td><td class="l">{html.escape(name)}</td><td class="l">{_fmt(node.get("op"))}</td>'
                   f'<td class="l">{_fmt(node.get("outputs"))}</td>'
                   + "".join(_sev_cell(_stat(node, key, which)) for key in ("own", "inherited")
                             for which in ("worst", "median"))
                   + (f'<td class="l">{_fmt(node.get("trt_layers"))}</td>' if trt else "")
                   + (f'<td class="l">{_fmt(node.get("shadow_errors"))}</td>' if errors else "") + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _nonfinite_text(node: dict[str, Any]) -> str:
    flags = node.get("nonfinite") or {}
    sides = [side for side in ("candidate", "reference") if flags.get(side)]
    if not sides:
        return "-"
    return " + ".join(sides) + (" (from finite inputs)" if flags.get("from_finite_inputs") else "")


def _verdict_cell(passed: Any) -> str:
    if passed is None:
        return "<td>-</td>"
    return '<td class="passed">passed</td>' if passed else '<td class="failed">FAILED</td>'


def _nodes_table(nodes: list[dict[str, Any]]) -> str:
    trt = any(node.get("trt_layers") for node in nodes)
    head = ("<tr><th>index</th><th>node</th><th>op</th><th>outputs</th><th>verdict</th><th>worst</th>"
            "<th>median</th><th>max absdiff</th><th>max reldiff</th><th>rel L2</th><th>own worst</th>"
            "<th>inherited worst</th><th>own verdict</th><th>NaN/Inf</th>"
            + ("<th>TensorRT layers</th>" if trt else "") + "</tr>")
    out = ['<table id="nodes">', head]
    for node in nodes:
        out.append(f"<tr><td>{_fmt(node.get('index'))}</td><td>{_fmt(node.get('name'))}</td>"
                   f"<td>{_fmt(node.get('op'))}</td><td>{_fmt(node.get('outputs'))}</td>{_verdict_cell(node.get('passed'))}"
                   + _sev_cell(_stat(node, "error")) + _sev_cell(_stat(node, "error", "median"))
                   + "".join(f"<td>{_fmt(_num(_stat(node, 'error', 'worst', field)))}</td>"
                             for field in ("max_absdiff", "max_reldiff", "rel_l2"))
                   + _sev_cell(_stat(node, "own")) + _sev_cell(_stat(node, "inherited"))
                   + _verdict_cell(node.get("own_passed")) + f"<td>{_fmt(_nonfinite_text(node))}</td>"
                   + (f"<td>{_fmt(node.get('trt_layers'))}</td>" if trt else "") + "</tr>")
    out.append("</table>")
    return "\n".join(out)


_NODES_OPEN_LIMIT = 200
"""Beyond this many nodes, the table of every node is collapsed (``<details>``)."""


def render_html(report: dict[str, Any]) -> str:
    """The self-contained HTML page of a ``poly debug localize`` report dict (as written by
    ``--report-json``): verdict, error plot, ranking, every node, options."""
    esc = html.escape
    nodes = [n for n in report.get("nodes") or [] if isinstance(n, dict)]
    ranking = [str(name) for name in report.get("ranking") or []]
    by_name: dict[str, dict[str, Any]] = {}
    for node in nodes:
        by_name.setdefault(str(node.get("name")), node)
    tool = str(report.get("tool") or "poly debug localize")

    if ranking:
        verdict = f'<span class="failed">{esc(ranking[0])}</span> is to blame'
    else:
        verdict = '<span class="passed">no divergence</span>'
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{esc(tool)} report</title>", f"<style>{_CSS}</style></head><body>",
           f'<h1 id="verdict">{esc(tool)}: {verdict}</h1>']
    candidate = f"{report.get('model') or '-'}" + (f" ({report['candidate_runner']})"
                                                   if report.get("candidate_runner") else "")
    reference = f"{report.get('reference') or '-'}" + (f" ({report['reference_runner']})"
                                                       if report.get("reference_runner") else "")
    out.append(f"<p>Candidate <b>{esc(candidate)}</b> compared with <b>{esc(reference)}</b>.</p>")
    cards = [("to blame", ranking[0] if ranking else "none"),
             ("first divergent node", report.get("first_divergent") or "none"),
             ("first NaN/Inf from finite inputs", report.get("first_nonfinite") or "none"),
             ("divergent nodes", len(ranking)), ("compared nodes", len(nodes))]
    out.append('<div class="cards" id="summary">')
    out.extend(f'<div class="card">{esc(label)}<b>{_fmt(value)}</b></div>' for label, value in cards)
    out.append("</div>")

    out.append("<h2>Error along the graph</h2>")
    if nodes:
        svg, notes = _svg_plot(nodes, ranking)
        out.append(f"<figure>{svg}<figcaption>Severity of each node's worst sample: its error over the "
                   "tolerance (1 = the tolerance, above fails), by the node's index in topological order."
                   "</figcaption></figure>")
        out.extend(f'<p class="note">{esc(note)}</p>' for note in notes)
    else:
        out.append('<p class="note">No node was compared: nothing to plot.</p>')

    out.append("<h2>Ranking</h2>")
    if ranking:
        out.append("<p>Divergent nodes, most to blame first (by their own error).</p>")
        out.append(_ranking_table(report, by_name))
    else:
        out.append("<p>No divergent node.</p>")

    out.append("<h2>All nodes</h2>")
    if not nodes:
        out.append("<p>No node was compared.</p>")
    elif len(nodes) > _NODES_OPEN_LIMIT:
        out.append(f"<details><summary>{len(nodes)} nodes (expand)</summary>{_nodes_table(nodes)}</details>")
    else:
        out.append(_nodes_table(nodes))

    out.append("<h2>Run</h2>")
    rows: list[tuple[str, Any]] = [("samples", report.get("samples"))]
    rows.extend((str(k), v) for k, v in (report.get("options") or {}).items())
    rows.extend((str(k).replace("_", " "), v) for k, v in (report.get("evaluations") or {}).items())
    time_s = _num(report.get("time_s"))
    rows.append(("time", None if time_s is None else f"{time_s:.2f} s"))
    rows.append(("peak RSS", _bytes(report.get("peak_rss_bytes"))))
    out.append('<table id="run">')
    out.extend(f'<tr><th class="l">{esc(key)}</th><td class="l">{_fmt(value)}</td></tr>' for key, value in rows)
    out.append("</table></body></html>")
    return "\n".join(out) + "\n"
