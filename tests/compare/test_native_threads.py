"""The worker threads of the native engine poly._native: how many a call uses (CPU affinity,
cgroup CPU quotas, the cap on requests), what happens when the system refuses to start one,
and that calls stay in bounds and terminate while another Python thread rewrites the inputs
(the GIL is released during the computation)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sanitizers.reports import report_excerpt

from poly import _native
from poly.compare import error_stats

LARGE = 1 << 30  # elements: enough for every worker thread asked for (no array is made)


def _run_python(script: str, timeout: float = 300.0) -> subprocess.CompletedProcess:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          env=env, timeout=timeout)


def _stats_json(s) -> list:
    return [s.mismatches, s.absdiff.max, s.absdiff.median, s.absdiff.quantiles, list(s.absdiff.argmax),
            s.reldiff.max, s.reldiff.median, s.absdiff.mean, s.a.var]


# ---- how many threads ----------------------------------------------------------------------


def test_default_is_the_usable_cpus_and_requests_are_capped():
    cpus = _native.usable_cpus()
    assert 1 <= cpus <= (os.cpu_count() or cpus)
    if hasattr(os, "sched_getaffinity"):
        assert cpus <= len(os.sched_getaffinity(0))
    assert _native.worker_threads(0, LARGE) == cpus
    assert _native.worker_threads(1, LARGE) == 1
    assert _native.worker_threads(3, LARGE) == min(3, 4 * cpus)
    # absurd requests are capped at 4 per usable CPU, not attempted
    assert _native.worker_threads(10**6, LARGE) == 4 * cpus
    assert _native.worker_threads(2**31 - 1, LARGE) == 4 * cpus
    # small inputs stay on the calling thread
    assert _native.worker_threads(8, 1000) == 1


def test_the_default_starts_a_thread_per_quarter_million_elements():
    """threads=0 takes every usable CPU only for inputs large enough to pay for the threads: one
    worker per 2^18 elements (each parallel phase's start and merge cost more than a smaller
    share saves); an explicit request is honoured above 2^16 elements."""
    cpus = _native.usable_cpus()
    assert _native.worker_threads(0, (1 << 18) - 1) == 1
    assert _native.worker_threads(0, 1 << 18) == 1
    assert _native.worker_threads(0, 1 << 19) == min(2, cpus)
    assert _native.worker_threads(0, 5 << 18) == min(5, cpus)
    assert _native.worker_threads(2, 1 << 17) == 2


def test_a_million_threads_requested_gives_the_same_statistics():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(300_001).astype(np.float32)
    b = (a + rng.standard_normal(300_001).astype(np.float32) * np.float32(1e-3)).astype(np.float32)
    want = error_stats(a, b, quantiles=(0.9, 0.99), threads=1)
    for threads in (10**6, 10**12):  # the latter beyond a C int: capped before the engine
        got = error_stats(a, b, quantiles=(0.9, 0.99), threads=threads)
        assert _stats_json(got)[:7] == _stats_json(want)[:7]
        assert got.absdiff.mean == pytest.approx(want.absdiff.mean, rel=1e-12)
    with pytest.raises(ValueError, match="threads"):
        error_stats(a, b, threads=-1)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="os.sched_setaffinity is Linux-only")
def test_default_threads_follow_the_cpu_affinity_mask():
    """A process pinned to one CPU (taskset, a cpuset) gets one worker by default, however many
    CPUs the machine has."""
    out = _run_python(
        f"""
        import os
        os.sched_setaffinity(0, {{min(os.sched_getaffinity(0))}})
        from poly import _native
        print(_native.usable_cpus(), _native.worker_threads(0, {LARGE}), _native.worker_threads(100, {LARGE}))
        """
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "1", "4"]


def _affinity() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def test_cgroup_v2_cpu_max_limits_the_default(tmp_path):
    # _native.usable_cpus(root) reads the cgroup hierarchy mounted at `root` (a fake one here)
    # instead of /sys/fs/cgroup.
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("50000 100000\n")  # half a CPU: rounds up to one
    assert _native.usable_cpus(str(tmp_path)) == 1
    cpu_max.write_text("150000 100000\n")  # one and a half: two, unless fewer are in the affinity mask
    assert _native.usable_cpus(str(tmp_path)) == min(2, _affinity())
    cpu_max.write_text("max 100000\n")  # no quota
    assert _native.usable_cpus(str(tmp_path)) == _affinity()
    cpu_max.write_text("garbage\n")
    assert _native.usable_cpus(str(tmp_path)) == _affinity()


@pytest.mark.parametrize("mount", ["cpu", "cpu,cpuacct"])
def test_cgroup_v1_cfs_quota_limits_the_default(tmp_path, mount):
    d = tmp_path / mount
    d.mkdir()
    (d / "cpu.cfs_period_us").write_text("100000\n")
    (d / "cpu.cfs_quota_us").write_text("100000\n")
    assert _native.usable_cpus(str(tmp_path)) == 1
    (d / "cpu.cfs_quota_us").write_text("-1\n")  # no quota
    assert _native.usable_cpus(str(tmp_path)) == _affinity()


def test_no_cgroup_files_means_no_quota(tmp_path):
    assert _native.usable_cpus(str(tmp_path / "missing")) == _affinity()


# ---- a thread that cannot start --------------------------------------------------------------


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_NPROC refusing new threads is Linux behaviour")
def test_a_refused_thread_start_runs_the_work_on_the_threads_that_started():
    """RLIMIT_NPROC caps the tasks of a user: at the current count plus k, the system starts k
    more threads and refuses the next (std::thread throws std::system_error). With k = 0 no
    worker starts; with k = 1 or 2 some do and the next is refused while they are joinable,
    which must not terminate the process: the call computes everything on the threads that
    started and the calling one, with the same results."""
    out = _run_python(
        """
        import glob, json, os, resource, threading
        import numpy as np
        from poly.compare import error_stats
        rng = np.random.default_rng(1)
        n = 400_003  # worker threads, one-pass order statistics resolved on threads too
        a = rng.standard_normal(n).astype(np.float32)
        b = (a + rng.standard_normal(n).astype(np.float32) * np.float32(1e-3)).astype(np.float32)
        def figures(s):
            return [s.mismatches, s.absdiff.max, s.absdiff.median, s.absdiff.quantiles[0.9],
                    s.reldiff.quantiles[0.99], list(s.absdiff.argmax), s.b.median]
        want = figures(error_stats(a, b, quantiles=(0.9, 0.99), threads=1))
        if os.geteuid() == 0:  # root ignores RLIMIT_NPROC: become an unprivileged user first
            os.setgid(65534)
            os.setuid(65534)
        def tasks_of_this_user():
            count = 0
            for status in glob.glob("/proc/[0-9]*/task/[0-9]*/status"):
                try:
                    with open(status) as f:
                        uid = next(line for line in f if line.startswith("Uid:")).split()[1]
                except (OSError, StopIteration):
                    continue
                count += int(uid) == os.getuid()
            return count
        base = tasks_of_this_user()
        resource.setrlimit(resource.RLIMIT_NPROC, (base, base + 2))
        try:
            t = threading.Thread(target=lambda: None)
            t.start()
            t.join()
            print(json.dumps({"refused": False}))
            raise SystemExit(0)
        except RuntimeError:
            pass
        got = []
        for extra in (0, 1, 2):
            resource.setrlimit(resource.RLIMIT_NPROC, (base + extra, base + 2))
            got += [figures(error_stats(a, b, quantiles=(0.9, 0.99), threads=t)) for t in (0, 4, 64)]
        print(json.dumps({"refused": True, "want": want, "got": got}))
        """
    )
    assert out.returncode == 0, f"exit {out.returncode}: {report_excerpt(out.stderr, 4000)}"
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if not result["refused"]:
        pytest.skip("this machine starts threads beyond RLIMIT_NPROC (no way to make thread starts fail here)")
    for got in result["got"]:
        assert got == result["want"]


# ---- inputs rewritten during a call ----------------------------------------------------------

_MUTATION_SCRIPT = """
import math, sys, threading, time
import numpy as np
from poly import _native
from poly.compare import error_stats

