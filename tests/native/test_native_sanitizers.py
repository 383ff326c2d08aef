"""The tests that reach the native engine's memory, run again against sanitizer builds of
``poly._native``: AddressSanitizer with UndefinedBehaviorSanitizer over the native-facing tests of
poly.compare and poly.core (the engine's own tests, integer limits, misaligned and foreign
arrays, the CUDA bindings) and the fuzzed readers whose damaged files reach the engine, and
ThreadSanitizer over the tests whose inputs are large enough for the engine's passes to run on
several threads.

Each entry of RUNS is one test item, a pytest subprocess with the sanitized module first on the
import path and the sanitizer runtimes preloaded (tests/sanitizers/native_build.py); it passes
when the subprocess exits 0 and no sanitizer reported anything. Being separate items, the runs
go to different pytest-xdist workers and overlap with the rest of the suite (tests/conftest.py
starts them first and prints which sanitizer ran which tests). The builds are shared by the
workers and cached under build/sanitizers/.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field

import pytest
from sanitizers.native_build import ROOT, SanitizerUnavailable, build
from sanitizers.reports import REPORT, report_excerpt

ADDRESS_UB = "address,undefined"
THREAD = "thread"



@dataclass(frozen=True)
class Run:
    """One sanitizer run: the sanitizer, the tests (paths relative to the repository root, with
    ``::name`` for some tests of a file) and tests of those files left out."""

    sanitize: str
    tests: list[str]
    deselect: list[str] = field(default_factory=list)


# The runs, by id. The AddressSanitizer tests are split in two runs of 1-2 minutes so that two
# workers can share them; the ThreadSanitizer run comes second, so that the first two workers
# build the two sanitizers at once rather than one waiting for the other's build.
RUNS = {
    # the one-pass order statistics: long by themselves (their NumPy oracles), a run of their own
    "asan-one-pass": Run(ADDRESS_UB, ["tests/compare/test_native_one_pass.py"]),
    "tsan-threads": Run(THREAD, [
        "tests/compare/test_native_thread_counts.py",
        "tests/compare/test_native_threads.py",
        "tests/compare/test_error_stats.py::test_large_inputs_threads_and_radix_refinement",
        "tests/compare/test_error_stats.py::test_value_medians_are_exact_and_lazy",
        "tests/compare/test_error_stats.py::test_one_pass_order_statistics_on_large_random_inputs",
        "tests/compare/test_error_stats.py::test_order_statistics_exact_when_the_sample_misleads",
        "tests/compare/test_error_stats.py::test_native_histogram_matches_numpy",
        "tests/compare/test_native_stream_order.py::test_sizes_around_the_windows_threshold",
        "tests/compare/test_native_stream_order.py::test_ties_filling_a_rank_s_bin_are_counted_exactly",
    ], [
        # races by design (another thread rewrites the inputs to show the engine stays in bounds):
        # they run under AddressSanitizer, where a read out of bounds would show
        "tests/compare/test_native_threads.py::test_inputs_rewritten_during_calls_give_garbage_but_no_crash_or_hang",
        "tests/compare/test_native_threads.py::test_inputs_rewritten_during_radix_select_passes",
    ]),
    # the rest of the engine's tests, and where foreign memory enters it: arrays of every
    # layout and owner, CUDA buffers, damaged files read and compared, the JSON payloads' base64 decoder
    "asan-engine": Run(ADDRESS_UB, [
        "tests/compare/test_error_stats.py",
        "tests/compare/test_native_misaligned_inputs.py",
        "tests/compare/test_native_stream_order.py",
        "tests/compare/test_compare_integer_limits.py",
        "tests/compare/test_native_threads.py",
        "tests/core/test_core_host_arrays.py",
        "tests/core/test_core_memory_ownership.py",
        "tests/core/test_core_cuda_arrays.py",
        "tests/core/test_core_cuda.py",
        "tests/core/test_core_base64.py",
        "tests/fuzz/test_fuzz_data_files.py",
    ]),
}
SANITIZER_RUN_PROPERTY = "sanitizer_run"  # the user property tests/conftest.py summarises


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


def _test_file(classname: str) -> str:
    """The test file of a JUnit ``classname`` (``tests.compare.test_x`` or ``tests.compare.test_x.TestY``)."""
    parts = classname.split(".")
    for n in range(len(parts), 0, -1):
        path = "/".join(parts[:n]) + ".py"
        if (ROOT / path).is_file():
            return path
    return classname


def outcomes(junit_xml) -> dict[str, dict[str, int]]:
    """Per test file, how many tests of a JUnit XML report passed, were skipped or failed."""
    per_file: dict[str, Counter] = {}
    for case in ET.parse(junit_xml).getroot().iter("testcase"):
        kinds = {child.tag for child in case}
        outcome = ("failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds
                   else "passed")
        per_file.setdefault(_test_file(case.get("classname", "")), Counter())[outcome] += 1
    return {path: dict(counts) for path, counts in sorted(per_file.items())}


def run_tests(native, tests, deselect=(), junit_xml=None) -> None:
    """Runs pytest on ``tests`` against ``native``; fails showing the sanitizer's report. With
    ``junit_xml``, the subprocess writes its JUnit XML report there."""
    env = native.environment()
    prefix = launcher(native, env)
    # --capture=sys leaves file descriptor 2 alone, so a report written there while a test runs
    # reaches this process's pipe even when the runtime aborts the subprocess; -n 0: one process
    # (the suite's options start xdist workers, and the run is one worker's share already)
    cmd = [*prefix, sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "--capture=sys", "-p", "no:cacheprovider",
           *(["--junit-xml", str(junit_xml)] if junit_xml else []), *tests, *(f"--deselect={t}" for t in deselect)]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800)
    found = REPORT.search(res.stderr)
    if res.returncode == 0 and not found:
        return
    summary = "\n".join(res.stdout.splitlines()[-30:])
    if found:
        report = report_excerpt(res.stderr)
        raise SanitizerReport(f"-fsanitize={native.sanitize}: pytest exited {res.returncode} with a sanitizer "
                              f"report\n--- report (stderr) ---\n{report}\n--- pytest ---\n{summary}")
    pytest.fail(f"-fsanitize={native.sanitize}: pytest exited {res.returncode}\n--- stderr ---\n"
                f"{res.stderr[-4000:]}\n--- pytest ---\n{summary}", pytrace=False)


@pytest.mark.slow
@pytest.mark.parametrize("run", list(RUNS))
def test_native_tests_pass_under_sanitizers(sanitized, run, record_property, tmp_path):
    """Every test of RUNS[run] passes with no report, known reports' tests aside; what ran is
    recorded for the run's summary (tests/conftest.py prints it)."""
    sanitize, tests = RUNS[run].sanitize, RUNS[run].tests
    deselect = [*RUNS[run].deselect, *(t for k in KNOWN_REPORTS if k.sanitize == sanitize for t in k.tests)]
    native = sanitized(sanitize)
    start = time.monotonic()
    run_tests(native, tests, deselect, junit_xml=tmp_path / "junit.xml")
    files = outcomes(tmp_path / "junit.xml")
    record_property(SANITIZER_RUN_PROPERTY, json.dumps({
        "run": run, "sanitize": sanitize, "files": files, "build_s": round(native.built_s, 1),
        "run_s": round(time.monotonic() - start, 1)}))
    ran = sum(n for counts in files.values() for k, n in counts.items() if k == "passed")
    assert ran > 0, f"the {run} run passed no test: {files}"


