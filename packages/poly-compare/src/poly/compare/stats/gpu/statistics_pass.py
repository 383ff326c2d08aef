"""
The statistics pass on the GPU, and its results on the host.

``run_error_stats`` runs the statistics kernel over two CUDA arrays (``DeviceRun``), merges its
per-block float64 records into one on the device and reads that back (never the arrays), with the
first radix digit of absdiff and reldiff counted for the order statistics, or the keys of the
ranges a sample predicted gathered (order_select). ``count_zeros`` counts the zeros of ``b``.

The results follow the CPU engine's (poly-core's native/src/error_stats.cpp) definitions and
come back in the same dictionary layout as ``poly._native.error_stats``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from poly.compare.stats.gpu.device_run import ACC_FIELDS, PART_RECORD, DeviceRun, record_struct
from poly.compare.stats.gpu.kernel_source import FIRST_BITS, RING_BYTES, STATS_HIST_BYTES
from poly.compare.stats.gpu.order_select import (
    DeviceRangeSelect,
    DeviceSelect,
    select_behind_stats,
    select_in_ranges,
)
from poly.compare.stats.gpu.predicted_ranges import RANGE_TABLE, RangePlan

__all__ = ["run_error_stats", "extreme_values", "count_zeros", "STREAM_NAMES"]

_FIRST_BINS = 1 << FIRST_BITS
# The four streams of the kernels' records (0 a, 1 b, 2 absdiff, 3 reldiff), as ``raw`` names them.
STREAM_NAMES = ("a", "b", "absdiff", "reldiff")

# The merged record read in one unpack: the four streams' Acc fields, then dot and fails.
_RECORD = record_struct(PART_RECORD)
_ACC_LEN = len(ACC_FIELDS)
_SQ = [name for name, _ in ACC_FIELDS].index("sq")


def _streams_of(values: tuple, n: int) -> list[dict]:
    """The four streams' statistics from the merged record (``poly_merge_parts``; ``values``: one
    PART_RECORD unpacked by ``_RECORD``), with the CPU engine's NumPy semantics. Plain Python on one
    record: a comparison of a small output is made of little else."""
    out = []
    nan_value = math.nan
    for k in range(0, 4 * _ACC_LEN, _ACC_LEN):
        _count, mean, m2, plain, sq, ab, mn, mx, imn, imx, inan, nan, inf, _ = values[k:k + _ACC_LEN]
        if nan or inf:
            var = nan_value
            mean = plain / n
        elif math.isfinite(mean) and math.isfinite(m2):
            var = m2 / n
        else:
            raise OverflowError("moments overflow float64")  # finite values beyond ~1e154: the host engine scales
        if nan:
            mn = mx = nan_value
            imn = imx = inan
        out.append({"nan": nan, "inf": inf, "mean": mean, "var": var, "std": math.sqrt(var) if var == var else nan_value,
                    "mean_abs": ab / n, "mean_sq": sq / n, "min": mn, "max": mx, "argmin": imn, "argmax": imx,
                    "order": []})
    return out


def _stats_shared(want_hist: bool) -> int:
    """Dynamic shared memory of the statistics pass."""
    return STATS_HIST_BYTES if want_hist else RING_BYTES


def run_error_stats(run: DeviceRun, want_hist: bool, plan: RangePlan | None = None,
                    select: Sequence[tuple[int, float | None]] = ()
                    ) -> tuple[dict, dict[int, np.ndarray] | None, dict[tuple[int, int], int] | None]:
    """The statistics pass. Returns the native engine's dictionary (without order statistics);
    with ``want_hist``, the first-digit histograms of absdiff (2) and reldiff (3), unless the order
    statistics ``select`` (requests) asks for were selected on the device right behind the pass
    (``select_behind_stats``, where it applies): then the keys of their ranks instead. With a
    ``plan`` (``plan_ranges``), the pass also gathers the keys in its predicted ranges, the ranks
    are narrowed on them behind it (``select_in_ranges``: ``plan.selected`` holds the keys found),
    and the histograms returned are those of the streams the device left unpredicted (None if none).

    Without a plan the whole run is queued with no host round trip: the second time the same run
    comes (the same arrays, arithmetic and requests) it is captured into a CUDA graph, and from
    then on replayed as one launch (``DeviceRun.replay``)."""
    key = None if plan is not None else run.graph_key("stats", want_hist, tuple(select))
    replayed = run.replay(key) if key is not None else None
    ranged = None
    if replayed is not None:
        results, (names, behind) = replayed
        got = dict(zip(names, results, strict=True))
    else:
        captured = key is not None and run.capture_if_repeated(key)
        copies, behind, ranged = _queue_stats(run, want_hist, plan, select)
        got = dict(zip(copies, run.read_all(list(copies.values())), strict=True))  # one wait for all
        if captured:
            run.keep_graph(key, (tuple(copies), behind))
    n = run.n
    part = got["part"]
    hists = {2: got["hist"][:_FIRST_BINS], 3: got["hist"][_FIRST_BINS:]} if "hist" in got else None
    if ranged is not None:
        plan.take(got["table"])
        plan.selected = ranged.keys(got["ranged"])
        hists = {stream: hists[stream] for stream in plan.unpredicted()} or None
    selected = behind.keys(got["select"]) if behind is not None else None
    values = _RECORD.unpack_from(part)
    raw = {"size": n, "mismatches": values[-1], **dict(zip(STREAM_NAMES, _streams_of(values, n), strict=True)),
           "dot": values[-2]}
    _metrics(raw, n, values[2 * _ACC_LEN + _SQ], values[_SQ], values[_ACC_LEN + _SQ])
    return raw, hists, selected


def _queue_stats(run: DeviceRun, want_hist: bool, plan: RangePlan | None, select: Sequence[tuple[int, float | None]]
                 ) -> tuple[dict[str, tuple[int, np.ndarray]], DeviceSelect | None, DeviceRangeSelect | None]:
    """Queues the statistics pass, the merge of its records and what runs behind it (the select, the
    narrowing in the predicted ranges); returns the copies to read back by name, the select and the
    ranges' select (None where not queued)."""
    shared = _stats_shared(want_hist or plan is not None)  # (the ranged pass counts unpredicted streams' first digit)
    kernel = "poly_stats" if plan is None else "poly_stats_ranges"
    grid = plan.blocks if plan is not None else run.grid(kernel, shared)
    p = run.params()
    p.out = run.alloc(grid * PART_RECORD.itemsize)
    if want_hist:
        p.hist = run.alloc(2 * _FIRST_BINS * 8, zero=True)
    if plan is not None:
        plan.apply(p)
    run.launch(kernel, p, grid, shared)
    merged = run.params()
    merged.out, merged.seg[0], merged.seg_len[0] = p.out, run.alloc(PART_RECORD.itemsize), grid
    run.launch("poly_merge_parts", merged, 1)
    ranged = select_in_ranges(run, plan) if plan is not None else None
    behind = select_behind_stats(run, select, p.hist, merged.seg[0]) if want_hist and select else None
    copies = {"part": (merged.seg[0], np.empty(1, dtype=PART_RECORD))}
    if (want_hist and behind is None) or plan is not None:
        copies["hist"] = (p.hist, np.empty(2 * _FIRST_BINS, dtype=np.uint64))
    if ranged is not None:
        copies["table"] = (plan.table, np.empty(1, dtype=RANGE_TABLE))
        copies["ranged"] = ranged.copy()
    if behind is not None:
        copies["select"] = behind.copy()
    return copies, behind, ranged


