"""
Validation reports: a JSON document of the whole summary and a self-contained HTML page
(inline CSS and SVG, no scripts, no network) with the summary, the tolerances applied, a
per-output table naming why outputs failed, per output a failures panel and error histograms
(log count axis, zero as its own bar, labelled tolerance), and the worst samples. Both are
written atomically.
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

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
th{background:#f0f0f0}td.l,th.l{text-align:left}td:not(.l){white-space:nowrap}td.l{overflow-wrap:anywhere}
td.name{white-space:normal;overflow-wrap:anywhere;min-width:6em;max-width:22em}h3{overflow-wrap:anywhere}
td.causes{white-space:normal;overflow-wrap:anywhere;color:#cf222e;border-top:none}
.plots{display:flex;gap:1.5em;flex-wrap:wrap;align-items:flex-start}
figure{margin:0;background:#fff;border:1px solid #ddd;border-radius:6px;padding:.5em;max-width:100%;box-sizing:border-box}
figure svg{display:block;max-width:100%;height:auto}
figcaption{font-size:.9em;color:#555;overflow-wrap:anywhere;margin-top:.3em}
figcaption small{display:block;color:#777}
"""


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return html.escape(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return html.escape(str(value))


def _num(value: Any) -> str:
    """A tolerance as written on the command line: ``1e-05``, ``0.001``, ``0``."""
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


FONT_EM = 0.62
"""The width of a character of the SVG labels, in ems, as the layout counts it: a little over the
mean advance of digits, "e" and "-" in the common sans-serif fonts (DejaVu Sans, the widest of
them, averages 0.6 over "1e-05"), so that a label laid out to fit does fit."""


def _text_width(text: str, size: float) -> float:
    return len(text) * FONT_EM * size


def _compact(count: int) -> str:
    """A count axis label: 1, 10, 100, 1k, 10k, 1M..."""
    for div, unit in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if count >= div:
            return f"{count / div:.3g}{unit}"
    return str(count)


# The histogram's layout, in SVG user units (the viewBox; the drawing scales down with the page).
_HW, _HH = 400, 232
_ML, _MR, _MT, _MB = 58, 22, 26, 52  # margins: y labels and title / right / tolerance label / x labels and title
_ZERO_W, _GAP_W, _NAN_W = 30, 14, 30  # the "0" bar's area, the gaps that set it (and NaN) apart, the NaN area
_MIN_DECADES = 4


def _decade_range(counts: list, tol: Any) -> tuple[int, int]:  # type: ignore[type-arg]
    """The decades (0 for 1e-12 ... 18 for 1e6) the log axis spans: the bins holding values and
    the tolerance, a decade on each side, at least ``_MIN_DECADES``."""
    last = len(counts) - 1  # the overflow bin (>= 1e6, Inf included)
    lows: list[float] = [b - 1 for b in range(1, last) if counts[b]]
    highs: list[float] = [b for b in range(1, last) if counts[b]]
    if isinstance(tol, (int, float)) and tol > 0 and math.isfinite(tol):
        k = min(max(4 * (math.log10(tol) + 12), 0.0), 4 * 18.0)
        lows.append(k)
        highs.append(k)
    if not lows:
        lows, highs = [4 * 7], [4 * 7]  # 1e-5: the default tolerances
    lo, hi = max(math.floor(min(lows) / 4) - 1, 0), min(math.ceil(max(highs) / 4) + 1, 18)
    while hi - lo < _MIN_DECADES:
        lo, hi = (lo - 1, hi) if lo > 0 and (hi == 18 or (hi - lo) % 2) else (lo, min(hi + 1, 18))
    if counts[0]:  # values between 0 and 1e-12
        lo = 0
    if counts[last]:
        hi = 18
    return lo, hi


def _svg_histogram(hist: dict, kind: str, tol_name: str, tolerance: Any = None) -> str:  # type: ignore[type-arg]
    """
    An inline SVG bar chart of one log-spaced histogram: the count of samples (log scale) by the
    value (log10 on x). Zero is a bar of its own labelled "0", set apart from the log axis, which
    spans only the decades that hold values or the tolerance; values below 1e-12, at or over 1e6
    (Inf included) and NaN get labelled bars of their own. The failed samples of each bar are
    drawn over it in red, so that a single failure stays visible next to thousands of passes, and
    the tolerance is a dashed line labelled with its value. Every label is laid out inside the
    viewBox (``_text_width``), on two rows below the axis so that none overlaps another.
    """
    counts = [int(c) for c in hist["counts"]]
    failed = [int(c) for c in hist.get("failed_counts", [0] * len(counts))]
    zeros, failed_zeros = int(hist.get("zeros", 0)), int(hist.get("failed_zeros", 0))
    nan, failed_nan = int(hist.get("nan", 0)), int(hist.get("failed_nan", 0))
    counts[0] -= zeros  # the underflow bin without the exact zeros: values in (0, 1e-12)
    failed[0] -= failed_zeros
    last = len(counts) - 1
    tol = tolerance if isinstance(tolerance, (int, float)) and not isinstance(tolerance, bool) else None
    lo, hi = _decade_range(counts, tol)
    base = _HH - _MB
    plot_h = base - _MT
    log_x0 = _ML + _ZERO_W + _GAP_W
    log_x1 = _HW - _MR - (_GAP_W + _NAN_W if nan else 0)
    # slots: the log bins of decades lo..hi, plus the underflow and overflow bins where they hold values
    first_bin, last_bin = 4 * lo + 1 - (1 if counts[0] else 0), 4 * hi + (1 if counts[last] else 0)
    slot = (log_x1 - log_x0) / (last_bin - first_bin + 1)

    def bin_x(b: int) -> float:  # left edge of bin b (bin b spans k in [b - 1, b), k = 4 * (log10 v + 12))
        return log_x0 + (b - first_bin) * slot

    def k_x(k: float) -> float:
        return bin_x(1) + k * slot

    top = max([*counts, zeros, nan, 1])
    scale = math.log10(1 + top)

    def bar_h(count: int) -> float:
        return plot_h * math.log10(1 + count) / scale

    esc = html.escape
    parts = [f'<svg viewBox="0 0 {_HW} {_HH}" width="{_HW}" height="{_HH}" '
             f'role="img" aria-label="{esc(kind)} difference histogram" class="histogram">',
             f'<rect x="0" y="0" width="{_HW}" height="{_HH}" fill="#fff"/>']

    def text(x: float, y: float, label: str, size: int = 10, anchor: str = "middle", cls: str = "",
             extra: str = "") -> None:
        parts.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" class="{cls}"'
                     f'{extra}>{esc(label)}</text>')

    def bar(x: float, w: float, count: int, fails: int, colour: str, what: str) -> None:
        if count:
            h = bar_h(count)
            parts.append(f'<rect x="{x:.1f}" y="{base - h:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{colour}">'
                         f'<title>{esc(what)}: {count} samples, {fails} failed</title></rect>')
        if fails:
            h = bar_h(fails)
            parts.append(f'<rect x="{x:.1f}" y="{base - h:.1f}" width="{w:.1f}" height="{h:.1f}" fill="#cf222e" '
                         f'class="failed-bar"><title>{esc(what)}: {fails} failed samples</title></rect>')

    # y axis: log count scale, ticks at 0 and powers of ten (and the peak, where it has room)
    parts.append(f'<line x1="{_ML}" y1="{_MT}" x2="{_ML}" y2="{base}" stroke="#555"/>')
    ticks = [0] + [10**p for p in range(0, 10) if 10**p <= top]
    if top not in ticks:
        ticks.append(top)
    labelled = -math.inf
    for t in reversed(ticks):  # the peak first; a label too close to the one above it is left out
        y = base - bar_h(t)
        parts.append(f'<line x1="{_ML - 3}" y1="{y:.1f}" x2="{_ML}" y2="{y:.1f}" stroke="#555"/>')
        if y - labelled >= 13:
            text(_ML - 5, y + 3.5, _compact(t), anchor="end", cls="ytick")
            labelled = y
    ymid = (_MT + base) / 2
    text(14, ymid, "samples (log scale)", size=11, cls="ylabel", extra=f' transform="rotate(-90 14 {ymid:.1f})"')

    # the zero bar, apart from the log axis
    zw = max(min(slot, 20.0), 8.0)
    zx = _ML + (_ZERO_W - zw) / 2
    bar(zx, zw, zeros, failed_zeros, "#0969da", "zero difference")
    parts.append(f'<line x1="{_ML}" y1="{base}" x2="{_ML + _ZERO_W}" y2="{base}" stroke="#555"/>')
    text(_ML + _ZERO_W / 2, base + 14, "0", cls="xtick zero")

    # the log axis
    for b in range(first_bin, last_bin + 1):
        what = ("below 1e-12" if b == 0 else "1e6 or more (Inf included)" if b == last
                else f"{_num(10 ** ((b - 1) / 4 - 12))} to {_num(10 ** (b / 4 - 12))}")
        bar(bin_x(b) + 0.25, max(slot - 0.5, 0.5), counts[b], failed[b], "#0969da", what)
    parts.append(f'<line x1="{log_x0:.1f}" y1="{base}" x2="{log_x1:.1f}" y2="{base}" stroke="#555"/>')
    step = next((s for s in (1, 2, 3, 6, 9, 18) if 4 * s * slot >= _text_width("1e-10", 10) + 6), 18)
    for decade in range(lo, hi + 1):
        if (decade - lo) % step:
            continue
        x = k_x(4 * decade)
        parts.append(f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 3}" stroke="#555"/>')
        text(x, base + 14, f"1e{decade - 12}", cls="xtick")
    if counts[0]:
        text(bin_x(0) + slot / 2, base + 27, "<1e-12", cls="xtick special")
    if counts[last]:
        text(bin_x(last) + slot / 2, base + 27, "\u22651e6", cls="xtick special")
    if nan:
        nx = _HW - _MR - _NAN_W
        bar(nx + (_NAN_W - zw) / 2, zw, nan, failed_nan, "#8250df", "NaN")
        parts.append(f'<line x1="{nx}" y1="{base}" x2="{nx + _NAN_W}" y2="{base}" stroke="#555"/>')
        text(nx + _NAN_W / 2, base + 27, "NaN", cls="xtick special")
    text(_ML + (_HW - _MR - _ML) / 2, base + 44, f"largest {kind} difference per sample (log scale)", size=11,
         cls="xlabel")

    # the tolerance
    if tol is not None and tol >= 0 and math.isfinite(tol):
        x = _ML + _ZERO_W + _GAP_W / 2 if tol == 0 else k_x(min(max(4 * (math.log10(tol) + 12), 0.0), 72.0))
        label = f"{tol_name} {_num(tol)}"
        parts.append(f'<line x1="{x:.1f}" y1="{_MT - 6}" x2="{x:.1f}" y2="{base}" stroke="#cf222e" '
                     f'stroke-dasharray="4 3" class="tolerance"/>')
        if x + 3 + _text_width(label, 10) <= _HW - 2:
            text(x + 3, _MT - 10, label, anchor="start", cls="tolerance-label")
        else:
            text(x - 3, _MT - 10, label, anchor="end", cls="tolerance-label")
    if not any(counts) and not zeros and not nan:
        text(_ML + (_HW - _MR - _ML) / 2, _MT + plot_h / 2, "no compared samples", size=11, cls="empty")
    parts.append("</svg>")
    return "".join(parts)


