"""
Statistics lines of outputs and of their differences, logged in Polygraphy's layout::

    [I] runA: out | Stats: mean=0.44838, std-dev=0.35794, var=0.12812, median=0.45337, min=0.016528 at (1, 0), ...
    [I]     ---- Values ----        (outputs of at most 100 elements)
    [I]     ---- Histogram ----

Every figure comes from the native engine (``poly._native``); only the values and histogram
blocks, logged verbosely (or at INFO for failed outputs), look at the arrays with NumPy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from poly import _native
from poly.compare.stats.known_summaries import known_value_summaries
from poly.compare.stats.native import DiffStats, ValueSummary, dtype_code, error_stats
from poly.compare.stats.polygraphy_precision import polygraphy_diffs
from poly.core import G_LOGGER
from poly.core.arrays.host import host_array
from poly.core.func import invoke_if_callable
from poly.core.util.text import indent_block

__all__ = [
    "ArrayStats",
    "array_stats",
    "pair_stats",
    "diff_stats_view",
    "str_output_stats",
    "stats_lines_logged",
    "str_histogram",
    "str_diff_histogram",
    "format_histogram",
    "log_output_stats",
    "log_compared_output_stats",
    "display_diffs",
]

SMALL_OUTPUT_THRESHOLD = 100
"""Outputs with at most this many elements are printed whole alongside their statistics."""

LOGGED_QUANTILES = (0.9, 0.95, 0.99)
"""The quantiles shown on every statistics line (p90, p95, p99), as Polygraphy shows them."""


@dataclass
class ArrayStats:
    """The figures of one statistics line: moments, extrema with their indices, mean magnitude and
    (except for bool data) p90/p95/p99."""

    mean: float
    std: float
    var: float
    median: float
    min: float
    argmin: tuple | None  # type: ignore[type-arg]
    max: float
    argmax: tuple | None  # type: ignore[type-arg]
    avg_magnitude: float
    quantiles: dict[float, float] | None = field(default=None)
    nan_count: int = 0
    inf_count: int = 0


_THIS_MODULE = G_LOGGER.module_path(__file__)  # (the path the logger judges this module's lines by)


def stats_lines_logged() -> bool:
    """Whether this module's statistics lines (``log_output_stats``, ``log_compared_output_stats``)
    are printed: INFO on for this module, by the logger's per-module rule. What only those lines
    show (the p90/p95/p99 of the differences, the report's figures) need not be computed otherwise."""
    return G_LOGGER.is_enabled(G_LOGGER.INFO, _THIS_MODULE)


def _supported(arr: np.ndarray) -> bool:
    try:
        dtype_code(arr.dtype)
    except ValueError:
        return False
    return True


def _summary_to_stats(summary: ValueSummary, order: Sequence[float], with_quantiles: bool) -> ArrayStats:
    median, *qs = order
    return ArrayStats(
        mean=summary.mean, std=summary.std, var=summary.var, median=median,
        min=summary.min, argmin=summary.argmin, max=summary.max, argmax=summary.argmax,
        avg_magnitude=summary.mean_abs,
        quantiles=dict(zip(LOGGED_QUANTILES, qs, strict=True)) if with_quantiles else None,
        nan_count=summary.nan_count, inf_count=summary.inf_count,
    )


def _order_requests(arr: np.ndarray) -> list:  # type: ignore[type-arg]
    # None asks for the median; bool data shows no quantiles (NumPy has none for bool).
    return [None] + ([] if arr.dtype == np.bool_ else list(LOGGED_QUANTILES))


def _one_value(arr: np.ndarray, summary: ValueSummary) -> float | None:
    """The value every element of floating-point ``arr`` holds, or None: its extrema are one
    finite value, and for zero no element is -0.0 (which compares equal to +0.0, so the extrema
    cannot tell them apart; the native engine orders -0.0 first)."""
    if arr.dtype.kind != "f" or summary.nan_count or summary.min != summary.max or not math.isfinite(summary.min):
        return None
    if summary.min != 0:
        return summary.min
    return 0.0 if not np.signbit(arr).any() else None


def _order_of_one_value(value: float, n: int, requests: list) -> list[float]:  # type: ignore[type-arg]
    """The ``requests`` over ``n`` copies of ``value`` (finite, not -0.0), as the native engine
    computes them from the keys at their ranks: a median of an even count is the mean of two
    equal values, a quantile interpolates between two equal values (which gives the value)."""
    return [(value + value) / 2.0 if r is None and n % 2 == 0 else value for r in requests]


def _order(a: np.ndarray, b: np.ndarray, streams: list[str], requests: list,  # type: ignore[type-arg]
           summaries: Sequence[ValueSummary]) -> list[float]:
    """The ``requests`` of each of ``streams``, stream after stream (found in the same passes).
    A stream whose every element holds one value (a constant tensor, a mask of zeros) takes it
    from ``summaries`` (the streams' statistics) without a pass over the array."""
    if a.size == 0:
        return [math.nan] * (len(streams) * len(requests))
    arrays = {"a": a, "b": b}
    known = [_one_value(arrays[s], summary) for s, summary in zip(streams, summaries, strict=True)]
    rest = [s for s, value in zip(streams, known, strict=True) if value is None]
    found = iter(_native.order_stats(a, b, dtype_code(a.dtype), dtype_code(b.dtype), rest, requests, False, 0)
                 if rest else [])
    out: list[float] = []
    for value in known:
        out += (_order_of_one_value(value, a.size, requests) if value is not None
                else [next(found) for _ in requests])
    return out


def array_stats(arr: Any) -> ArrayStats | None:
    """Statistics of one array; None for data types the native engine cannot read."""
    arr = np.asarray(arr)
    if not _supported(arr):
        return None
    summary = error_stats(arr, arr, median=False).a
    requests = _order_requests(arr)
    return _summary_to_stats(summary, _order(arr, arr, ["a"], requests, [summary]), len(requests) > 1)


def pair_stats(arr0: Any, arr1: Any) -> tuple[ArrayStats | None, ArrayStats | None]:
    """Statistics of two arrays, in one pass over both when their shapes agree (none when the
    simple comparison already summarised these very arrays: ``known_summaries``)."""
    arr0, arr1 = np.asarray(arr0), np.asarray(arr1)
    if arr0.shape != arr1.shape or not (_supported(arr0) and _supported(arr1)):
        return array_stats(arr0), array_stats(arr1)
    known = known_value_summaries(arr0, arr1)
    if known is None:
        stats = error_stats(arr0, arr1, median=False)
        known = stats.a, stats.b
    sum0, sum1 = known
    req0, req1 = _order_requests(arr0), _order_requests(arr1)
    if req0 == req1:  # both arrays' order statistics in the same passes
        both = _order(arr0, arr1, ["a", "b"], req0, [sum0, sum1])
        order0, order1 = both[:len(req0)], both[len(req0):]
    else:
        order0, order1 = _order(arr0, arr1, ["a"], req0, [sum0]), _order(arr0, arr1, ["b"], req1, [sum1])
    return (
        _summary_to_stats(sum0, order0, len(req0) > 1),
        _summary_to_stats(sum1, order1, len(req1) > 1),
    )


def diff_stats_view(diff: DiffStats, with_quantiles: bool = True) -> ArrayStats:
    """The statistics line of an absolute or relative difference (all values are >= 0, so the
    mean magnitude is the mean)."""
    quantiles = None
    if with_quantiles:
        quantiles = {q: diff.quantiles.get(q, math.nan) for q in LOGGED_QUANTILES}
    return ArrayStats(
        mean=diff.mean, std=diff.std, var=diff.var, median=diff.median,
        min=diff.min, argmin=diff.argmin, max=diff.max, argmax=diff.argmax,
        avg_magnitude=diff.mean, quantiles=quantiles,
        nan_count=diff.nan_count, inf_count=diff.inf_count,
    )


def _fmt_index(index: Any) -> str:
    if index is None:
        return "()"
    return str(tuple(int(i) for i in index))


def str_output_stats(stats: ArrayStats | None, label: str | None = None) -> str:
    """One statistics line, prefixed with ``"<label> | Stats: "`` when a label is given."""
    text = f"{label} | Stats: " if label else ""
    if stats is None:
        return text + "<Error while computing statistics>"
    text += (
        f"mean={stats.mean:.5g}, std-dev={stats.std:.5g}, var={stats.var:.5g}, median={stats.median:.5g}, "
        f"min={stats.min:.5g} at {_fmt_index(stats.argmin)}, max={stats.max:.5g} at {_fmt_index(stats.argmax)}, "
        f"avg-magnitude={stats.avg_magnitude:.5g}"
    )
    if stats.quantiles is not None:
        text += ", " + ", ".join(f"p{round(q * 100)}={value:.5g}" for q, value in stats.quantiles.items())
    return text


def _edges(low: float, high: float, dtype: Any) -> np.ndarray | None:
    """numpy.histogram's 10 uniform edges over [low, high], in the data's precision."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    if low == high:  # as numpy does for constant data
        low, high = low - 0.5, high + 0.5
    edges = np.linspace(low, high, 11, dtype=np.result_type(dtype, np.float32))
    return edges if np.all(np.diff(edges) > 0) else None


def format_histogram(counts: Sequence[int], edges: Sequence[float]) -> str:
    """The text histogram block for bin ``counts`` between ``edges``; empty when all are zero."""
    peak = int(max(counts)) if len(counts) else 0
    if not peak:
        return ""
    # (Python floats: a NumPy scalar formats through one, at several times the cost; same digits)
    labels = [f"{edge:.3g}" for edge in (edges.tolist() if isinstance(edges, np.ndarray) else edges)]
    start_width = max(len(label) for label in labels)
    end_width = max(len(label) for label in labels[1:])
    max_bar = 40
    lines = ["---- Histogram ----", f"{'Bin Range':{start_width + end_width + 5}}|  Num Elems | Visualization"]
    for count, start, end in zip(counts, labels, labels[1:], strict=False):
        bar = "#" * int(max_bar * float(count) / float(peak))
        lines.append(f"({start:<{start_width}}, {end:<{end_width}}) | {int(count):10} | {bar}")
    return "\n".join(lines) + "\n"


def str_histogram(arr: np.ndarray, hist_range: tuple[float, float] | None = None) -> str:
    """A text histogram of ``arr`` in 10 bins (numpy.histogram's binning, counted natively in
    one pass); empty for bool data or when none can be built."""
    arr = np.asarray(arr)
    if arr.dtype == np.bool_ or arr.size == 0:
        return ""
    try:
        code = dtype_code(arr.dtype)
    except ValueError as err:
        G_LOGGER.verbose(f"Could not generate histogram. Note: Error was: {err}")
        return ""
    if hist_range is None:
        with np.errstate(all="ignore"):
            hist_range = (float(np.min(arr)), float(np.max(arr)))
    edges = _edges(hist_range[0], hist_range[1], arr.dtype if arr.dtype.kind == "f" else np.float64)
    if edges is None:
        return ""
    return format_histogram(_native.histogram(arr, None, code, code, "a", edges.astype(np.float64).tolist()), edges)  # type: ignore[arg-type]


def str_diff_histogram(out0: np.ndarray, out1: np.ndarray, stream: str, low: float, high: float,
                       compute_dtype: str, infinities_compare_equal: bool = False) -> str:
    """A text histogram of the absolute ("absdiff") or relative ("reldiff") difference of two
    outputs over [low, high], counted natively without building the difference array."""
    edges = _edges(low, high, np.float32 if compute_dtype == "float32" else np.float64)
    if edges is None:
        return ""
    a, b = np.asarray(out0), np.asarray(out1)
    counts = _native.histogram(a, b, dtype_code(a.dtype), dtype_code(b.dtype), stream,
                               edges.astype(np.float64).tolist(), infinities_compare_equal)
    return format_histogram(counts, edges)  # type: ignore[arg-type]


def log_output_stats(
    stats: ArrayStats | Callable[[], ArrayStats | None] | None,
    values: Callable[[], np.ndarray] | np.ndarray | None,
    size: int,
    info_hist: bool = False,
    label: str | None = None,
    hist_range: tuple[float, float] | None = None,
    histogram: Callable[[], str] | None = None,
) -> None:
    """
    Logs a statistics line at INFO, then (indented) the values of small arrays and a histogram,
    at INFO when ``info_hist`` (a failed output) and VERBOSE otherwise.

    Args:
        stats: The figures, or a callable producing them (called only when the line is printed).
        values: The array, or a callable producing it (called only when its values are printed,
            or for its histogram when ``histogram`` is not given).
        size: The number of elements.
        info_hist: Log the values and histogram at INFO.
        label: Prefix of the line.
        hist_range: The histogram's range; defaults to the data's.
        histogram: Produces the histogram block without ``values`` (e.g. natively from the inputs).
    """
    G_LOGGER.info(lambda: str_output_stats(invoke_if_callable(stats), label))  # (formatted only when INFO is on)
    if values is None and histogram is None:
        return
    severity = G_LOGGER.INFO if info_hist else G_LOGGER.VERBOSE
    if not G_LOGGER.is_enabled(severity, _THIS_MODULE):  # (the lines below are this module's)
        return

    def array() -> Any:
        return invoke_if_callable(values)

    with G_LOGGER.indent():
        if size <= SMALL_OUTPUT_THRESHOLD and values is not None:
            G_LOGGER.log(f"---- Values ----\n{indent_block(array())}", severity)
        if histogram is not None:
            G_LOGGER.log(histogram, severity, error_ok=True)
        else:
            G_LOGGER.log(lambda: str_histogram(array(), hist_range), severity, error_ok=True)


def _hist_range(stats0: ArrayStats | None, stats1: ArrayStats | None) -> Any:
    if stats0 is None or stats1 is None:
        return None
    low, high = min(stats0.min, stats1.min), max(stats0.max, stats1.max)
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    return (low, high)


def log_compared_output_stats(iter_result0: Any, iter_result1: Any, match_dicts: Any, runner0_name: str, runner1_name: str) -> None:
    """
    Logs the statistics of every compared output of both runners, once per iteration after all
    comparison functions ran; an output is logged in full (at INFO) when any function failed it.

    Args:
        iter_result0, iter_result1 (IterationResult): The two runners' outputs.
        match_dicts (List[Mapping[str, Any]]): What each comparison function returned.
        runner0_name, runner1_name (str): The runner names for the labels.
    """
    if not match_dicts or not stats_lines_logged():
        return  # (every line of it is at INFO or below: no statistics computed for nothing)
    for out0_name, result in match_dicts[0].items():
        out1_name = getattr(result, "output1_name", None) or out0_name
        if out0_name not in iter_result0 or out1_name not in iter_result1:
            continue
        out0 = host_array(iter_result0[out0_name])
        out1 = host_array(iter_result1[out1_name])
        failed = any(not bool(md.get(out0_name, True)) for md in match_dicts)
        stats0, stats1 = pair_stats(out0, out1)
        hist_range = _hist_range(stats0, stats1)
        log_output_stats(stats0, out0, out0.size, failed, f"{runner0_name}: {out0_name}", hist_range)
        log_output_stats(stats1, out1, out1.size, failed, f"{runner1_name}: {out1_name}", hist_range)


def display_diffs(out0: np.ndarray, out1: np.ndarray, infinities_compare_equal: bool) -> tuple[np.ndarray, np.ndarray]:
    """
    The absolute and relative difference arrays, only for display (the values block of small
    outputs, histograms and plots): every statistic comes from the native engine instead.
    They are Polygraphy's difference arrays, bfloat16 outputs being shown through float32.
    """
    out0, out1 = (np.asarray(out) for out in (out0, out1))
    out0, out1 = (out.astype(np.float32) if out.dtype.name == "bfloat16" else out for out in (out0, out1))
    return polygraphy_diffs(out0, out1, infinities_compare_equal)
