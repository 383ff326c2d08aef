#!/usr/bin/env python3
"""
Benchmark of the on-device error statistics (poly.compare.stats.gpu) on a GPU.

On N float32 pairs held as torch CUDA tensors (default 10^9, or as many as fit), it measures:

- the device read bandwidth floor: a float32 sum of each of the two arrays (torch's reduction
  kernels), i.e. reading both arrays once;
- poly's ``error_stats`` without order statistics (target: >= 85% of that bandwidth);
- poly's ``error_stats`` with the median and the 90/95/99% quantiles (target: <= 2.5x the floor);
- both again on tied outputs (two equal outputs; two ReLU outputs, half their elements 0 in both)
  of ``--ties-size`` pairs, against that size's floor;
- Polygraphy's ``CompareFunc.simple`` and poly's on the same torch CUDA tensors (target: poly
  >= 50x faster). Polygraphy runs on at most ``--pg-size`` elements (torch's quantile refuses
  larger inputs), poly's CompareFunc on the same;
- the kernel time a pair of the statistics pass and of the pass with predicted ranges with the
  input in L2 (the difference between 2^21 and 2^22 pairs, 16 and 32 MB) against the same from
  memory (``--size`` pairs): a pass as fast a pair in L2 as from memory is bound by the SMs, not
  by the memory, and takes that time on any GPU of the same SMs and clocks (an H100 SXM and an
  H200 share them; their memories differ). Kernel times through torch's profiler (CUPTI);
- the first comparison of a dtype pair in a fresh process with an empty kernel cache, as it is
  (a quick build; target <= 2 s) and with the optimised build waited for
  (``POLY_GPU_KERNEL_BUILD=foreground``, how every first use went before quick builds).

The figures after the first use run on the optimised kernels (compiled in the foreground if the
cache lacks them).

Prints each figure (median of ``--repeat`` runs after a warm-up) and the ratios. With
``--profile``, one more full call is made with a device synchronisation after each kernel
launch, and the time of each launch (and of the host work between them) is printed: where the
time of the full statistics goes.

``CompareFunc.simple`` on 16.7M pairs is mostly host work around 0.2 ms of kernels, and its time
moves with where the scheduler runs the process: on an H200 host, 0.57 ms pinned to one CPU
(``--cpu``) and 0.85-0.87 ms on four (taskset), in the same machine session. Compare figures of
one placement only; the line before the figures says which. The host's CPU also changes speed
over time, by up to half: a fixed pure-Python loop took 22-24 ms or 38-45 ms on the same pinned
CPU of that host, from one second to the next, and the call's time followed (0.52-0.54 against
0.65-0.85 ms). The figure's line prints that loop's time before and after the calls: compare
figures measured at the same host speed. The figure is timed in rounds (``--cf-rounds``), each of
``--cf-repeat`` calls of poly's function and a tenth as many of Polygraphy's, alternating, so that
both meet the same host speeds; each function is built once, as a comparator holds it.

Usage: python tools/bench_compare_gpu.py [--size N] [--repeat R] [--pg-size M] [--profile] [--cpu C] [--no-l2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings


def _timed(fn, sync, repeat):
    fn()
    sync()
    times = []
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _profile(fn, sync, floor) -> None:
    """One call of ``fn`` with each kernel launch synchronised and timed."""
    from poly.compare.stats.gpu import device_run

    records = []
    original = device_run.DeviceRun.launch

    def timed_launch(self, name, *args, **kwargs):
        sync()
        t0 = time.perf_counter()
        original(self, name, *args, **kwargs)
        sync()
        records.append((name, time.perf_counter() - t0))

    def timed(method, label):
        def wrapper(self, *args, **kwargs):
            t0 = time.perf_counter()
            result = method(self, *args, **kwargs)
            records.append((label, time.perf_counter() - t0))
            return result
        return wrapper

    original_alloc, original_read = device_run.DeviceRun.alloc, device_run.DeviceRun.read_all
    device_run.DeviceRun.launch = timed_launch
    device_run.DeviceRun.alloc = timed(original_alloc, "(allocation)")
    device_run.DeviceRun.read_all = timed(original_read, "(copy to host)")
    try:
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        total = time.perf_counter() - t0
    finally:
        device_run.DeviceRun.launch = original
        device_run.DeviceRun.alloc, device_run.DeviceRun.read_all = original_alloc, original_read
    print(f"profile of one full call: {total * 1e3:.2f} ms in all")
    kernels = [(name, t) for name, t in records if not name.startswith("(")]
    for name, t in kernels:
        print(f"  {name:20s} {t * 1e3:9.2f} ms  = {t / floor:5.2f}x the floor")
    for label in ("(allocation)", "(copy to host)"):
        spent = [t for name, t in records if name == label]
        print(f"  {label:20s} {sum(spent) * 1e3:9.2f} ms in {len(spent)} calls")
    rest = total - sum(t for _, t in records)
    print(f"  {'other host work':20s} {rest * 1e3:9.2f} ms")


_FIRST_USE = r"""
import sys, time
import torch
from poly.compare import error_stats
from poly.core import G_LOGGER
G_LOGGER.module_severity = G_LOGGER.ERROR
a = torch.randn(1 << 20, device="cuda")
b = a + 1e-3
torch.cuda.synchronize()
t0 = time.perf_counter()
error_stats(a, b, median=False)
torch.cuda.synchronize()
print(time.perf_counter() - t0)
"""


def _kernel_us(fn, name: str, repeat: int) -> float:
    """Median kernel time (us) of kernel ``name`` over ``repeat`` calls of ``fn``, from torch's
    profiler (CUPTI): the GPU's own time, without the host's work around the launches."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(repeat):
            fn()
            torch.cuda.synchronize()
    times = [e.device_time for e in prof.events()
             if e.device_type == torch.autograd.DeviceType.CUDA and e.name == name]
    return statistics.median(times) if times else float("nan")


