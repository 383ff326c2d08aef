"""`poly validate`'s engines behind one contract: threads, worker processes and any
``BatchEngine`` give the same accumulator on the same job (the samples read by the one reader,
.npy and multi-feed files included); each engine's usage checks name its flag; the dataset is
listed once, the same way for every engine."""

from __future__ import annotations

import json

import click
import numpy as np
import pytest

from poly.cli.validate import (
    BatchEngine,
    ProcessEngine,
    ThreadEngine,
    ValidationEngine,
    ValidationJob,
    ValidationSources,
    processes_supported,
)
from poly.compare import save_inputs
from poly.compare.dataset import (
    ListedDataset,
    SampleChecker,
    ValidationWorker,
    list_work_items,
    open_dataset,
    open_reference,
    read_samples,
)

N = 10
BAD = {1: 0.05, 7: 0.3}


class SerialEngine(BatchEngine):
    """A batch engine whose one worker runs in this process: what the contract leaves to an
    engine is starting workers, mapping batches and stopping them."""

    flag = "--serial"
    batches_per_worker = 2

    def start_workers(self, worker_kwargs, count):
        self.worker = ValidationWorker(**worker_kwargs)
        self.stopped = None

    def map_batches(self, batches):
        for batch in batches:
            rows = [item.to_row() for item in batch]
            yield self.worker.validate({key: [row[key] for row in rows] for key in rows[0]})

    def stop_workers(self, aborted):
        self.stopped = aborted


@pytest.fixture(scope="module")
def data(models, tmp_path_factory):
    """The mlp model's samples as .npy arrays, one .json holding two feed dicts, and golden .npz
    files (planted bad samples) named as the samples."""
    from poly.onnx import OnnxrtRunner, SessionFromOnnx

    root = tmp_path_factory.mktemp("engines")
    ds, golden = root / "ds", root / "golden"
    ds.mkdir()
    golden.mkdir()
    rng = np.random.default_rng(5)
    with OnnxrtRunner(SessionFromOnnx(models["mlp"])) as runner:
        for i in range(N):
            x = rng.standard_normal((1, 8)).astype(np.float32)
            np.save(ds / f"s_{i:03d}.npy", x)
            out = {k: np.array(v, copy=True) for k, v in runner.infer({"x": x}).items()}
            if i in BAD:
                out["probs"][0, 1] += BAD[i]
            np.savez(golden / f"s_{i:03d}.npz", **out)
    return {"ds": ds, "golden": golden, "root": root}


def _job(models, data, **kwargs):
    from poly.onnx import OnnxrtRunner, SessionFromOnnx

    return ValidationJob(OnnxrtRunner(SessionFromOnnx(models["mlp"])), ListedDataset.from_path(data["ds"]),
                         open_reference(str(data["golden"])), SampleChecker(atol=1e-4, rtol=1e-4), **kwargs)


def _summary(acc):
    return (acc.samples, acc.passed, acc.failed, acc.errors, sorted(s["index"] for s in acc.failed_samples),
            [(w["index"], w["file"]) for w in acc.worst()])


def test_every_engine_implements_the_one_interface():
    from poly.cli.validate.ray import RayEngine

    for engine in (ThreadEngine, ProcessEngine, RayEngine, SerialEngine):
        assert issubclass(engine, ValidationEngine)
    with pytest.raises(TypeError):
        BatchEngine(2)  # the batch loop alone is no engine: workers must be started, fed and stopped


def test_engines_give_the_same_accumulator(models, data):
    outcomes = {}
    engines = {"threads": ThreadEngine(workers=2, infer_threads=1), "serial": SerialEngine(2, items_per_task=2)}
    if processes_supported():
        engines["processes"] = ProcessEngine(2, items_per_task=2)
    for name, engine in engines.items():
        with engine:
            outcomes[name] = engine.run(_job(models, data))
    expected = _summary(outcomes["threads"].accumulator)
    assert expected[0] == N and expected[4] == sorted(BAD)
    assert expected[5][0] == (7, "s_007.npy")
    for name, outcome in outcomes.items():
        assert _summary(outcome.accumulator) == expected, name
    assert engines["serial"].stopped is False  # ran to the end: nothing to drop


def test_batch_engine_stops_at_max_failures_and_tells_the_workers(models, data):
    engine = SerialEngine(1, items_per_task=1)
    outcome = engine.run(_job(models, data, max_failures=1))
    assert outcome.stopped_early and outcome.accumulator.failed == 1
    # batches of half a worker's share (5 items): the first holds sample 1 and reaches the limit
    assert outcome.accumulator.samples == 5
    assert engine.stopped is True  # batches still queued are dropped