n, dtype, seconds = {n}, "{dtype}", {seconds}
rng = np.random.default_rng(2)
states = [
    rng.standard_normal(n).astype(dtype),
    np.full(n, 1.0, dtype),
    np.full(n, -5.0, dtype),
    (rng.standard_normal(n) * 1e30).astype(dtype) if dtype != "int64" else rng.integers(-2**62, 2**62, n),
    np.arange(n).astype(dtype),
]
if dtype != "int64":
    states.append(np.where(rng.random(n) < 0.5, np.nan, np.inf).astype(dtype))
a, b = states[0].copy(), states[1].copy()
stop = threading.Event()

def mutate():
    i = 0
    while not stop.is_set():
        i += 1
        np.copyto(a, states[i % len(states)])
        np.copyto(b, states[(i * 7 + 3) % len(states)])
        a[i % n] = states[3][i % n]

def well_formed_number(x):
    return isinstance(x, float) and (math.isfinite(x) or math.isnan(x) or math.isinf(x))

def index_ok(ix):
    return ix is None or (len(ix) == 1 and 0 <= ix[0] < n)

writer = threading.Thread(target=mutate)
writer.start()
calls = 0
deadline = time.monotonic() + seconds
try:
    code = _native.DTYPE_CODES[dtype]
    while time.monotonic() < deadline:
        threads = (1, 2, 4)[calls % 3]
        s = error_stats(a, b, quantiles=(0.0, 0.3, 0.9, 1.0), threads=threads)
        figures = [s.absdiff.min, s.absdiff.max, s.absdiff.mean, s.absdiff.median, s.reldiff.median,
                   s.a.mean, s.l2, *s.absdiff.quantiles.values(), *s.reldiff.quantiles.values()]
        assert all(well_formed_number(x) for x in figures), figures
        assert sorted(s.absdiff.quantiles) == [0.0, 0.3, 0.9, 1.0]
        assert all(index_ok(ix) for ix in (s.absdiff.argmin, s.absdiff.argmax, s.a.argmin, s.b.argmax))
        assert 0 <= s.mismatches <= n
        for stream in ("a", "absdiff", "reldiff"):
            med = _native.order_stats(a, b, code, code, stream, [None, 0.25, 0.75], False, threads)
            assert len(med) == 3 and all(well_formed_number(x) for x in med)
        counts = _native.histogram(a, b, code, code, "absdiff", [0.0, 0.5, 1.0, 10.0, 1e6], False, threads)
        assert len(counts) == 4 and sum(counts) <= n
        calls += 1