def _in_l2_and_from_memory(a, b, repeat: int) -> None:
    """The statistics pass's and the ranged pass's kernel time a pair with the input in L2 against
    the same from memory (module docstring)."""
    from poly.compare import error_stats
    from poly.compare.stats.gpu import order_select

    if a.numel() < 1 << 24:  # (the input must be far larger than L2 for the second figure)
        print("kernel times a pair in L2 against memory: skipped (needs --size of 2^24 pairs or more)")
        return
    quantiles = (0.9, 0.95, 0.99)
    kept = order_select.MIN_ELEMENTS
    order_select.MIN_ELEMENTS = 0  # (the ranges predicted at every size, as above MIN_ELEMENTS pairs)
    try:
        per_pair = {}
        for label, n in (("small", 1 << 21), ("large", 1 << 22), ("memory", a.numel())):
            u, v = a[:n], b[:n]  # (views: the first n pairs, no copy of the whole input)
            per_pair[label] = (n, _kernel_us(lambda u=u, v=v: error_stats(u, v, median=False), "poly_stats", repeat),
                               _kernel_us(lambda u=u, v=v: error_stats(u, v, quantiles=quantiles), "poly_stats_ranges",
                                          repeat))
    finally:
        order_select.MIN_ELEMENTS = kept
    (n0, p0, r0), (n1, p1, r1), (nm, pm, rm) = per_pair["small"], per_pair["large"], per_pair["memory"]
    for what, l2, mem in (("statistics pass", (p1 - p0) / (n1 - n0), pm / nm),
                          ("pass with predicted ranges", (r1 - r0) / (n1 - n0), rm / nm)):
        print(f"{what}: {l2 * 1e6:6.2f} ps a pair with the input in L2, {mem * 1e6:6.2f} ps from memory "
              f"({nm:,} pairs) = {l2 / mem:5.2f} (1: bound by the SMs)")