def test_outcomes_are_counted_per_test_file(tmp_path):
    """The summary's counts: per file, from a JUnit report (a class's tests go to its file)."""
    xml = tmp_path / "junit.xml"
    xml.write_text("""<testsuites><testsuite>
        <testcase classname="tests.compare.test_error_stats" name="a"/>
        <testcase classname="tests.compare.test_error_stats" name="b"><skipped message="no GPU"/></testcase>
        <testcase classname="tests.native.test_native_sanitizers.Inner" name="c"><failure message="x"/></testcase>
        <testcase classname="tests.compare.test_error_stats" name="d"/>
        </testsuite></testsuites>""")
    assert outcomes(xml) == {
        "tests/compare/test_error_stats.py": {"passed": 2, "skipped": 1},
        "tests/native/test_native_sanitizers.py": {"failed": 1},
    }


def test_every_run_names_existing_tests():
    """A renamed or moved test file must not drop silently out of a sanitizer run."""
    for run, spec in RUNS.items():
        assert spec.sanitize in (ADDRESS_UB, THREAD), run
        for test in [*spec.tests, *spec.deselect]:
            path, _, name = test.partition("::")
            assert (ROOT / path).is_file(), f"{run}: {path} does not exist"
            if name:
                assert re.search(rf"^def {re.escape(name)}\(", (ROOT / path).read_text(), re.M), \
                    f"{run}: {test} does not exist"


@pytest.mark.slow  # it needs the AddressSanitizer build
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