finally:
    stop.set()
    writer.join()
print("calls", calls)
"""


@pytest.mark.slow  # two seconds of another thread rewriting the inputs
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_inputs_rewritten_during_calls_give_garbage_but_no_crash_or_hang(dtype):
    """Radix select counts a stream in one pass and narrows it in the next; rewritten inputs
    make the counts disagree between passes. Calls must still finish, index in bounds and
    return well-formed numbers (their values are meaningless). Runs in a subprocess so that a
    crash or a hang (killed at the timeout) is reported as a failure, not taken down with it."""
    # 300,000 elements: error_stats and order_stats take the one-pass order statistics (falling
    # back to radix select where the rewritten data makes them miss), both on worker threads
    n = 300_000
    script = _MUTATION_SCRIPT.format(n=n, dtype=dtype, seconds=2)
    out = _run_python(script, timeout=240)
    assert out.returncode == 0, f"exit {out.returncode}: {report_excerpt(out.stderr, 6000)}"
    assert int(out.stdout.split()[-1]) > 0


@pytest.mark.slow  # two seconds of another thread rewriting the inputs
@pytest.mark.parametrize("n", [(1 << 14) + 1, (1 << 16) + 1])
def test_inputs_rewritten_during_radix_select_passes(n):
    """Inputs rewritten while their order statistics are selected: 2^14 + 1 elements take radix
    select (keys gathered whole, then selected in memory); 2^16 + 1 (the smallest size that also
    runs on worker threads) the one-pass windows, and radix select wherever the rewritten data
    makes them miss."""
    script = _MUTATION_SCRIPT.format(n=n, dtype="float32", seconds=2)
    out = _run_python(script, timeout=240)
    assert out.returncode == 0, f"exit {out.returncode}: {report_excerpt(out.stderr, 6000)}"
    assert int(out.stdout.split()[-1]) > 0
