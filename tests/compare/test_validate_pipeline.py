"""poly.compare.dataset: the streaming pipeline against per-sample CompareFunc.simple verdicts,
corrupt samples, max-failures, interruption, memory bound and the reports."""

from __future__ import annotations

import json
import sys
from collections import OrderedDict

import numpy as np
import pytest

from poly.compare import CompareFunc, IterationResult, RunResults
from poly.compare.dataset import (
    Accumulator,
    IterableDataset,
    RunnerReference,
    SampleChecker,
    SampleResult,
    ValidationPipeline,
    build_report,
    open_dataset,
    open_reference,
    render_html,
    write_html_report,
    write_json_report,
)
from poly.compare.dataset.sample_check import OutputCheck

N = 40
BAD = {3: 1e-2, 17: 5e-1, 29: 1e-3}  # planted: sample index -> perturbation of output "y"


def _fn(feed):
    x = feed["x"]
    return OrderedDict(y=np.tanh(x) * 2.0, z=(x.sum(axis=-1, keepdims=True) + 1.0).astype(np.float32))


@pytest.fixture
def data(tmp_path):
    """A dataset directory and a golden directory (plain .npz) with planted bad samples."""
    rng = np.random.default_rng(0)
    ds, golden = tmp_path / "ds", tmp_path / "golden"
    ds.mkdir()
    golden.mkdir()
    feeds, goldens = [], []
    for i in range(N):
        x = rng.standard_normal((2, 6)).astype(np.float32)
        out = _fn({"x": x})
        if i in BAD:
            out["y"] = out["y"].copy()
            out["y"][1, 2] += BAD[i]
        np.savez(ds / f"sample_{i:04d}.npz", x=x)
        np.savez(golden / f"sample_{i:04d}.npz", **out)
        feeds.append({"x": x})
        goldens.append(out)
    return ds, golden, feeds, goldens


def _runner(h, shape=(2, 6)):
    return h.NumpyRunner(_fn, {"x": (np.float32, shape)}, name="numpy")


def _pipeline(h, ds, golden, **kwargs):
    checker_opts = {k: kwargs.pop(k) for k in ("atol", "rtol", "check_error_stat", "error_quantile") if k in kwargs}
    dataset = open_dataset(str(ds)) if not isinstance(ds, IterableDataset) else ds
    return ValidationPipeline(_runner(h), dataset, open_reference(str(golden)), SampleChecker(**checker_opts),
                              **kwargs)


@pytest.mark.parametrize("stat", ["elemwise", "max", "mean", "median", "quantile"])
@pytest.mark.parametrize("workers", [1, 4])
def test_verdicts_match_compare_func_simple(h, data, stat, workers):
    ds, golden, feeds, goldens = data
    outcome = _pipeline(h, ds, golden, atol=1e-4, rtol=1e-4, check_error_stat=stat, error_quantile=0.9,
                        workers=workers).run()
    func = CompareFunc.simple(atol=1e-4, rtol=1e-4, check_error_stat=stat, error_quantile=0.9)
    expected_failed = set()
    for i, (feed, gold) in enumerate(zip(feeds, goldens, strict=True)):
        res = func(IterationResult(_fn(feed), runner_name="a"), IterationResult(gold, runner_name="b"))
        if not all(bool(r) for r in res.values()):
            expected_failed.add(i)
    acc = outcome.accumulator
    assert acc.samples == N and acc.errors == 0
    assert acc.failed == len(expected_failed)
    failed = {s["index"] for s in acc.failed_samples}
    assert failed == expected_failed
    if stat in ("elemwise", "max"):
        assert failed == set(BAD)
    # the worst samples are the failed ones, worst first
    worst = acc.worst()
    assert {w["index"] for w in worst[: len(failed)]} == failed
    if stat in ("elemwise", "max"):
        assert [w["index"] for w in worst[:3]] == [17, 3, 29]
        assert worst[0]["file"] == "sample_0017.npz"