def _share(count: int, total: int) -> str:
    """``count`` as a percentage of ``total``, never rounded to 0% or 100% unless it is exactly
    that: "7.5%", "0.005%", "99.98%"."""
    share = 100 * count / total
    if count in (0, total):
        return f"{share:.0f}%"
    if share < 1:
        return f"{share:.2g}%"
    for decimals in range(1, 10):
        text = f"{share:.{decimals}f}"
        if float(text) < 100:
            break
    return text.rstrip("0").rstrip(".") + "%"


_VW, _ROW = 290, 28
_VL = 100  # the row labels' right edge


def _svg_verdicts(passed: int, over: int, not_compared: int) -> str:
    """The failures panel of one output: a bar per verdict (passed, over tolerance, not compared)
    with its count and share written next to it; a bar that holds anything is at least 3 units
    long, so that one failure among millions is seen."""
    total = passed + over + not_compared
    rows = (("passed", passed, "#1a7f37"), ("over tolerance", over, "#cf222e"), ("not compared", not_compared, "#9a6700"))
    height = len(rows) * _ROW + 8
    labels = [f"{count} ({_share(count, total)})" if total else str(count) for _, count, _ in rows]
    room = _VW - _VL - 8 - 6 - max(_text_width(label, 11) for label in labels) - 4  # the longest bar and its label fit
    parts = [f'<svg viewBox="0 0 {_VW} {height}" width="{_VW}" '
             f'height="{height}" role="img" aria-label="samples by verdict" class="verdicts">',
             f'<rect x="0" y="0" width="{_VW}" height="{height}" fill="#fff"/>']
    for i, ((label, count, colour), written) in enumerate(zip(rows, labels, strict=True)):
        y = 4 + i * _ROW
        length = max(room * count / total, 3.0) if count and total else 0.0
        parts.append(f'<g class="verdict" data-verdict="{label}">'
                     f'<text x="{_VL}" y="{y + 17}" font-size="11" text-anchor="end" class="label">{label}</text>'
                     f'<rect x="{_VL + 8}" y="{y + 6}" width="{length:.1f}" height="{_ROW - 12}" fill="{colour}"/>'
                     f'<text x="{_VL + 8 + length + 6:.1f}" y="{y + 17}" font-size="11" class="count">{written}</text>'
                     "</g>")
    parts.append("</svg>")
    return "".join(parts)


