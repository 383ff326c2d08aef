"""The tests of the native engine, run again against sanitizer builds of ``poly._native``:
AddressSanitizer with UndefinedBehaviorSanitizer over every test of poly.compare (the users of
the engine) and poly.core's CUDA bindings, and ThreadSanitizer over the tests whose inputs are
large enough for the engine's passes to run on several threads.

Each run is a pytest subprocess with the sanitized module first on the import path and the
sanitizer runtimes preloaded (tests/sanitizers/native_build.py); it passes when the subprocess
exits 0 and no sanitizer reported anything. The builds are cached under build/sanitizers/.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

import pytest
from sanitizers.native_build import ROOT, SanitizerUnavailable, build

ADDRESS_UB = "address,undefined"
THREAD = "thread"

# What each sanitizer build runs (paths relative to the repository root).
SUITES = {
    ADDRESS_UB: ["tests/compare", "tests/core/test_core_cuda.py"],
    THREAD: [
        "tests/compare/test_native_thread_counts.py",
        "tests/compare/test_error_stats.py::test_large_inputs_threads_and_radix_refinement",
        "tests/compare/test_error_stats.py::test_value_medians_are_exact_and_lazy",
        "tests/compare/test_error_stats.py::test_one_pass_order_statistics_on_large_random_inputs",
        "tests/compare/test_error_stats.py::test_order_statistics_exact_when_the_sample_misleads",
        "tests/compare/test_error_stats.py::test_native_histogram_matches_numpy",
    ],
}


@dataclass(frozen=True)
class KnownReport:
    """A sanitizer report on native/src not fixed yet: its tests leave the main run and run on
    their own as a strict xfail, which starts failing (XPASS) once the report is gone."""

    name: str
    sanitize: str
    report: str
    signature: str  # a regular expression the report matches
    tests: tuple[str, ...]


# None open: the misaligned loads UBSan found in diff.cpp, block_stats.cpp and element_loader.cpp
# are read byte-wise now (element_loader.cpp), and their tests are back in the main run.
KNOWN_REPORTS: list[KnownReport] = []

REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer|ThreadSanitizer)|WARNING: ThreadSanitizer"
                    r"|runtime error:|SUMMARY: \w+Sanitizer")



class SanitizerReport(AssertionError):
    """A sanitizer reported a bug while the tests ran; the message holds the report."""


pytestmark = pytest.mark.skipif(bool(os.environ.get("POLY_SANITIZED_NATIVE")),
                                reason="already inside a sanitizer run")


@pytest.fixture(scope="module")
def sanitized():
    """The sanitizer builds, built on first use (skips when a tool is missing)."""
    builds = {}

    def get(sanitize: str):
        if sanitize not in builds:
            try:
                builds[sanitize] = build(sanitize)
            except SanitizerUnavailable as exc:
                builds[sanitize] = exc
        if isinstance(builds[sanitize], SanitizerUnavailable):
            pytest.skip(f"cannot build poly._native with -fsanitize={sanitize}: {builds[sanitize]}")
        return builds[sanitize]

    return get


def launcher(native, env) -> list[str]:
    """How to start Python under ``native``'s runtimes; checks that the sanitized module is the
    one imported. ThreadSanitizer cannot map its shadow memory under some kernels' address
    randomisation: then Python starts through ``setarch -R``."""
    probe = "import poly._native as m; print(m.__file__)"
    prefixes = [[]]
    if shutil.which("setarch"):
        prefixes.append(["setarch", os.uname().machine, "-R"])
    for prefix in prefixes:
        res = subprocess.run([*prefix, sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                             cwd=ROOT, timeout=120)
        if res.returncode == 0:
            assert os.path.samefile(res.stdout.strip(), native.module), res.stdout
            return prefix
        if "unexpected memory mapping" not in res.stderr:
            break
    pytest.fail(f"Python does not start with the {native.sanitize} sanitizer build:\n{res.stderr[-4000:]}")


def run_tests(native, tests, deselect=()) -> None:
    """Runs pytest on ``tests`` against ``native``; fails showing the sanitizer's report."""
    env = native.environment()
    prefix = launcher(native, env)
    # --capture=sys leaves file descriptor 2 alone, so a report written there while a test runs
    # reaches this process's pipe even when the runtime aborts the subprocess
    cmd = [*prefix, sys.executable, "-m", "pytest", "-q", "-x", "--capture=sys", "-p", "no:cacheprovider",
           *tests, *(f"--deselect={t}" for t in deselect)]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800)
    found = REPORT.search(res.stderr)
    if res.returncode == 0 and not found:
        return
    summary = "\n".join(res.stdout.splitlines()[-30:])
    if found:
        report = res.stderr[max(0, found.start() - 200):][:12000]
        raise SanitizerReport(f"-fsanitize={native.sanitize}: pytest exited {res.returncode} with a sanitizer "
                              f"report\n--- report (stderr) ---\n{report}\n--- pytest ---\n{summary}")
    pytest.fail(f"-fsanitize={native.sanitize}: pytest exited {res.returncode}\n--- stderr ---\n"
                f"{res.stderr[-4000:]}\n--- pytest ---\n{summary}", pytrace=False)


@pytest.mark.slow
@pytest.mark.parametrize("sanitize", [ADDRESS_UB, THREAD])
def test_native_tests_pass_under_sanitizers(sanitized, sanitize):
    """Every test of SUITES[sanitize] passes with no report, known reports' tests aside."""
    deselect = [t for k in KNOWN_REPORTS if k.sanitize == sanitize for t in k.tests]
    run_tests(sanitized(sanitize), SUITES[sanitize], deselect)


def test_a_report_fails_the_run(sanitized):
    """The plumbing: a heap overflow under the AddressSanitizer run aborts it, and the report
    reaches the failure message."""
    with pytest.raises(SanitizerReport, match=r"heap-buffer-overflow[\s\S]*test_reads_past_the_end"):
        run_tests(sanitized(ADDRESS_UB), ["tests/sanitizers/heap_overflow_probe.py"])


@pytest.mark.slow
@pytest.mark.parametrize("known", [
    pytest.param(k, id=k.name, marks=pytest.mark.xfail(strict=True, raises=SanitizerReport, reason=k.report))
    for k in KNOWN_REPORTS
])
def test_known_reports_still_reproduce(sanitized, known):
    """The tests of a known report, alone: an expected failure until native/src is fixed (then
    this passes, and strict xfail turns that into a failure: remove the entry)."""
    try:
        run_tests(sanitized(known.sanitize), list(known.tests))
    except SanitizerReport as exc:
        if not re.search(known.signature, str(exc)):
            pytest.fail(f"a report other than the known one ({known.name}):\n{exc}", pytrace=False)
        raise