@pytest.mark.parametrize("shape", [("batch", 6), (2, 6)], ids=["dynamic", "static-falls-back"])
def test_batch_gives_same_verdicts(h, data, shape):
    ds, golden, *_ = data
    outcome = ValidationPipeline(_runner(h, shape), open_dataset(str(ds)), open_reference(str(golden)),
                                 SampleChecker(), batch=4, workers=2).run()
    assert outcome.accumulator.samples == N, outcome.accumulator.error_samples[:2]
    assert {s["index"] for s in outcome.accumulator.failed_samples} == set(BAD)


def test_runresults_reference_streamed(h, data, tmp_path):
    ds, _, feeds, goldens = data
    results = RunResults([("golden", [IterationResult(g, runner_name="golden") for g in goldens])])
    path = tmp_path / "golden.json"
    results.save(str(path))
    ref = open_reference(str(path), by_name=False)
    outcome = ValidationPipeline(_runner(h), open_dataset(str(ds)), ref, SampleChecker()).run()
    assert {s["index"] for s in outcome.accumulator.failed_samples} == set(BAD)


def test_runner_reference_and_inputs_json(h, data, tmp_path):
    _, _, feeds, _ = data
    from poly.compare import save_inputs

    inputs = tmp_path / "inputs.json"
    save_inputs(feeds, str(inputs))
    outcome = ValidationPipeline(_runner(h), open_dataset([str(inputs)]), RunnerReference(_runner(h)),
                                 SampleChecker(atol=0, rtol=0)).run()
    assert outcome.passed and outcome.accumulator.passed == N


def test_corrupt_sample_is_skipped_and_reported(h, data):
    ds, golden, *_ = data
    (ds / "sample_0005.npz").write_bytes(b"not a zip file")
    outcome = _pipeline(h, ds, golden).run()
    acc = outcome.accumulator
    assert acc.samples == N and acc.errors == 1 and acc.compared == N - 1
    assert acc.error_samples[0]["file"] == "sample_0005.npz"
    assert {s["index"] for s in acc.failed_samples} == set(BAD)
    assert not outcome.passed


def test_missing_golden_is_reported(h, data):
    ds, golden, *_ = data
    (golden / "sample_0007.npz").unlink()
    acc = _pipeline(h, ds, golden).run().accumulator
    assert acc.errors == 1 and acc.error_samples[0]["index"] == 7
    assert "reference" in acc.error_samples[0]["error"]


def test_max_failures_stops_early(h, data):
    ds, golden, *_ = data
    outcome = _pipeline(h, ds, golden, max_failures=1, workers=1, prefetch=1).run()
    assert outcome.stopped_early
    assert outcome.accumulator.failed >= 1
    assert outcome.accumulator.samples < N


class _Interrupting:
    """A data source that raises KeyboardInterrupt (as Ctrl-C would) after ``after`` samples."""

    def __init__(self, feeds, after):
        self.feeds, self.after = feeds, after

    def __iter__(self):
        for i, feed in enumerate(self.feeds):
            if i == self.after:
                raise KeyboardInterrupt
            yield feed


def test_keyboard_interrupt_gives_partial_report(h, data, tmp_path):
    ds, golden, feeds, goldens = data
    results = RunResults([("golden", [IterationResult(g, runner_name="golden") for g in goldens])])
    results.save(str(tmp_path / "g.json"))
    dataset = IterableDataset(_Interrupting(feeds, after=20))
    outcome = ValidationPipeline(_runner(h), dataset, open_reference(str(tmp_path / "g.json"), by_name=False),
                                 SampleChecker(), workers=2).run()
    assert outcome.interrupted and not outcome.passed
    acc = outcome.accumulator
    assert acc.samples == 20
    assert {s["index"] for s in acc.failed_samples} == {3, 17}
    report = build_report(outcome)
    assert report["status"] == "interrupted" and report["samples"] == 20