def test_one_reader_numbers_multi_feed_files_as_each_engine_does(models, data, tmp_path):
    ds = tmp_path / "mixed"
    ds.mkdir()
    x = np.ones((1, 8), np.float32)
    np.save(ds / "a.npy", x)
    save_inputs([{"x": x}, {"x": 2 * x}], str(ds / "b.json"))
    np.savez(ds / "c.npz", x=3 * x)
    (ds / "notes.txt").write_text("not a sample")
    items = list_work_items(ds)
    assert [(i.index, i.path.rsplit("/", 1)[1]) for i in items] == [(0, "a.npy"), (1, "b.json"), (2, "c.npz")]
    # in one process the samples are numbered in order; a distributed worker numbers an item's
    # samples from the item's own index
    listed = list(ListedDataset(items, inputs={"x": None}))
    assert [(s.index, s.name) for s in listed] == [(0, "a.npy"), (1, "b.json#0"), (2, "b.json#1"), (3, "c.npz")]
    assert float(listed[2].feed_dict["x"][0, 0]) == 2.0
    assert [(s.index, s.name) for s in read_samples(items[1], {"x": None})] == [(1, "b.json#0"), (2, "b.json#1")]
    # a .npy array names the model's only input: the inputs are asked for only when needed
    asked = []
    assert read_samples(items[2], lambda: asked.append(1))[0].name == "c.npz" and not asked
    error = read_samples(items[0], {"x": None, "y": None})[0]
    assert "the model has 2 inputs" in error.message


def test_the_dataset_is_listed_once_for_every_engine(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="holds no samples"):
        list_work_items(empty)
    with pytest.raises(ValueError, match="does not exist"):
        list_work_items(tmp_path / "nowhere")
    one = tmp_path / "one"
    one.mkdir()
    np.save(one / "s.npy", np.zeros(3))
    # threads list a directory; the distributed engines list one sample file too
    assert isinstance(open_dataset([str(one)]), ListedDataset)
    assert [i.path for i in open_dataset([str(one / "s.npy")], listed=True).items] == [str(one / "s.npy")]
    assert not isinstance(open_dataset([str(one / "s.npy")]), ListedDataset)


@pytest.mark.parametrize(("engine", "sources", "message"), [
    ("processes", {"data_loader_script": "x.py"}, "With --processes, give --dataset as one local directory"),
    ("processes", {"golden": ("G", "G")}, "With --processes, --golden is one directory"),
    ("ray", {"data_loader_script": "x.py"}, "--data-loader-script cannot be used with --ray"),
    ("ray", {"dataset": ("D", "D")}, "With --ray, give one --dataset"),
    ("ray", {"golden": ("G", "G")}, "With --ray, --golden is one directory"),
    ("ray", {"golden": ("file:///no/such/dir",)}, "--golden 'file:///no/such/dir': not a directory"),
])
def test_each_engine_checks_the_sources_it_cannot_take(data, engine, sources, message):
    from poly.cli.args.ray_cluster import RayArgs
    from poly.cli.validate.ray import RayEngine

    if engine == "processes" and not processes_supported():
        pytest.skip("--processes starts workers by fork")
    fill = {"D": str(data["ds"]), "G": str(data["golden"])}
    given = {"dataset": (str(data["ds"]),), "golden": (str(data["golden"]),)}
    given.update({k: tuple(fill.get(v, v) for v in val) if isinstance(val, tuple) else val
                  for k, val in sources.items()})
    if "data_loader_script" in sources:
        given["dataset"] = ()
    chosen = ProcessEngine(2) if engine == "processes" else RayEngine(RayArgs(address=""))
    with pytest.raises(click.UsageError, match=message.replace("(", r"\(")):
        chosen.check_usage(ValidationSources(**given))
    ThreadEngine().check_usage(ValidationSources(**given))  # the threads engine takes them all


def test_an_empty_dataset_directory_is_one_usage_line_for_every_engine(poly, models, data, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for engine in ([], ["--processes", "2"]):
        result = poly("validate", models["mlp"], "--onnxrt", "--dataset", empty, "--golden", data["golden"], *engine)
        assert result.exit_code == 2, result.output
        assert f"--dataset '{empty}' holds no samples" in result.output


def test_report_config_is_built_once_with_the_engines_entries(poly, models, data, tmp_path):
    configs = {}
    for engine in ([], ["--processes", "2"]):
        rj = tmp_path / f"r{len(engine)}.json"
        poly("validate", models["mlp"], "--onnxrt", "--dataset", data["ds"], "--golden", data["golden"],
             "--atol", "1e-4", "--rtol", "1e-4", *engine, "--report-json", rj)
        configs[len(engine)] = json.loads(rj.read_text())["config"]
    common = ["model", "runner", "reference", "dataset", "atol", "rtol", "check_error_stat", "error_quantile"]
    assert list(configs[0]) == [*common, "workers", "batch"]
    assert list(configs[2]) == [*common, "processes", "batch"]
    same = [k for k in common if k != "runner"]  # a runner's name counts the runners made
    assert {k: configs[0][k] for k in same} == {k: configs[2][k] for k in same}
    assert configs[0]["reference"] == str(data["golden"]) and configs[0]["dataset"] == str(data["ds"])