def _applied_tolerance(name: str, given: Any, outputs: dict, default: Any) -> str:  # type: ignore[type-arg]
    """The tolerance ``name`` every output was checked with: one value, or one per output where
    they differ; marked "(default)" where none was given, "(per output)" where a dict was."""
    applied = {o: d.get(name) for o, d in outputs.items() if isinstance(d.get(name), (int, float))}
    if isinstance(given, (int, float)) and not isinstance(given, bool):
        return _num(given)
    suffix = " (default)" if given is None else " (per output)" if isinstance(given, dict) else ""
    values = set(applied.values())
    if len(values) == 1:
        return f"{_num(values.pop())}{suffix}"
    if values:
        return "; ".join(f"{o}: {_num(v)}" for o, v in applied.items()) + suffix
    if given is None:
        return f"{_num(default)} (default)"
    return json.dumps(given)


def _causes(dist: dict) -> str:  # type: ignore[type-arg]
    """Why an output's failed samples failed: over tolerance, or the errors that kept them from
    being compared (a missing output, a shape mismatch...), with counts and the first sample."""
    esc = html.escape
    lines = []
    over = (dist.get("failed") or 0) - (dist.get("errors") or 0)
    if over > 0:
        lines.append(f"{over} over tolerance")
    for cause in dist.get("error_causes", []):
        n = cause.get("samples", 0)
        first = cause.get("first_file") or f"sample {cause.get('first_index')}"
        lines.append(f"{esc(str(cause.get('error')))}: {n} sample{'s' if n != 1 else ''} (first: {esc(str(first))})")
    if dist.get("other_errors"):
        lines.append(f"{dist['other_errors']} not compared for other errors")
    return "; ".join(lines)