def test_accumulator_memory_is_bounded():
    def fill(n):
        acc = Accumulator(worst_k=5, keep_failed=10, keep_errors=10)
        rng = np.random.default_rng(1)
        for i in range(n):
            v = float(rng.random())
            check = OutputCheck("y", v < 0.9, max_absdiff=v, max_reldiff=v * 3, stat_absdiff=v, stat_reldiff=v,
                                atol=0.5, rtol=0.5)
            acc.add(SampleResult(i, f"s{i}", [check]) if i % 50 else SampleResult(i, f"s{i}", error="bad"))
        return acc

    def size(acc):
        return len(json.dumps(build_report_like(acc)))

    def build_report_like(acc):
        return acc.to_dict()

    small, large = fill(1_000), fill(20_000)
    assert len(large._worst) == 5 and len(large.failed_samples) == 10 and len(large.error_samples) == 10
    assert large.outputs["y"].absdiff.counts.shape == small.outputs["y"].absdiff.counts.shape
    assert size(large) < 1.2 * size(small)
    assert sys.getsizeof(large.failed_samples) == sys.getsizeof(small.failed_samples)
    assert large.samples == 20_000 and large.errors == 400


def test_histogram_quantiles_bound_the_values():
    from poly.compare.dataset import LogHistogram

    hist = LogHistogram()
    values = np.random.default_rng(2).lognormal(-8, 2, 5_000)
    for v in values:
        hist.add(float(v))
    for q in (0.5, 0.9, 0.99):
        exact = float(np.quantile(values, q, method="inverted_cdf"))
        approx = hist.quantile(q)
        assert exact <= approx <= exact * 10 ** 0.25 * 1.0001


