"""
The statistics pass on the GPU and its reduction on the host.

``run_error_stats`` runs the statistics kernel over two CUDA arrays (``DeviceRun``) and merges
its per-block float64 records on the host (a few hundred records: never the arrays), with the
first radix digit of absdiff and reldiff counted for the order statistics, or the keys of the
ranges a sample predicted gathered (order_select). ``count_zeros`` counts the zeros of ``b``.

The results follow the CPU engine's (poly-core's native/src/error_stats.cpp) definitions and
come back in the same dictionary layout as ``poly._native.error_stats``.
"""

from __future__ import annotations

import math

import numpy as np

from poly.compare.stats.gpu.device_run import PART_RECORD, DeviceRun
from poly.compare.stats.gpu.kernel_source import FIRST_BITS, RING_BYTES
from poly.compare.stats.gpu.order_select import radix_copies, range_first_pass
from poly.compare.stats.gpu.predicted_ranges import RangePlan

__all__ = ["run_error_stats", "count_zeros"]

_FIRST_BINS = 1 << FIRST_BITS


def _merge_streams(parts: np.ndarray, n: int) -> list[dict]:
    """The four streams' statistics from the per-block records (``parts``: blocks x 4), with the
    CPU engine's NumPy semantics; each reduction runs over all four streams at once."""
    with np.errstate(all="ignore"):  # sums overflow to inf, and inf - inf gives NaN, as NumPy's would
        cnt, mean, m2 = parts["n"], parts["mean"], parts["m2"]
        total = cnt.sum(axis=0)
        weighted = np.where(cnt > 0, cnt * mean, 0.0)
        mu = weighted.sum(axis=0) / total
        spread = np.where(cnt > 0, m2 + cnt * (mean - mu) ** 2, 0.0).sum(axis=0)
        nans, infs = parts["nnan"].sum(axis=0), parts["ninf"].sum(axis=0)
        plain, ab, sq = parts["sum"].sum(axis=0), parts["ab"].sum(axis=0), parts["sq"].sum(axis=0)
        first_nan = np.where(parts["inan"] >= 0, parts["inan"], np.iinfo(np.int64).max).min(axis=0)
        extrema = {}
        for key, val, idx, pick in (("min", "mn", "imn", np.min), ("max", "mx", "imx", np.max)):
            has = parts[idx] >= 0
            best = pick(np.where(has, parts[val], np.inf if key == "min" else -np.inf), axis=0)
            at = np.where(has & (parts[val] == best), parts[idx], np.iinfo(np.int64).max).min(axis=0)
            extrema[key] = (best.tolist(), at.tolist())
    out = []
    for k in range(parts.shape[1]):
        nan, inf = int(nans[k]), int(infs[k])
        m, moment2 = float(mu[k]), float(spread[k])
        nonfinite = nan > 0 or inf > 0
        if not nonfinite and not (math.isfinite(m) and math.isfinite(moment2)):
            raise OverflowError("moments overflow float64")  # finite values beyond ~1e154: the host engine scales
        r = {"nan": nan, "inf": inf}
        r["mean"] = float(plain[k]) / n if nonfinite else m
        r["var"] = math.nan if nonfinite else moment2 / n
        r["std"] = math.sqrt(r["var"]) if not math.isnan(r["var"]) else math.nan
        r["mean_abs"] = float(ab[k]) / n
        r["mean_sq"] = float(sq[k]) / n
        if nan > 0:
            first = int(first_nan[k])
            r.update(min=math.nan, max=math.nan, argmin=first, argmax=first)
        else:
            for key in ("min", "max"):
                r[key] = float(extrema[key][0][k])
                r["arg" + key] = int(extrema[key][1][k])
        r["order"] = []
        out.append(r)
    return out


def _stats_shared(want_hist: bool) -> int:
    """Dynamic shared memory of the statistics pass."""
    return RING_BYTES + (2 * _FIRST_BINS * 4 if want_hist else 0)


def run_error_stats(run: DeviceRun, want_hist: bool, plan: RangePlan | None = None
                    ) -> tuple[dict, dict[int, np.ndarray] | None]:
    """The statistics pass. Returns the native engine's dictionary (without order statistics)
    and, with ``want_hist``, the first-digit histograms of absdiff (2) and reldiff (3). With a
    ``plan`` (``plan_ranges``), the pass also gathers the keys in its predicted ranges."""
    n = run.n
    shared = _stats_shared(want_hist)
    kernel = "poly_stats" if plan is None else "poly_stats_ranges"
    grid = plan.blocks if plan is not None else run.grid(kernel, shared)
    p = run.params()
    p.out = run.alloc(grid * PART_RECORD.itemsize)
    if want_hist:
        p.hist = run.alloc(2 * _FIRST_BINS * 8, zero=True)
    if plan is not None:
        plan.apply(p)
    run.launch(kernel, p, grid, shared)
    first_pass = range_first_pass(run, plan) if plan is not None else []
    copies = [(p.out, np.empty(grid, dtype=PART_RECORD))]
    if want_hist:
        copies.append((p.hist, np.empty(2 * _FIRST_BINS, dtype=np.uint64)))
    if plan is not None:
        copies.append((plan.rout, np.empty(plan.rout_words, dtype=np.uint64)))
    reads = run.read_all(copies + radix_copies(first_pass))  # one wait for all
    parts = reads[0]
    if plan is not None:
        plan.take(reads[len(copies) - 1])
        plan.first_pass = (first_pass, reads[len(copies):])
    hists = {2: reads[1][:_FIRST_BINS], 3: reads[1][_FIRST_BINS:]} if want_hist else None
    streams = _merge_streams(parts["s"], n)
    raw = {"size": n, "mismatches": int(parts["fails"].sum()), "a": streams[0], "b": streams[1],
           "absdiff": streams[2], "reldiff": streams[3], "dot": float(np.sum(parts["dot"]))}
    _metrics(raw, n, float(np.sum(parts["s"][:, 2]["sq"])), float(np.sum(parts["s"][:, 0]["sq"])),
             float(np.sum(parts["s"][:, 1]["sq"])))
    return raw, hists


def _metrics(raw: dict, n: int, abs_sq: float, a_sq: float, b_sq: float) -> None:
    """Distance and quality metrics, with the CPU engine's conventions for the degenerate cases."""
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
        with np.errstate(all="ignore"):
            raw["cosine"] = float(np.float64(raw["dot"]) / (np.float64(norm_a) * np.float64(norm_b)))
    if math.isnan(mse):
        raw["psnr"] = raw["snr"] = math.nan
    elif mse == 0:
        raw["psnr"] = raw["snr"] = math.inf
    else:
        lo, hi = abs(sb["min"]), abs(sb["max"])
        peak = hi if lo < hi else lo  # std::max's choice, NaN included
        if peak == 0:
            peak = 1.0
        with np.errstate(all="ignore"):
            raw["psnr"] = float(20.0 * np.log10(np.float64(peak)) - 10.0 * np.log10(np.float64(mse)))
            signal = sb["mean_sq"]
            raw["snr"] = -math.inf if signal == 0 else float(10.0 * np.log10(np.float64(signal) / np.float64(mse)))


def count_zeros(run: DeviceRun) -> int:
    """How many elements of ``b`` equal zero."""
    p = run.params()
    p.out = run.alloc(8, zero=True)
    run.launch("poly_count_zeros", p, run.grid("poly_count_zeros"))
    return int(run.read(p.out, np.empty(1, dtype=np.uint64))[0])