def extreme_values(raw: dict) -> dict[int, tuple[float, float]]:
    """The minimum and maximum of each stream (0 a, 1 b, 2 absdiff, 3 reldiff) of ``raw``
    (``run_error_stats``' dictionary) without NaN; none for an empty input."""
    if raw["size"] == 0:
        return {}
    return {k: (raw[name]["min"], raw[name]["max"]) for k, name in enumerate(STREAM_NAMES)
            if raw[name]["nan"] == 0}


def _log10(x: float) -> float:
    """``std::log10`` as the CPU engine calls it (the C library's, as ``math.log10`` is), with its
    answers where ``math.log10`` raises instead: -inf for zero (x is never negative here)."""
    return math.log10(x) if x != 0 else -math.inf


def _metrics(raw: dict, n: int, abs_sq: float, a_sq: float, b_sq: float) -> None:
    """Distance and quality metrics, with the CPU engine's conventions for the degenerate cases and
    its float64 arithmetic (Python floats: the same IEEE operations, without NumPy's per-call cost)."""
    sb = raw["b"]
    raw["l2"] = math.sqrt(abs_sq) if not math.isnan(abs_sq) else math.nan
    mse = abs_sq / n
    raw["mse"] = mse
    norm_a = math.sqrt(a_sq) if not math.isnan(a_sq) else math.nan
    norm_b = math.sqrt(b_sq) if not math.isnan(b_sq) else math.nan
    if norm_a == 0 and norm_b == 0:
        raw["cosine"] = 1.0
    elif norm_a == 0 or norm_b == 0:
        raw["cosine"] = 0.0
    else:
        norms = norm_a * norm_b
        if norms != 0:
            raw["cosine"] = raw["dot"] / norms
        else:  # (by underflow: the division gives +-inf or NaN there, as in C++, where Python raises)
            with np.errstate(all="ignore"):
                raw["cosine"] = float(np.float64(raw["dot"]) / np.float64(norms))
    if math.isnan(mse):
        raw["psnr"] = raw["snr"] = math.nan
    elif mse == 0:
        raw["psnr"] = raw["snr"] = math.inf
    else:
        lo, hi = abs(sb["min"]), abs(sb["max"])
        peak = hi if lo < hi else lo  # std::max's choice, NaN included
        if peak == 0:
            peak = 1.0
        raw["psnr"] = 20.0 * _log10(peak) - 10.0 * _log10(mse)
        signal = sb["mean_sq"]
        raw["snr"] = -math.inf if signal == 0 else 10.0 * _log10(signal / mse)


def count_zeros(run: DeviceRun) -> int:
    """How many elements of ``b`` equal zero."""
    p = run.params()
    p.out = run.alloc(8, zero=True)
    run.launch("poly_count_zeros", p, run.grid("poly_count_zeros"))
    return int(run.read(p.out, np.empty(1, dtype=np.uint64))[0])