def render_html(report: dict) -> str:  # type: ignore[type-arg]
    """The self-contained HTML page of a report dict (as built by ``build_report``)."""
    from poly.compare.verdicts.simple_comparison import DEFAULT_ATOL, DEFAULT_ERROR_QUANTILE, DEFAULT_RTOL

    status = report.get("status", "failed")
    config = report.get("config", {})
    outputs = report.get("outputs", {})
    esc = html.escape
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<title>poly validate report</title>", f"<style>{_CSS}</style></head><body>",
           f'<h1>poly validate: <span class="{esc(status)}">{esc(status.upper())}</span></h1>']
    defaults = {"atol": DEFAULT_ATOL, "rtol": DEFAULT_RTOL}
    if config:
        out.append('<table id="config">')
        for key, value in config.items():
            if key in defaults:
                shown = esc(_applied_tolerance(key, value, outputs, defaults[key]))
            elif key == "error_quantile" and value is None:
                shown = f"{_num(DEFAULT_ERROR_QUANTILE)} (default)"
            else:
                shown = _fmt(value if isinstance(value, (int, float, str)) or value is None else json.dumps(value))
            out.append(f'<tr><th class="l">{esc(str(key))}</th><td class="l" data-key="{esc(str(key))}">{shown}</td></tr>')
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

    out.append("<h2>Outputs</h2>")
    out.append('<table id="outputs"><tr><th class="l">output</th><th>atol</th><th>rtol</th><th>samples</th>'
               "<th>compared</th><th>failed</th><th>pass rate</th><th>max absdiff</th><th>p50 absdiff</th>"
               "<th>p99 absdiff</th><th>max reldiff</th><th>p50 reldiff</th><th>p99 reldiff</th></tr>")
    for name, dist in outputs.items():
        pr = dist.get("pass_rate")
        aq, rq = dist.get("absdiff_quantiles", {}), dist.get("reldiff_quantiles", {})
        compared = (dist.get("samples") or 0) - (dist.get("errors") or 0)
        atol = dist.get("atol", config.get("atol"))
        rtol = dist.get("rtol", config.get("rtol"))
        out.append(f'<tr data-output="{esc(str(name))}"><td class="l name">{esc(str(name))}</td>'
                   f'<td>{_fmt(_num(atol) if atol is not None else None)}</td>'
                   f'<td>{_fmt(_num(rtol) if rtol is not None else None)}</td>'
                   f'<td>{dist.get("samples")}</td><td>{compared}</td><td>{dist.get("failed")}</td>'
                   f'<td>{_fmt(f"{100 * pr:.2f}%" if isinstance(pr, (int, float)) else None)}</td>'
                   f'<td>{_fmt(dist.get("max_absdiff"))}</td><td>{_fmt(aq.get("0.5"))}</td><td>{_fmt(aq.get("0.99"))}</td>'
                   f'<td>{_fmt(dist.get("max_reldiff"))}</td><td>{_fmt(rq.get("0.5"))}</td><td>{_fmt(rq.get("0.99"))}</td></tr>')
        causes = _causes(dist)
        if causes:  # why it failed, on a row of its own under the output's figures
            out.append(f'<tr class="causes" data-output="{esc(str(name))}"><td class="l causes" colspan="13">'
                       f"failures: {causes}</td></tr>")
    out.append("</table>")
    out.append("<h2>Error distributions</h2>")
    for name, dist in outputs.items():
        ename = esc(str(name))
        samples, failed, errors = dist.get("samples") or 0, dist.get("failed") or 0, dist.get("errors") or 0
        out.append(f'<h3>{ename}</h3><div class="plots">')
        out.append(f'<figure class="verdicts" data-output="{ename}" style="width:{_VW + 18}px">'
                   f"{_svg_verdicts(samples - failed, failed - errors, errors)}"
                   f"<figcaption>{ename}: samples by verdict"
                   + ("<small>not compared: the output could not be compared with its reference (why: the "
                      "outputs table's failures)</small>" if errors else "")
                   + "</figcaption></figure>")
        for key, kind, tol_name in (("absdiff_histogram", "absolute", "atol"), ("reldiff_histogram", "relative", "rtol")):
            if key not in dist:
                continue
            hist = dist[key]
            tol = dist.get(tol_name, config.get(tol_name))
            if tol is None:
                tol = defaults[tol_name]
            zeros, nan, over = hist.get("zeros", 0), hist.get("nan", 0), hist["counts"][-1] if hist["counts"] else 0
            notes = [f"{zeros} sample{'s' if zeros != 1 else ''} with zero difference"]
            if over:
                notes.append(f"{over} at or over 1e6 (Inf included)")
            if nan:
                notes.append(f"{nan} NaN")
            legend = (f"Bars: samples by their largest {kind} difference, failed samples in red over them; "
                      f"dashed line: {tol_name} {_num(tol)}.")
            out.append(f'<figure class="histogram" data-output="{ename}" data-kind="{kind}" style="width:{_HW + 18}px">'
                       f"{_svg_histogram(hist, kind, tol_name, tol)}"
                       f'<figcaption>{ename}: {kind} difference<small class="notes">{esc("; ".join(notes))}.</small>'
                       f"<small>{esc(legend)}</small></figcaption></figure>")
        out.append("</div>")
    out.append("<h2>Worst samples</h2>")
    out.append('<table id="worst"><tr><th>#</th><th>index</th><th class="l">file</th><th class="l">verdict</th>'
               '<th class="l">output</th><th>max absdiff</th><th>max reldiff</th><th class="l">note</th></tr>')
    for rank, sample in enumerate(report.get("worst_samples", []), 1):
        verdict = "PASSED" if sample.get("passed") else "FAILED"
        for name, rec in (sample.get("outputs") or {"-": {}}).items():
            error = rec.get("error")
            out.append(f'<tr><td>{rank}</td><td>{sample.get("index")}</td><td class="l">{_fmt(sample.get("file"))}</td>'
                       f'<td class="l {verdict.lower()}">{verdict}</td><td class="l">{esc(name)}</td>'
                       f'<td>{_fmt(None if error else rec.get("max_absdiff"))}</td>'
                       f'<td>{_fmt(None if error else rec.get("max_reldiff"))}</td>'
                       f'<td class="l">{_fmt(error)}</td></tr>')
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
