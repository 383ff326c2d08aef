"""
Validation reports: a JSON document of the whole summary and a self-contained HTML page
(inline CSS and SVG, no scripts, no network) with the summary, a per-output table, error
histograms and the worst samples. Both are written atomically.
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

from poly.compare.dataset.accumulator import HISTOGRAM_EDGES
from poly.core import atomic_write_text

__all__ = ["build_report", "write_json_report", "render_html", "write_html_report"]

REPORT_FORMAT = "poly.validate.report"


def _sanitize(obj: Any) -> Any:
    # JSON has no NaN or Infinity: they are written as the strings "nan", "inf", "-inf".
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else str(obj)
    if isinstance(obj, dict):
        return {str(k): _sanitize(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_sanitize(v) for v in obj]
    return obj


def build_report(outcome: Any, config: Any = None) -> Any:
    """The report of a ``ValidationOutcome`` as a JSON-ready dict; ``config`` (model, runner,
    dataset, reference, tolerances...) is recorded as given."""
    acc = outcome.accumulator
    if outcome.interrupted:
        status = "interrupted"
    elif outcome.passed:
        status = "passed"
    else:
        status = "failed"
    report = {
        "format": REPORT_FORMAT, "version": 1, "status": status,
        "interrupted": outcome.interrupted, "stopped_early": outcome.stopped_early,
        "max_failures": outcome.max_failures, "elapsed_s": outcome.elapsed,
        "samples_per_second": outcome.samples_per_second, "config": dict(config or {}),
    }
    report.update(acc.to_dict())
    return _sanitize(report)


def write_json_report(report: dict, path: Any) -> None:  # type: ignore[type-arg]
    """Writes ``report`` as indented JSON, atomically."""
    atomic_write_text(path, json.dumps(report, indent=2, allow_nan=False) + "\n")


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em;color:#222;background:#fafafa}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}
.cards{display:flex;gap:1em;flex-wrap:wrap}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.8em 1.2em;min-width:8em}
.card b{display:block;font-size:1.4em}
.passed{color:#1a7f37}.failed{color:#cf222e}.interrupted{color:#9a6700}
table{border-collapse:collapse;background:#fff;margin:.5em 0}
th,td{border:1px solid #ddd;padding:.3em .7em;text-align:right;font-variant-numeric:tabular-nums}
th{background:#f0f0f0}td.l,th.l{text-align:left}
.plots{display:flex;gap:1.5em;flex-wrap:wrap}
figure{margin:0;background:#fff;border:1px solid #ddd;border-radius:6px;padding:.5em}
figcaption{font-size:.9em;color:#555}
"""


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return html.escape(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return html.escape(str(value))


_NAN_GAP = 5
"""Empty bar slots between the overflow bar (values >= 1e6, Inf included) and the NaN bar, so
that their "Inf" and "NaN" labels stay apart."""


def _svg_histogram(hist: dict, title: str, tolerance: Any = None) -> str:  # type: ignore[type-arg]
    """An inline SVG bar chart of one log-spaced histogram (log10 of the value on x): decade
    labels on a first row; "Inf" (under the overflow bar) and "NaN" (under the NaN bar, set
    apart by a gap) on a second, so that no two labels overlap."""
    counts = list(hist["counts"])
    nan = hist.get("nan", 0)
    width, height, pad = 440, 160, 28
    slots = len(counts) + _NAN_GAP + 1
    top = max(counts + [nan]) or 1
    bar_w = (width - 2 * pad) / slots
    nan_slot = slots - 1
    label_row, special_row = height + 14, height + 27
    parts = [f'<svg width="{width}" height="{height + 46}" '
             f'role="img" aria-label="{html.escape(title)}">',
             f'<rect x="0" y="0" width="{width}" height="{height + 46}" fill="#fff"/>']
    for i, count in [*enumerate(counts), (nan_slot, nan)]:
        if not count:
            continue
        h = (height - pad) * count / top
        x = pad + i * bar_w
        color = "#8250df" if i == nan_slot else "#0969da"
        parts.append(f'<rect x="{x:.1f}" y="{height - h:.1f}" width="{max(bar_w - 0.5, 0.5):.1f}" height="{h:.1f}" '
                     f'fill="{color}"><title>{count}</title></rect>')
    parts.append(f'<line x1="{pad}" y1="{height}" x2="{pad + len(counts) * bar_w:.1f}" y2="{height}" stroke="#555"/>')
    parts.append(f'<line x1="{pad + nan_slot * bar_w:.1f}" y1="{height}" x2="{pad + slots * bar_w:.1f}" '
                 f'y2="{height}" stroke="#555"/>')
    edges = HISTOGRAM_EDGES
    for decade in range(-12, 7, 3):
        i = 1 + (decade + 12) * 4  # the bin that starts at 10^decade
        x = pad + i * bar_w
        parts.append(f'<text x="{x:.1f}" y="{label_row}" font-size="10" text-anchor="middle">1e{decade}</text>')
    for i, label in ((len(counts) - 1, "Inf"), (nan_slot, "NaN")):
        x = pad + (i + 0.5) * bar_w
        parts.append(f'<text x="{x:.1f}" y="{special_row}" font-size="10" text-anchor="middle">{label}</text>')
    if tolerance is not None and isinstance(tolerance, (int, float)) and tolerance > 0:
        import numpy as np

        i = int(np.searchsorted(edges, tolerance, side="right"))
        x = pad + i * bar_w
        parts.append(f'<line x1="{x:.1f}" y1="{pad / 2}" x2="{x:.1f}" y2="{height}" stroke="#cf222e" '
                     f'stroke-dasharray="4 3"><title>tolerance {tolerance:g}</title></line>')
    parts.append(f'<text x="{pad}" y="{height + 42}" font-size="11">{html.escape(title)} (max per sample, count '
                 f'peak {top})</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(report: dict) -> str:  # type: ignore[type-arg]
    """The self-contained HTML page of a report dict (as built by ``build_report``)."""
    status = report.get("status", "failed")
    config = report.get("config", {})
    esc = html.escape
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>poly validate report</title>", f"<style>{_CSS}</style></head><body>",
           f'<h1>poly validate: <span class="{esc(status)}">{esc(status.upper())}</span></h1>']
    if config:
        out.append('<table id="config">')
        for key, value in config.items():
            out.append(f'<tr><th class="l">{esc(str(key))}</th><td class="l">{_fmt(value if isinstance(value, (int, float, str)) or value is None else json.dumps(value))}</td></tr>')
        out.append("</table>")
    rate = report.get("pass_rate")
    cards = [("samples", report.get("samples")), ("passed", report.get("passed")), ("failed", report.get("failed")),
             ("unreadable", report.get("errors")),
             ("pass rate", f"{100 * rate:.2f}%" if isinstance(rate, (int, float)) else "-"),
             ("samples/s", report.get("samples_per_second")), ("seconds", report.get("elapsed_s"))]
    out.append('<div class="cards" id="summary">')
    out.extend(f'<div class="card">{esc(label)}<b>{_fmt(value)}</b></div>' for label, value in cards)
    out.append("</div>")
    notes = []
    if report.get("interrupted"):
        notes.append("Interrupted: the figures cover the samples done before the interruption.")
    if report.get("stopped_early"):
        notes.append(f"Stopped early after {report.get('max_failures')} failed samples (--max-failures).")
    out.extend(f'<p class="interrupted">{esc(n)}</p>' for n in notes)

    outputs = report.get("outputs", {})
    out.append("<h2>Outputs</h2>")
    out.append('<table id="outputs"><tr><th class="l">output</th><th>samples</th><th>failed</th><th>pass rate</th>'
               "<th>max absdiff</th><th>p50 absdiff</th><th>p99 absdiff</th><th>max reldiff</th>"
               "<th>p50 reldiff</th><th>p99 reldiff</th></tr>")
    for name, dist in outputs.items():
        pr = dist.get("pass_rate")
        aq, rq = dist.get("absdiff_quantiles", {}), dist.get("reldiff_quantiles", {})
        out.append(f'<tr><td class="l">{esc(name)}</td><td>{dist.get("samples")}</td><td>{dist.get("failed")}</td>'
                   f'<td>{_fmt(f"{100 * pr:.2f}%" if isinstance(pr, (int, float)) else None)}</td>'
                   f'<td>{_fmt(dist.get("max_absdiff"))}</td><td>{_fmt(aq.get("0.5"))}</td><td>{_fmt(aq.get("0.99"))}</td>'
                   f'<td>{_fmt(dist.get("max_reldiff"))}</td><td>{_fmt(rq.get("0.5"))}</td><td>{_fmt(rq.get("0.99"))}</td></tr>')
    out.append("</table>")
    out.append("<h2>Error distributions</h2>")
    atol, rtol = config.get("atol"), config.get("rtol")
    for name, dist in outputs.items():
        out.append(f'<h3>{esc(name)}</h3><div class="plots">')
        for key, label, tol in (("absdiff_histogram", "absolute difference", atol),
                                ("reldiff_histogram", "relative difference", rtol)):
            if key in dist:
                out.append(f"<figure>{_svg_histogram(dist[key], f'{name}: {label}', tol)}"
                           f"<figcaption>{esc(label)}</figcaption></figure>")
        out.append("</div>")
    out.append("<h2>Worst samples</h2>")
    out.append('<table id="worst"><tr><th>#</th><th>index</th><th class="l">file</th><th class="l">verdict</th>'
               '<th class="l">output</th><th>max absdiff</th><th>max reldiff</th><th class="l">note</th></tr>')
    for rank, sample in enumerate(report.get("worst_samples", []), 1):
        verdict = "PASSED" if sample.get("passed") else "FAILED"
        for name, rec in (sample.get("outputs") or {"-": {}}).items():
            out.append(f'<tr><td>{rank}</td><td>{sample.get("index")}</td><td class="l">{_fmt(sample.get("file"))}</td>'
                       f'<td class="l {verdict.lower()}">{verdict}</td><td class="l">{esc(name)}</td>'
                       f'<td>{_fmt(rec.get("max_absdiff"))}</td><td>{_fmt(rec.get("max_reldiff"))}</td>'
                       f'<td class="l">{_fmt(rec.get("error"))}</td></tr>')
    out.append("</table>")
    errors = report.get("error_samples", [])
    if errors:
        out.append('<h2>Unreadable samples</h2><table id="errors"><tr><th>index</th><th class="l">file</th>'
                   '<th class="l">error</th></tr>')
        out.extend(f'<tr><td>{e.get("index")}</td><td class="l">{_fmt(e.get("file"))}</td>'
                   f'<td class="l">{_fmt(e.get("error"))}</td></tr>' for e in errors)
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_html_report(report: dict, path: Any) -> None:  # type: ignore[type-arg]
    """Writes the HTML page of ``report``, atomically."""
    atomic_write_text(path, render_html(report))