def test_json_and_html_reports(h, data, tmp_path):
    ds, golden, *_ = data
    (ds / "sample_0011.npz").write_bytes(b"garbage")
    outcome = _pipeline(h, ds, golden, atol=1e-4, rtol=1e-4).run()
    report = build_report(outcome, {"model": "m.onnx", "atol": 1e-4, "rtol": 1e-4})
    write_json_report(report, tmp_path / "r.json")
    loaded = json.loads((tmp_path / "r.json").read_text())
    assert loaded["format"] == "poly.validate.report"
    assert loaded["status"] == "failed"
    assert loaded["samples"] == N and loaded["failed"] == len(BAD) and loaded["errors"] == 1
    assert loaded["pass_rate"] == pytest.approx((N - 1 - len(BAD)) / N)  # the unreadable sample did not pass
    assert set(loaded["outputs"]) == {"y", "z"}
    y = loaded["outputs"]["y"]
    assert y["failed"] == len(BAD) and y["max_absdiff"] == pytest.approx(0.5, rel=1e-3)
    assert sum(y["absdiff_histogram"]["counts"]) == N - 1
    assert [w["index"] for w in loaded["worst_samples"][:3]] == [17, 3, 29]
    assert loaded["error_samples"][0]["file"] == "sample_0011.npz"

    write_html_report(report, tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    assert page == render_html(report)
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page and "<link" not in page
    assert page.count("<svg") == 6  # per output: its verdicts panel and two histograms
    assert 'id="outputs"' in page and 'id="worst"' in page and "sample_0017.npz" in page
    assert not list(tmp_path.glob("*.tmp*"))


class _ThreadRecordingRunner:
    """Wraps a runner: records which threads infer, and says it may infer on several at once."""

    def __init__(self, inner, safe):
        import threading

        self.inner, self.thread_safe_infer, self.threads = inner, safe, set()
        self._lock = threading.Lock()
        self.name = inner.name

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def __enter__(self):
        self.inner.__enter__()
        return self

    def __exit__(self, *exc):
        return self.inner.__exit__(*exc)

    def infer(self, feed, check_inputs=True):
        import threading
        import time

        with self._lock:
            self.threads.add(threading.get_ident())
        time.sleep(0.002)  # long enough for the other inference thread to take the next sample
        return self.inner.infer(feed, check_inputs=check_inputs)


@pytest.mark.parametrize("safe", [True, False])
def test_inference_threads_give_the_same_verdicts(h, data, safe):
    ds, golden, *_ = data
    runner = _ThreadRecordingRunner(_runner(h), safe)
    one = _pipeline(h, ds, golden, atol=1e-4, rtol=1e-4).run().accumulator
    outcome = ValidationPipeline(runner, open_dataset(str(ds)), open_reference(str(golden)),
                                 SampleChecker(atol=1e-4, rtol=1e-4), infer_threads=3, workers=2).run()
    acc = outcome.accumulator
    assert acc.samples == one.samples == N and acc.failed == one.failed == len(BAD)
    assert {s["index"] for s in acc.failed_samples} == {s["index"] for s in one.failed_samples} == set(BAD)
    assert len(runner.threads) == (3 if safe else 1)  # runners that do not say so stay on one thread


def test_interrupt_stops_every_inference_thread(h, data, tmp_path):
    ds, golden, feeds, goldens = data
    results = RunResults([("golden", [IterationResult(g, runner_name="golden") for g in goldens])])
    results.save(str(tmp_path / "g.json"))
    runner = _ThreadRecordingRunner(_runner(h), True)
    outcome = ValidationPipeline(runner, IterableDataset(_Interrupting(feeds, after=20)),
                                 open_reference(str(tmp_path / "g.json"), by_name=False), SampleChecker(),
                                 infer_threads=2).run()
    assert outcome.interrupted and outcome.accumulator.samples <= 20


def _summary(acc):
    return (acc.samples, acc.compared, acc.passed, acc.failed, acc.errors,
            sorted((s["index"], s["error"]) for s in acc.error_samples),
            sorted(s["index"] for s in acc.failed_samples))


@pytest.mark.parametrize("batch", [1, 4])
def test_in_turn_gives_what_threads_give(h, data, tmp_path, batch):
    # a worker process with one CPU runs its samples in turn, on one thread: the same verdicts,
    # errors (an unreadable sample, a missing golden file, a sample the model cannot run) and
    # early stop as the threaded pipeline
    ds, golden, feeds, goldens = data
    (ds / "sample_0005.npz").write_bytes(b"not a zip file")
    (golden / "sample_0007.npz").unlink()
    np.savez(ds / "sample_0009.npz", x=np.zeros((2, 5), np.float32))  # the wrong shape: inference fails
    threads_seen = []

    def fn(feed):
        threads_seen.append(__import__("threading").current_thread().name)
        if feed["x"].shape[-1] != 6:
            raise ValueError("x must have 6 columns")
        return _fn(feed)

    def run(**kwargs):
        runner = h.NumpyRunner(fn, {"x": (np.float32, ("batch", None))}, name="numpy")
        return ValidationPipeline(runner, open_dataset(str(ds)), open_reference(str(golden)), SampleChecker(),
                                  batch=batch, **kwargs).run()

    threaded = run(workers=2)
    threads_seen.clear()
    in_turn = run(threaded=False)
    assert _summary(in_turn.accumulator) == _summary(threaded.accumulator)
    acc = in_turn.accumulator
    assert acc.samples == N and {s["index"] for s in acc.failed_samples} == set(BAD) - {9}
    errors = {s["index"]: s["error"] for s in acc.error_samples}
    assert set(errors) == {5, 7, 9} and "reference" in errors[7] and "inference" in errors[9]
    assert set(threads_seen) == {"MainThread"}  # no thread was started
    stopped = run(threaded=False, max_failures=1)
    assert stopped.stopped_early and stopped.accumulator.failed == 1 and stopped.accumulator.samples < N


def test_in_turn_stops_at_ctrl_c(h, data, tmp_path):
    ds, golden, feeds, goldens = data
    results = RunResults([("golden", [IterationResult(g, runner_name="golden") for g in goldens])])
    results.save(str(tmp_path / "g.json"))
    dataset = IterableDataset(_Interrupting(feeds, after=20))
    outcome = ValidationPipeline(_runner(h), dataset, open_reference(str(tmp_path / "g.json"), by_name=False),
                                 SampleChecker(), threaded=False).run()
    assert outcome.interrupted and outcome.accumulator.samples == 20
    assert {s["index"] for s in outcome.accumulator.failed_samples} == {3, 17}