def _host_loop_ms() -> float:
    """A fixed pure-Python loop's best time of three (ms): the host CPU's speed at this moment."""
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        counts: dict[int, int] = {}
        for i in range(200_000):
            counts[i & 1023] = counts.get(i & 1023, 0) + i
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def _first_use(build: str) -> float:
    """Seconds of the first float32 comparison of a fresh process with an empty kernel cache."""
    import os
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, POLY_CACHE_DIR=cache, POLY_GPU_KERNEL_BUILD=build)
        out = subprocess.run([sys.executable, "-c", _FIRST_USE], env=env, capture_output=True, text=True, check=True)
        return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10**9, help="float32 pairs (default 10^9)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per figure (median reported)")
    parser.add_argument("--pg-size", type=int, default=1 << 24, help="elements for the Polygraphy comparison")
    parser.add_argument("--cf-rounds", type=int, default=5,
                        help="rounds of the CompareFunc figure, poly's calls and Polygraphy's alternating (default 5)")
    parser.add_argument("--cf-repeat", type=int, default=50,
                        help="poly's timed calls a round (Polygraphy's: a tenth, at least one; default 50)")
    parser.add_argument("--profile", action="store_true", help="print the time of each kernel launch of one full call")
    parser.add_argument("--no-first-use", action="store_true", help="skip the first-use figures (two compilations)")
    parser.add_argument("--no-l2", action="store_true",
                        help="skip the kernel times a pair with the input in L2 against those from memory")
    parser.add_argument("--ties-size", type=int, default=1 << 28,
                        help="pairs of the tied outputs (equal, ReLU zeros; default 2^28, at most --size)")
    parser.add_argument("--cpu", type=int, default=None,
                        help="pin this process to that CPU (default: where the scheduler puts it)")
    args = parser.parse_args()

    import os

    if args.cpu is not None:
        try:
            os.sched_setaffinity(0, {args.cpu})
        except OSError as err:
            parser.error(f"--cpu {args.cpu}: cannot run on that CPU ({err.strerror}); this process may use "
                         f"{sorted(os.sched_getaffinity(0))}")
    print(f"process on CPUs {sorted(os.sched_getaffinity(0))}" + (" (pinned by --cpu)" if args.cpu is not None else ""))

    os.environ["POLY_GPU_KERNEL_BUILD"] = "foreground"  # the figures below time the optimised kernels
    try:
        import torch
    except ImportError:
        print("needs PyTorch with CUDA (its tensors hold the pairs), an NVIDIA GPU and cuda-python's NVRTC",
              file=sys.stderr)
        return 1

    from poly.compare import CompareFunc, error_stats
    from poly.compare.results import IterationResult
    from poly.compare.stats import gpu

    if not torch.cuda.is_available() or not gpu.gpu_ready():
        print("needs an NVIDIA GPU, PyTorch CUDA and cuda-python's NVRTC", file=sys.stderr)
        return 1
    if not args.no_first_use:
        quick, optimised = _first_use("background"), _first_use("foreground")
        print(f"first comparison of a dtype pair, empty kernel cache: {quick:6.2f} s (target <= 2 s); "
              f"waiting for the optimised build: {optimised:6.2f} s = {optimised / quick:5.1f}x")
    sync = torch.cuda.synchronize
    n = args.size
    free, _ = torch.cuda.mem_get_info()
    n = min(n, int(free * 0.8) // 8)  # both arrays within 80% of the free memory
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(n, device="cuda", generator=gen, dtype=torch.float32)
    b = a + 1e-3 * torch.randn(n, device="cuda", generator=gen, dtype=torch.float32)
    sync()
    nbytes = 2 * 4 * n
    print(f"device: {torch.cuda.get_device_name()}  pairs: {n:,} float32 ({nbytes / 1e9:.2f} GB read per pass)")

    floor = _timed(lambda: (a.sum() + b.sum()).item(), sync, args.repeat)
    bw = nbytes / floor
    print(f"read floor (sum of both arrays): {floor * 1e3:9.2f} ms  {bw / 1e9:8.1f} GB/s")

    t_stats = _timed(lambda: error_stats(a, b, median=False), sync, args.repeat)
    frac = (nbytes / t_stats) / bw
    print(f"poly error_stats, no order stats: {t_stats * 1e3:9.2f} ms  {nbytes / t_stats / 1e9:8.1f} GB/s  "
          f"= {frac * 100:5.1f}% of the floor's bandwidth (target >= 85%)")

    t_full = _timed(lambda: error_stats(a, b, quantiles=(0.9, 0.95, 0.99)), sync, args.repeat)
    print(f"poly error_stats, median + p90/95/99: {t_full * 1e3:9.2f} ms  = {t_full / floor:5.2f}x the floor "
          f"(target <= 2.5x)")

    print(f"read floor a pair: {floor / n * 1e12:6.2f} ps")
    if not args.no_l2:
        _in_l2_and_from_memory(a, b, args.repeat)

    if args.profile:
        _profile(lambda: error_stats(a, b, quantiles=(0.9, 0.95, 0.99)), sync, floor)

    # Ties: two equal outputs (absdiff and reldiff 0 everywhere) and two ReLU outputs (about half
    # the elements 0 in both): the statistics and their order statistics against the same floor.
    t = min(n, args.ties_size)
    x = a[:t]
    t_floor = _timed(lambda: (x.sum() + x.sum()).item(), sync, args.repeat)
    for kind, (u, v) in (("equal", (x, x.clone())), ("relu", (torch.relu(x), torch.relu(b[:t])))):
        t_plain = _timed(lambda u=u, v=v: error_stats(u, v, median=False), sync, args.repeat)
        t_order = _timed(lambda u=u, v=v: error_stats(u, v, quantiles=(0.9, 0.95, 0.99)), sync, args.repeat)
        print(f"tied outputs ({kind}), {t:,} pairs: no order stats {t_plain * 1e3:8.2f} ms = "
              f"{t_floor / t_plain * 100:5.1f}% of the floor's bandwidth; median + p90/95/99 {t_order * 1e3:8.2f} ms = "
              f"{t_order / t_floor:5.2f}x the floor")
        del u, v

    m = min(n, args.pg_size)
    a_m, b_m = a[:m].clone(), b[:m].clone()
    pairs = (IterationResult({"x": a_m}, runner_name="r0"), IterationResult({"x": b_m}, runner_name="r1"))
    from poly.core import G_LOGGER

    G_LOGGER.module_severity = G_LOGGER.ERROR
    poly_call = CompareFunc.simple()
    pg_call = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from polygraphy.comparator import CompareFunc as PgCompareFunc
            from polygraphy.comparator import IterationResult as PgIterationResult
            from polygraphy.logger import G_LOGGER as PG_LOGGER

            PG_LOGGER.module_severity = PG_LOGGER.ERROR
            pg_pairs = (PgIterationResult({"x": a_m}, runner_name="r0"), PgIterationResult({"x": b_m}, runner_name="r1"))
            pg_func = PgCompareFunc.simple()
            pg_call = lambda: pg_func(*pg_pairs)  # noqa: E731
    except ImportError:
        print("Polygraphy is not installed: no baseline")
    # Rounds alternating the two (the host's speed changes from one second to the next): each
    # round's medians, then the median over the rounds of each, and of the rounds' ratios.
    host_before = _host_loop_ms()
    rounds = []
    for _ in range(args.cf_rounds):
        t_poly = _timed(lambda: poly_call(*pairs), sync, args.cf_repeat)
        t_pg = _timed(pg_call, sync, max(1, args.cf_repeat // 10)) if pg_call is not None else None
        rounds.append((t_poly, t_pg))
    t_poly_cf = statistics.median(t for t, _ in rounds)
    print(f"poly CompareFunc.simple on {m:,} pairs: {t_poly_cf * 1e3:9.2f} ms, median of {args.cf_rounds} rounds of "
          f"{args.cf_repeat} calls (rounds {', '.join(f'{t * 1e3:.2f}' for t, _ in rounds)}; host loop "
          f"{host_before:.1f} ms before, {_host_loop_ms():.1f} after)")
    if pg_call is not None:
        t_pg = statistics.median(t for _, t in rounds)
        ratios = [pg / poly for poly, pg in rounds]
        print(f"Polygraphy CompareFunc.simple on {m:,} pairs: {t_pg * 1e3:9.2f} ms  = {t_pg / t_poly_cf:6.1f}x "
              f"poly's time (rounds {', '.join(f'{r:.1f}x' for r in ratios)}; target >= 50x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
