"""`poly validate --processes N`: worker processes each holding a loaded runner give the report a
run in one process gives on the same data (verdicts, failed samples, histograms, worst samples),
with golden files or a second backend; --max-failures stops early; the flags it cannot take end
with one usage line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from poly.cli.validate import processes_supported

pytestmark = pytest.mark.skipif(not processes_supported(), reason="--processes starts workers by fork")

N = 40
BAD = {3: 0.05, 11: 2e-3, 29: 0.3}
TOL = ["--atol", "1e-4", "--rtol", "1e-4"]


@pytest.fixture(scope="module")
def data(models, tmp_path_factory):
    """N samples of the mlp model as .npz files and a golden directory with planted bad samples."""
    from poly.onnx import OnnxrtRunner, SessionFromOnnx

    root = tmp_path_factory.mktemp("procdata")
    ds, golden = root / "ds", root / "golden"
    ds.mkdir()
    golden.mkdir()
    rng = np.random.default_rng(11)
    with OnnxrtRunner(SessionFromOnnx(models["mlp"])) as runner:
        for i in range(N):
            x = rng.standard_normal((1, 8)).astype(np.float32)
            np.savez(ds / f"img_{i:03d}.npz", x=x)
            out = {k: np.array(v, copy=True) for k, v in runner.infer({"x": x}).items()}
            if i in BAD:
                out["probs"][0, 1] += BAD[i]
            np.savez(golden / f"img_{i:03d}.npz", **out)
    return {"ds": ds, "golden": golden}


def _report(path):
    return json.loads(path.read_text())


def test_processes_report_matches_one_process(poly, models, data, tmp_path):
    one, many = tmp_path / "one.json", tmp_path / "many.json"
    base = ["validate", models["mlp"], "--onnxrt", "--dataset", data["ds"], "--golden", data["golden"], *TOL]
    res_one = poly(*base, "--report-json", one)
    res_many = poly(*base, "--processes", "3", "--report-json", many, "--report", tmp_path / "r.html")
    assert res_one.exit_code == res_many.exit_code == 1, res_many.output
    a, b = _report(one), _report(many)
    for key in ("status", "samples", "compared", "passed", "failed", "errors", "pass_rate"):
        assert a[key] == b[key], key
    assert b["samples"] == N and {s["index"] for s in b["failed_samples"]} == set(BAD)
    assert sorted(a["failed_samples"], key=lambda s: s["index"]) == sorted(b["failed_samples"],
                                                                           key=lambda s: s["index"])
    assert a["worst_samples"] == b["worst_samples"]
    for name, out in a["outputs"].items():
        other = b["outputs"][name]
        assert out["absdiff_histogram"] == other["absdiff_histogram"]
        assert out["reldiff_histogram"] == other["reldiff_histogram"]
        assert out["max_absdiff"] == other["max_absdiff"] and out["max_reldiff"] == other["max_reldiff"]
        assert out["mean_max_absdiff"] == pytest.approx(other["mean_max_absdiff"], rel=1e-12)
    assert b["config"]["processes"] == 3
    assert "img_029.npz" in (tmp_path / "r.html").read_text()
    assert "FAILED | sample 29 (img_029.npz)" in res_many.output


def test_processes_with_a_second_backend_as_reference(poly, models, data, tmp_path):
    rj = tmp_path / "r.json"
    result = poly("validate", models["mlp"], "--onnxrt", "--onnx-ref", "--dataset", data["ds"], *TOL,
                  "--processes", "2", "--report-json", rj)
    assert result.exit_code == 0, result.output
    report = _report(rj)
    assert report["samples"] == report["passed"] == N


def test_processes_stop_at_max_failures(poly, models, data, tmp_path):
    rj = tmp_path / "r.json"
    result = poly("validate", models["mlp"], "--onnxrt", "--dataset", data["ds"], "--golden", data["golden"], *TOL,
                  "--processes", "2", "--max-failures", "1", "--report-json", rj)
    assert result.exit_code == 1, result.output
    report = _report(rj)
    assert 1 <= report["failed"] and report["samples"] < N
    assert "Stopped early" in result.output


@pytest.mark.parametrize("flags, message", [
    (["--data-loader-script", "loader.py"], "With --processes, give --dataset as one local directory"),
    (["--golden", "GOLDEN_FILE"], "With --processes, --golden is one directory"),
])
def test_processes_flags_it_cannot_take(poly, models, data, tmp_path, flags, message):
    golden_file = tmp_path / "g.json"
    golden_file.write_text("[]")
    (tmp_path / "loader.py").write_text("def load_data():\n    yield {}\n")
    flags = [str(golden_file) if f == "GOLDEN_FILE" else str(tmp_path / f) if f == "loader.py" else f for f in flags]
    dataset = [] if "--data-loader-script" in flags else ["--dataset", data["ds"]]
    golden = [] if "--golden" in flags else ["--golden", data["golden"]]
    result = poly("validate", models["mlp"], "--onnxrt", *dataset, *golden, *flags, "--processes", "2")
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_processes_read_npy_samples_as_threads_do(poly, models, data, tmp_path):
    """--processes reads every sample format the threads engine reads (one reader for both):
    a directory of .npy arrays gives the report of the same samples as .npz files."""
    npy = tmp_path / "npy"
    npy.mkdir()
    for path in sorted(data["ds"].iterdir()):
        with np.load(path) as archive:
            np.save(npy / (path.stem + ".npy"), archive["x"])
    reports = {}
    for engine in ([], ["--processes", "2"]):
        rj = tmp_path / f"r{len(engine)}.json"
        result = poly("validate", models["mlp"], "--onnxrt", "--dataset", npy, "--golden", data["golden"], *TOL,
                      *engine, "--report-json", rj)
        assert result.exit_code == 1, result.output
        reports[len(engine)] = _report(rj)
    threads, processes = reports[0], reports[2]
    assert processes["samples"] == threads["samples"] == N and processes["errors"] == 0
    assert [s["file"] for s in processes["failed_samples"]] == [f"img_{i:03d}.npy" for i in sorted(BAD)]
    assert processes["failed_samples"] == sorted(threads["failed_samples"], key=lambda s: s["index"])
    assert processes["config"]["processes"] == 2


def test_processes_interrupted_return_what_was_merged(models, data):
    # Ctrl-C in the parent (here raised from the progress callback after the first merged batch):
    # the run returns the merged part marked interrupted, and no worker process is left behind
    import multiprocessing

    from poly.cli.validate import ProcessEngine, ValidationJob
    from poly.compare.dataset import ListedDataset, SampleChecker, open_reference
    from poly.onnx import OnnxrtRunner, SessionFromOnnx

    def interrupt(acc, elapsed):
        raise KeyboardInterrupt

    job = ValidationJob(OnnxrtRunner(SessionFromOnnx(models["mlp"])), ListedDataset.from_path(data["ds"]),
                        open_reference(str(data["golden"])), SampleChecker(atol=1e-4, rtol=1e-4), progress=interrupt)
    with ProcessEngine(processes=2, items_per_task=4) as engine:
        outcome = engine.run(job)
    assert outcome.interrupted and not outcome.passed
    assert 4 <= outcome.accumulator.samples < N
    assert multiprocessing.active_children() == []


def test_batches_are_a_fraction_of_a_workers_share_within_bounds():
    """Both engines (processes, Ray) size their batches with one rule: about 1/k of a worker's share,
    at least the configured size, at most 16 times it."""
    from poly.compare.dataset import items_per_batch

    assert items_per_batch(16_000, 8, 16, 8) == 125  # 1,000 a worker, an eighth of it
    assert items_per_batch(16_000, 8, 16, 4) == 128  # a quarter is 250: capped at 16 x 8
    assert items_per_batch(100, 8, 16, 8) == 8  # a small dataset: the configured size
    assert items_per_batch(0, 3, 4, 8) == 3


@pytest.fixture
def cpus(monkeypatch):
    """Makes this process see ``n`` usable CPUs (the default engine's choice depends on them)."""
    import poly.onnx.runners

    def set_cpus(n):
        monkeypatch.setattr(poly.onnx.runners, "usable_cpus", lambda: n)
    return set_cpus


def test_the_default_engine_is_a_process_per_cpu_where_threads_cannot_scale(poly, models, data, tmp_path,
                                                                             cpus, monkeypatch):
    from poly.cli.validate import driver

    monkeypatch.setattr(driver, "AUTO_SAMPLES_PER_PROCESS", 8)  # N = 40 samples: 5 processes at most
    base = ["validate", models["mlp"], "--onnxrt", "--dataset", data["ds"], "--golden", data["golden"], *TOL]
    cpus(4)
    res = poly(*base, "--report-json", tmp_path / "four.json")
    assert res.exit_code == 1, res.output
    assert "| 4 processes" in res.output
    report = _report(tmp_path / "four.json")
    assert report["config"]["processes"] == 4 and report["samples"] == N
    assert {s["index"] for s in report["failed_samples"]} == set(BAD)
    cpus(16)  # 16 CPUs, but 40 samples are 5 processes' worth
    res = poly(*base, "--report-json", tmp_path / "sixteen.json")
    assert "| 5 processes" in res.output and _report(tmp_path / "sixteen.json")["config"]["processes"] == 5
    # a flag that chooses threads keeps them; too few CPUs or another backend too
    for extra in (["--workers", "3"], ["--infer-threads", "2"], ["--processes", "1"]):
        res = poly(*base, *extra, "--report-json", tmp_path / "threads.json")
        assert "processes" not in res.output.split("VALIDATING", 1)[1].splitlines()[0], extra
        assert "workers" in _report(tmp_path / "threads.json")["config"], extra
    cpus(3)
    res = poly(*base, "--report-json", tmp_path / "three.json")
    assert _report(tmp_path / "three.json")["config"]["workers"] == 2


def test_the_default_engine_needs_a_local_directory_and_onnxrt_on_the_cpu(data, cpus, tmp_path):
    from poly.cli.validate import ValidationSources, default_processes

    cpus(8)

    class Runners:
        def __init__(self, *names):
            self.names = list(names)

    class Onnxrt:
        cpu_only = True

    ds, golden = str(data["ds"]), str(data["golden"])
    ort = Runners("onnxrt")
    # 40 samples are not 64 per process for two: threads
    assert default_processes(ValidationSources((ds,), None, (golden,)), ort, Onnxrt()) is None
    many = tmp_path / "many"
    many.mkdir()
    for i in range(200):
        (many / f"s{i:03d}.npz").write_bytes(b"")
    (many / ".hidden").write_bytes(b"")
    assert default_processes(ValidationSources((str(many),), None, (golden,)), ort, Onnxrt()) == 3
    assert default_processes(ValidationSources((str(many),), None, ()), Runners("onnxrt", "onnxrt"), Onnxrt()) == 3
    assert default_processes(ValidationSources((str(many),), None, (golden,)), Runners("trt"), Onnxrt()) is None
    assert default_processes(ValidationSources((str(many),), None, ()), Runners("onnxrt", "onnx-ref"), Onnxrt()) is None
    gpu = Onnxrt()
    gpu.cpu_only = False
    assert default_processes(ValidationSources((str(many),), None, (golden,)), ort, gpu) is None
    assert default_processes(ValidationSources((), "load.py", (golden,)), ort, Onnxrt()) is None
    assert default_processes(ValidationSources((str(many), ds), None, (golden,)), ort, Onnxrt()) is None
    assert default_processes(ValidationSources((str(many / "s000.npz"),), None, (golden,)), ort, Onnxrt()) is None
