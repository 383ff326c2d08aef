"""Shared pytest configuration of the poly test suite: the order in which pytest-xdist hands tests
out, one CPU per worker, and the summary of what the sanitizer, fuzz,
kernel-compile and type-check tests ran."""

from __future__ import annotations

import json
import os
import signal
from collections import Counter

# Suites whose counts the run's summary prints (a path prefix of their node ids), in this order.
NOTED_SUITES = {
    "sanitizer runs": "tests/native/test_native_sanitizers.py",
    "fuzz": "tests/fuzz/",
    "kernel compile": "tests/compare/test_gpu_kernel_compile.py",
    "type check": "tests/test_types.py",
}
SANITIZER_RUN_PROPERTY = "sanitizer_run"  # recorded by tests/native/test_native_sanitizers.py


def pytest_configure(config):
    # Started in the background of a non-interactive shell (`.ci/run &`), the test process
    # inherits SIGINT ignored, and every `poly` it starts would too (an ignored signal stays
    # ignored across exec): the tests that press Ctrl-C on a `poly` need it heard as a terminal
    # would deliver it. A handler, unlike an ignored signal, is reset to the default in children.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    config.pluginmanager.register(NotedSuitesSummary(), "poly-noted-suites-summary")
    _pin_xdist_worker()


def _pin_xdist_worker() -> None:
    """With one pytest-xdist worker per CPU (`-n auto`), each worker (and every process it
    starts) runs on a CPU of its own. Unpinned, every ONNX-Runtime session and native comparison
    of a worker starts a thread per CPU, and their spinning threads compete with the other
    workers' for the same CPUs (a search test took 34 s in the suite, 11 s alone)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if not worker.startswith("gw") or not hasattr(os, "sched_setaffinity"):
        return
    cpus = sorted(os.sched_getaffinity(0))
    if count >= 2 and count == len(cpus):
        os.sched_setaffinity(0, {cpus[int(worker[2:]) % len(cpus)]})


def _rank(item) -> int:
    """Where an item goes in the run: the sanitizer runs first (the longest items, each a pytest
    run of its own), then the other slow tests, then the rest."""
    if item.nodeid.startswith(NOTED_SUITES["sanitizer runs"]) and item.get_closest_marker("slow"):
        return 0
    return 1 if item.get_closest_marker("slow") else 2


def pytest_collection_modifyitems(config, items):
    # (tests that must share a worker carry a static xdist_group mark: tests/cli/test_cli_validate_ray.py)
    # a stable sort: within a rank, the collection order (file by file) stays
    items.sort(key=_rank)


class NotedSuitesSummary:
    """Counts the outcomes of NOTED_SUITES' tests and collects what each sanitizer run ran, then
    prints both at the end of the run. Under xdist it works in the controller, which receives
    every worker's reports (their user properties included)."""

    def __init__(self):
        self.outcomes = {name: Counter() for name in NOTED_SUITES}
        self.sanitizer_runs: list[dict] = []

    def pytest_runtest_logreport(self, report):
        suite = next((name for name, prefix in NOTED_SUITES.items() if report.nodeid.startswith(prefix)), None)
        # one outcome a test: its call's, or its setup's when the setup skipped or failed it
        if suite is not None and (report.when == "call" or (report.when == "setup" and report.outcome != "passed")):
            self.outcomes[suite][report.outcome] += 1
        if report.when == "call":
            for key, value in report.user_properties:
                if key == SANITIZER_RUN_PROPERTY:
                    self.sanitizer_runs.append(json.loads(value))

    def pytest_terminal_summary(self, terminalreporter):
        if not any(self.outcomes.values()) and not self.sanitizer_runs:
            return
        write = terminalreporter.write_line
        terminalreporter.section("sanitizer, fuzz, kernel-compile and type-check tests")
        for name, counts in self.outcomes.items():
            write(f"{name} ({NOTED_SUITES[name]}): {_told(counts) or 'not run'}")
        for run in sorted(self.sanitizer_runs, key=lambda r: r["run"]):
            total = Counter()
            for counts in run["files"].values():
                total.update(counts)
            built = f"built in {run['build_s']} s, " if run["build_s"] else ""
            write(f"-fsanitize={run['sanitize']} [{run['run']}]: {_told(total)} ({built}tests ran in {run['run_s']} s)")
            for path, counts in run["files"].items():
                write(f"    {path}: {_told(counts)}")


def _told(counts) -> str:
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
