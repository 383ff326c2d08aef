#!/usr/bin/env python3
"""Benchmark of poly's error statistics against Polygraphy and the memory floor.

On N elements (default 10^7) of each dtype in --dtypes and for each thread count in
--threads it times, alternating within each repeat on the same arrays:
  - poly.compare.stats.native without order statistics, with the median, and with the median
    plus p90/p95/p99 of absdiff and reldiff (the full simple comparison);
  - the NumPy read floor: a.sum(); b.sum(), one read of both arrays;
then (float32) poly's and Polygraphy 0.53's CompareFunc.simple (when polygraphy is installed), on
many small outputs and on tied outputs, and both outputs' own statistics as a comparison's report
shows them (median and p90/p95/p99 included) against NumPy's functions, at 10^4, 2^17, 2^20 and N
elements, and at 2^20 on tied outputs (a ReLU's zeros, twelve values, one value).
It prints every figure, its noise (median over best of the repeats) and the ratios to the
floor, with the instruction-set path of the native kernels, and writes them as JSON (--out).

One-thread targets: <= 1.3x the floor without order statistics; <= 3x with median and
p90/p95/p99.

With --kernel-paths it instead compares the instruction-set paths of the native kernels this CPU
has (portable, AVX2, AVX-512: POLY_NATIVE_ARCH=generic / avx2 / the default), running the
statistics figures in a fresh process per path, the paths alternating over --rounds rounds, and
prints each path's ratios to the floor and its time against the AVX2 path's.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
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


def polygraphy_simple(a: dict[str, np.ndarray], b: dict[str, np.ndarray], **options):
    """A callable running Polygraphy's CompareFunc.simple on outputs a and b (by name), or None
    without Polygraphy."""
    try:
        import warnings

        from polygraphy.comparator import CompareFunc, IterationResult
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 0.53 prefers SimpleCompareFunc; same code
        func = CompareFunc.simple(**options)
    it0 = IterationResult(a, runner_name="runner0")
    it1 = IterationResult(b, runner_name="runner1")

    def run():
        # Polygraphy logs its statistics at INFO level as `polygraphy run` does; the text goes
        # nowhere, the work of producing it is timed.
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            func(it0, it1)

    return run


def compare_func_figures(a: np.ndarray | dict[str, np.ndarray], b: np.ndarray | dict[str, np.ndarray], repeat: int,
                         polygraphy_repeat: int) -> dict:
    """poly's CompareFunc.simple on output a and b (or outputs, by name; its report lines built),
    the drop-in for Polygraphy's, and Polygraphy's own where it is installed (its default
    elementwise check, as `polygraphy run` does)."""
    from poly.compare import CompareFunc, IterationResult

    a, b = (a, b) if isinstance(a, dict) else ({"out": a}, {"out": b})
    func = CompareFunc.simple()
    it0 = IterationResult(a, runner_name="runner0")
    it1 = IterationResult(b, runner_name="runner1")

    def poly_simple():
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            func(it0, it1)

    fig = {"poly_compare_func_simple_s": best_of(poly_simple, repeat)}
    pg = polygraphy_simple(a, b) if polygraphy_repeat > 0 else None
    if pg is not None:
        fig["polygraphy_simple_s"] = best_of(pg, polygraphy_repeat)
        fig["polygraphy_vs_poly_simple"] = fig["polygraphy_simple_s"] / fig["poly_compare_func_simple_s"]
    return fig


def print_figures(title: str, figures: dict) -> None:
    print(title)
    for name, value in figures.items():
        print(f"  {name:28s} {value * 1e3:10.2f} ms" if name.endswith("_s") else f"  {name:28s} {value:10.2f}x")


def parse_threads(text: str) -> list[int]:
    """'1,2,all' -> [1, 2, 0] (0: every usable CPU)."""
    out = []
    for item in text.split(","):
        item = item.strip()
        if item == "all":
            out.append(0)
        elif item.isdigit() and int(item) > 0:
            out.append(int(item))
        else:
            raise argparse.ArgumentTypeError(f"--threads: {item!r} is not a positive count or 'all'")
    return out


def parse_dtypes(text: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    for name in names:
        if name not in ("float16", "float32", "float64"):
            raise argparse.ArgumentTypeError(f"--dtypes: {name!r} is not one of float16, float32, float64")
    return names


def kernel_path() -> str:
    """The instruction-set path of poly._native's hot loops (POLY_NATIVE_ARCH=generic forces
    the portable one)."""
    from poly import _native

    return _native.kernel_arch() if hasattr(_native, "kernel_arch") else "unknown"


def cpu_model() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo), else what platform knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def kernel_paths() -> list[str]:
    """The POLY_NATIVE_ARCH values of the distinct paths this CPU has ("" is the best one)."""
    best = kernel_path()
    return {"avx512": ["avx2", ""], "avx2": ["generic", "avx2"]}.get(best, ["generic"])


def compare_kernel_paths(args) -> int:
    """--kernel-paths: the statistics figures once per path and round, each in a fresh process."""
    paths = kernel_paths()
    names = {"": kernel_path(), "avx2": "avx2", "generic": "generic"}
    results: dict[str, list[dict]] = {p: [] for p in paths}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for path in paths if r % 2 == 0 else paths[::-1]:
                out = Path(tmp) / f"{names[path]}-{r}.json"
                cmd = [sys.executable, __file__, "--stats-only", "--elements", str(args.elements), "--repeat",
                       str(args.repeat), "--threads", ",".join(str(t or "all") for t in args.threads),
                       "--dtypes", ",".join(args.dtypes), "--out", str(out)]
                subprocess.run(cmd, check=True, capture_output=True, env=dict(os.environ, POLY_NATIVE_ARCH=path))
                results[path].extend(json.loads(out.read_text())["runs"])
    print(f"kernel paths on {args.elements:,} elements ({cpu_model()}), {args.rounds} rounds alternating; best of "
          f"{args.repeat} each (figures: no order statistics / with median + p90/p95/p99, times the floor)")
    reference = "avx2" if "avx2" in paths else paths[0]
    for dtype in args.dtypes:
        for t in args.threads:
            threads = t or os.cpu_count()
            ref = [run["figures_s"]["poly_no_order_stats_s"] for run in results[reference]
                   if run["dtype"] == dtype and run["threads"] == threads]
            print(f"{dtype}, threads={threads}:")
            for path in paths:
                mine = [run for run in results[path] if run["dtype"] == dtype and run["threads"] == threads]
                plain = ", ".join(f"{run['ratios']['no_order_stats_vs_floor']:.2f}x" for run in mine)
                full = ", ".join(f"{run['ratios']['full_vs_floor']:.2f}x" for run in mine)
                vs = [run["figures_s"]["poly_no_order_stats_s"] / r for run, r in zip(mine, ref, strict=True)]
                print(f"  {names[path]:8s} {plain}  /  {full}   time against {names[reference]}: "
                      + ", ".join(f"{v:.2f}" for v in vs))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--elements", type=int, default=10**7, help="array length (default: 10^7)")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per figure; the best is kept")
    parser.add_argument("--polygraphy-repeat", type=int, default=2, help="timed runs of Polygraphy")
    parser.add_argument(
        "--threads", type=parse_threads, default=[0],
        help="comma-separated worker thread counts to measure, 'all' for every usable CPU (default: all)",
    )
    parser.add_argument(
        "--dtypes", type=parse_dtypes, default=["float32"],
        help="comma-separated input dtypes among float16, float32, float64 (default: float32)",
    )
    parser.add_argument("--no-polygraphy", action="store_true", help="skip the Polygraphy baseline")
    parser.add_argument("--ties-elements", type=int, default=1 << 20,
                        help="array length of the tied outputs (equal, quantized differences; default: 2^20)")
    parser.add_argument("--many-outputs", type=int, default=5000,
                        help="outputs of the many-small-outputs figure (also run at a tenth; default: 5000)")
    parser.add_argument("--out", default="bench-results/bench_compare.json", help="JSON file to write")
    parser.add_argument("--stats-only", action="store_true",
                        help="only the error-statistics figures (no CompareFunc, many-outputs or ties figures)")
    parser.add_argument("--kernel-paths", action="store_true",
                        help="compare the native kernels' instruction-set paths this CPU has, side by side")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of --kernel-paths (default: 3)")
    args = parser.parse_args(argv)
    if args.kernel_paths:
        return compare_kernel_paths(args)

    rng = np.random.default_rng(0)
    n = args.elements
    a32 = rng.standard_normal(n, dtype=np.float32)
    b32 = a32 + rng.standard_normal(n, dtype=np.float32) * np.float32(1e-3)
    b32[rng.integers(0, n, n // 1000)] = 0.0  # some exact zeros, as real outputs have

    qs = (0.9, 0.95, 0.99)
    path = kernel_path()
    print(f"error statistics on {n:,} elements ({os.cpu_count()} cores, {cpu_model()}); "
          f"kernels: {path}; best of {args.repeat}")
    runs = []
    for dtype in args.dtypes:
        a, b = a32.astype(dtype), b32.astype(dtype)
        for t in args.threads:
            error_stats(a, b, quantiles=qs, threads=t)  # warm up: page-in, thread start
            # The floor and poly's figures alternate within each repeat, so that a burst of
            # load from other processes hits both alike; each keeps its best.
            names = ("floor_numpy_read_s", "poly_no_order_stats_s", "poly_median_s", "poly_full_s")
            calls = (
                lambda a=a, b=b: (a.sum(), b.sum()),
                lambda a=a, b=b, t=t: error_stats(a, b, median=False, threads=t),
                lambda a=a, b=b, t=t: error_stats(a, b, threads=t),
                lambda a=a, b=b, t=t: error_stats(a, b, quantiles=qs, threads=t),
            )
            samples = {name: [] for name in names}
            for _ in range(args.repeat):
                for name, fn in zip(names, calls, strict=True):
                    samples[name].append(best_of(fn, 1))
            figures = {name: min(v) for name, v in samples.items()}
            floor = figures["floor_numpy_read_s"]
            ratios = {
                "no_order_stats_vs_floor": figures["poly_no_order_stats_s"] / floor,
                "median_vs_floor": figures["poly_median_s"] / floor,
                "full_vs_floor": figures["poly_full_s"] / floor,
            }
            # noise: the spread of the repeats (median over best) per figure
            spread = {name: float(np.median(v) / min(v)) for name, v in samples.items()}
            run = {"dtype": dtype, "threads": t or os.cpu_count(), "kernels": path, "figures_s": figures,
                   "ratios": ratios, "noise_median_over_best": spread}
            if t == 1:
                run["targets_met"] = {
                    "no_order_stats_vs_floor": ratios["no_order_stats_vs_floor"] <= 1.3,
                    "full_vs_floor": ratios["full_vs_floor"] <= 3.0,
                }
            runs.append(run)
            print(f"{dtype}, threads={run['threads']}:")
            for name, value in figures.items():
                print(f"  {name:28s} {value * 1e3:10.2f} ms   (median/best {spread[name]:.2f})")
            for name, value in ratios.items():
                line = f"  {name:28s} {value:10.2f}x"
                if "targets_met" in run and name in run["targets_met"]:
                    bound = 1.3 if name.startswith("no_order") else 3.0
                    line += f"   one-thread target <= {bound:g}x: {'met' if run['targets_met'][name] else 'MISSED'}"
                print(line)

    if args.stats_only:
        return write_report(args.out, {"elements": n, "kernels": path, "python": sys.version.split()[0],
                                       "numpy": np.__version__, "runs": runs})

    baseline = {}
    if not args.no_polygraphy:
        baseline = compare_func_figures(a32, b32, args.repeat, args.polygraphy_repeat)
        if "polygraphy_simple_s" not in baseline:
            print("  (polygraphy not installed: no Polygraphy baseline)")
        print_figures("float32, CompareFunc.simple:", baseline)

    # Many small outputs (a model's intermediate tensors, `--onnx-outputs mark all`): each output's
    # cost, at two counts (the same when pairing the outputs by name scales linearly).
    many = {}
    for count in (args.many_outputs // 10, args.many_outputs):
        outs_a = {f"tensor_{i}": rng.standard_normal(256, dtype=np.float32) for i in range(count)}
        outs_b = {name: v + np.float32(1e-3) * rng.standard_normal(256, dtype=np.float32) for name, v in outs_a.items()}
        fig = compare_func_figures(outs_a, outs_b, max(1, args.repeat // 2),
                                   0 if args.no_polygraphy or count > 1000 else args.polygraphy_repeat)
        many[count] = {name: value / count if name.endswith("_s") else value for name, value in fig.items()}
        print_figures(f"{count:,} outputs of 256 float32 elements, CompareFunc.simple, time an output:", many[count])

    # Ties everywhere: two equal outputs, and float32 outputs one 1e-6 step apart (a handful of
    # distinct differences): the order statistics must not cost more than on varied differences.
    ties = {}
    m = args.ties_elements
    for kind, (ta, tb) in (("equal", (a32[:m], a32[:m].copy())), ("quantized", (a32[:m], a32[:m] + np.float32(1e-6)))):
        error_stats(ta, tb)
        fig = {"poly_no_order_stats_s": best_of(lambda ta=ta, tb=tb: error_stats(ta, tb, median=False), args.repeat),
               "poly_median_s": best_of(lambda ta=ta, tb=tb: error_stats(ta, tb), args.repeat)}
        fig["median_vs_no_order_stats"] = fig["poly_median_s"] / fig["poly_no_order_stats_s"]
        if not args.no_polygraphy:
            fig.update(compare_func_figures(ta, tb, args.repeat, args.polygraphy_repeat))
        ties[kind] = fig
        print_figures(f"tied outputs ({kind}), {len(ta):,} float32 elements:", fig)

    # The outputs' own statistics, as a comparison's report shows them for both outputs (mean,
    # std, extrema, median and p90/p95/p99: report_lines.pair_stats), against NumPy's functions
    # computing the same figures of each output.
    from poly.compare.stats.report_lines import pair_stats

    def numpy_output_stats(x, y):
        for v in (x, y):
            v.mean(), v.std(), v.min(), v.max(), np.median(v), np.quantile(v, qs)

    def output_stats_figures(xa, xb):
        fig = {"poly_pair_stats_s": best_of(lambda: pair_stats(xa, xb), args.repeat),
               "numpy_s": best_of(lambda: numpy_output_stats(xa, xb), max(1, args.repeat // 2))}
        fig["numpy_over_poly"] = fig["numpy_s"] / fig["poly_pair_stats_s"]
        return fig

    # (10^4 elements: under the rank windows' 2^17, the keys kept whole)
    outputs = {}
    for size in sorted({min(10_000, n), min(1 << 17, n), min(1 << 20, n), n}):
        outputs[size] = output_stats_figures(a32[:size], b32[:size])
        print_figures(f"both outputs' statistics with median and p90/p95/p99 (the report's), {size:,} float32 "
                      f"elements:", outputs[size])
    # Tied outputs, as real models give them: a ReLU's zeros (60%), a quantised output's twelve
    # values one bin of keys holds, one value everywhere (a constant tensor)
    size = min(1 << 20, n)
    rng = np.random.default_rng(7)
    relu = np.maximum(a32[:size] - np.float32(0.25), np.float32(0))
    twelve = (0.0215 + 1e-5 * rng.integers(0, 12, size)).astype(np.float32)
    tied_outputs = {}
    for kind, (xa, xb) in (("relu", (relu, np.maximum(b32[:size] - np.float32(0.25), np.float32(0)))),
                           ("twelve values", (twelve, twelve[::-1].copy())),
                           ("one value", (np.full(size, 0.75, np.float32), np.full(size, 0.75, np.float32)))):
        tied_outputs[kind] = output_stats_figures(xa, xb)
        print_figures(f"both outputs' statistics, tied outputs ({kind}), {size:,} float32 elements:",
                      tied_outputs[kind])

    report = {
        "elements": n,
        "output_statistics": outputs,
        "tied_output_statistics": tied_outputs,
        "ties": ties,
        "many_outputs": many,
        "quantiles": list(qs),
        "kernels": path,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "runs": runs,
        "compare_func_simple": baseline,
    }
    return write_report(args.out, report)


def write_report(path: str, report: dict) -> int:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n")
    os.replace(tmp, out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
