#!/usr/bin/env python3
"""Benchmark of poly's error statistics against Polygraphy and the memory floor.

On N float32 elements (default 10^7) it times, in one run on the same arrays:
  - poly.compare.stats.native without order statistics, with the median, and with the median
    plus p90/p95/p99 of absdiff and reldiff (the full simple comparison);
  - Polygraphy 0.53's CompareFunc.simple on the same arrays (when polygraphy is installed);
  - the NumPy read floor: a.sum(); b.sum(), one read of both arrays;
and prints every figure and ratio, then writes them as JSON (--out).

Targets: full comparison >= 50x faster than Polygraphy; <= 3x the floor without quantiles;
<= 8x the floor with median and p90/p95/p99.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from poly.compare import error_stats


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def polygraphy_simple(a: np.ndarray, b: np.ndarray, **options):
    """A callable running Polygraphy's CompareFunc.simple on (a, b), or None without Polygraphy."""
    try:
        import warnings

        from polygraphy.comparator import CompareFunc, IterationResult
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 0.53 prefers SimpleCompareFunc; same code
        func = CompareFunc.simple(**options)
    it0 = IterationResult({"out": a}, runner_name="runner0")
    it1 = IterationResult({"out": b}, runner_name="runner1")

    def run():
        # Polygraphy logs its statistics at INFO level as `polygraphy run` does; the text goes
        # nowhere, the work of producing it is timed.
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            func(it0, it1)

    return run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--elements", type=int, default=10**7, help="array length (default: 10^7)")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per figure; the best is kept")
    parser.add_argument("--polygraphy-repeat", type=int, default=2, help="timed runs of Polygraphy")
    parser.add_argument("--threads", type=int, default=0, help="poly's worker threads (0: all cores)")
    parser.add_argument("--out", default="bench-results/bench_compare.json", help="JSON file to write")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    n = args.elements
    a = rng.standard_normal(n, dtype=np.float32)
    b = a + rng.standard_normal(n, dtype=np.float32) * np.float32(1e-3)
    b[rng.integers(0, n, n // 1000)] = 0.0  # some exact zeros, as real outputs have

    qs = (0.9, 0.95, 0.99)
    t = args.threads
    error_stats(a, b, quantiles=qs, threads=t)  # warm up: page-in, thread start
    figures = {
        "floor_numpy_read_s": best_of(lambda: (a.sum(), b.sum()), args.repeat),
        "poly_no_order_stats_s": best_of(lambda: error_stats(a, b, median=False, threads=t), args.repeat),
        "poly_median_s": best_of(lambda: error_stats(a, b, threads=t), args.repeat),
        "poly_full_s": best_of(lambda: error_stats(a, b, quantiles=qs, threads=t), args.repeat),
    }
    # the same through poly's CompareFunc.simple (logging included), the drop-in for Polygraphy's
    from poly.compare import CompareFunc, IterationResult

    func = CompareFunc.simple()
    it0, it1 = IterationResult({"out": a}, runner_name="runner0"), IterationResult({"out": b}, runner_name="runner1")

    def poly_simple():
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            func(it0, it1)

    figures["poly_compare_func_simple_s"] = best_of(poly_simple, args.repeat)
    pg = polygraphy_simple(a, b)
    if pg is not None:
        # its default (elemwise) check, as `polygraphy run` does: the baseline of the target
        figures["polygraphy_simple_s"] = best_of(pg, args.polygraphy_repeat)
        # the same asked for a quantile too (informational: closer to poly's full workload)
        pgq = polygraphy_simple(a, b, check_error_stat="quantile", error_quantile=0.99)
        figures["polygraphy_simple_quantile_s"] = best_of(pgq, args.polygraphy_repeat)

    floor = figures["floor_numpy_read_s"]
    ratios = {
        "no_order_stats_vs_floor": figures["poly_no_order_stats_s"] / floor,
        "median_vs_floor": figures["poly_median_s"] / floor,
        "full_vs_floor": figures["poly_full_s"] / floor,
    }
    if pg is not None:
        ratios["polygraphy_vs_poly_full"] = figures["polygraphy_simple_s"] / figures["poly_full_s"]
        ratios["polygraphy_quantile_vs_poly_full"] = figures["polygraphy_simple_quantile_s"] / figures["poly_full_s"]
        ratios["polygraphy_simple_vs_poly_simple"] = figures["polygraphy_simple_s"] / figures["poly_compare_func_simple_s"]
    targets = {
        "no_order_stats_vs_floor": ("<=", 3.0),
        "full_vs_floor": ("<=", 8.0),
        "polygraphy_vs_poly_full": (">=", 50.0),
    }

    print(f"error statistics on {n:,} float32 elements ({os.cpu_count()} cores, {platform.processor() or platform.machine()})")
    for name, value in figures.items():
        print(f"  {name:28s} {value * 1e3:10.2f} ms")
    print("ratios:")
    verdicts = {}
    for name, value in ratios.items():
        line = f"  {name:28s} {value:10.2f}x"
        if name in targets:
            op, bound = targets[name]
            ok = value <= bound if op == "<=" else value >= bound
            verdicts[name] = ok
            line += f"   target {op} {bound:g}x: {'met' if ok else 'MISSED'}"
        print(line)
    if pg is None:
        print("  (polygraphy not installed: no Polygraphy baseline)")

    report = {
        "elements": n,
        "dtype": "float32",
        "quantiles": list(qs),
        "threads": t or os.cpu_count(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "figures_s": figures,
        "ratios": ratios,
        "targets_met": verdicts,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n")
    os.replace(tmp, out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
