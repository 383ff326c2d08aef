"""`poly validate --ray`: on a local 2-CPU Ray started by the tests, the report is the one a local
run over the same data gives (verdicts, failed samples, statistics); .npy, Parquet and URI
datasets; the actors start once per run (one runner load each, Ray Data not imported in them) and
end with it; a worker actor that dies is restarted and its samples counted once, and one that
keeps dying ends the run after MAX_WORKER_RESTARTS restarts; --max-failures and Ctrl-C stop the
job (Ctrl-C writes a partial report); without Ray, --ray names the install."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest

# Workers run in this environment, not in a `uv run` of the packaged repository (read at import).
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
ray = pytest.importorskip("ray", reason="Ray is not installed (pip install poly-cli[ray])")

# a local Ray cluster takes 20 s to start
# One worker runs them all (pytest-xdist's loadgroup): Ray's local cluster is started once per
# process (a session fixture), and two of them would fight for the 2 CPUs each one reserves. The
# mark is static: xdist reads the groups before conftest hooks could add marks.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]

N = 24
BAD = {2: 0.05, 9: 2e-3, 17: 0.3}
TOL = ["--atol", "1e-4", "--rtol", "1e-4"]
POLY_MAIN = "import sys; from poly.cli.main import main; sys.argv[0] = 'poly'; main()"


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray with 2 CPUs for the whole test session; `poly validate --ray` run in-process
    uses it as it is."""
    import logging

    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def _golden(runner, x, i):
    out = {k: np.array(v, copy=True) for k, v in runner.infer({"x": x}).items()}
    if i in BAD:
        out["probs"][0, 1] += BAD[i]
    return out


@pytest.fixture(scope="module")
def data(models, tmp_path_factory):
    """N samples of the mlp model as .npz and .npy directories and one Parquet file (rows named as
    the .npz files), and a golden directory of .npz with planted bad samples."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from poly.onnx import OnnxrtRunner, SessionFromOnnx

    root = tmp_path_factory.mktemp("raydata")
    ds, npy, golden = root / "ds", root / "npy", root / "golden"
    for d in (ds, npy, golden):
        d.mkdir()
    rng = np.random.default_rng(7)
    rows = {"name": [], "x": []}
    with OnnxrtRunner(SessionFromOnnx(models["mlp"])) as runner:
        for i in range(N):
            x = rng.standard_normal((1, 8)).astype(np.float32)
            np.savez(ds / f"img_{i:03d}.npz", x=x)
            np.save(npy / f"img_{i:03d}.npy", x)
            np.savez(golden / f"img_{i:03d}.npz", **_golden(runner, x, i))
            rows["name"].append(f"img_{i:03d}.npz")
            rows["x"].append(x.tolist())
    pq.write_table(pa.table(rows), root / "samples.parquet", row_group_size=5)
    return {"ds": ds, "npy": npy, "golden": golden, "parquet": root / "samples.parquet", "root": root}


def _report(path):
    return json.loads(path.read_text())


def _run_on_ray(runner, data, workers, items_per_task=4, **job):
    """The outcome of the Ray engine over the .npz dataset against the golden directory, on the
    tests' Ray (driven as the command drives any engine)."""
    from poly.cli.args.ray_cluster import RayArgs
    from poly.cli.validate import ValidationJob
    from poly.cli.validate.ray import RayEngine
    from poly.compare.dataset import ListedDataset, SampleChecker, open_reference

    job = ValidationJob(runner, ListedDataset.from_path(data["ds"]), open_reference(str(data["golden"])),
                        SampleChecker(atol=1e-4, rtol=1e-4), **job)
    with RayEngine(RayArgs(address="", workers=workers), items_per_task=items_per_task) as engine:
        return engine.run(job)


def test_ray_report_matches_local_run(poly, models, data, ray_cluster, tmp_path):
    local, remote = tmp_path / "local.json", tmp_path / "ray.json"
    base = ["validate", models["mlp"], "--onnxrt", "--dataset", data["ds"], "--golden", data["golden"], *TOL]
    res_local = poly(*base, "--report-json", local)
    res_ray = poly(*base, "--ray", "--ray-workers", "2", "--report-json", remote, "--report", tmp_path / "r.html")
    assert res_local.exit_code == res_ray.exit_code == 1, res_ray.output
    a, b = _report(local), _report(remote)
    for key in ("status", "samples", "compared", "passed", "failed", "errors", "pass_rate"):
        assert a[key] == b[key], (key, res_ray.output[-3000:])
    assert b["samples"] == N and {s["index"] for s in b["failed_samples"]} == set(BAD)
    assert sorted(a["failed_samples"], key=lambda s: s["index"]) == b["failed_samples"]
    assert a["worst_samples"] == b["worst_samples"]
    for name, out in a["outputs"].items():
        other = b["outputs"][name]
        assert out["absdiff_histogram"] == other["absdiff_histogram"]
        assert out["reldiff_histogram"] == other["reldiff_histogram"]
        assert out["absdiff_quantiles"] == other["absdiff_quantiles"]
        assert out["max_absdiff"] == other["max_absdiff"] and out["max_reldiff"] == other["max_reldiff"]
        assert out["mean_max_absdiff"] == pytest.approx(other["mean_max_absdiff"], rel=1e-12)
    assert b["config"]["ray_workers"] == 2
    assert "img_017.npz" in (tmp_path / "r.html").read_text()
    assert "FAILED | sample 17 (img_017.npz)" in res_ray.output


def test_ray_npy_samples_from_a_uri(poly, models, data, ray_cluster, tmp_path):
    rj = tmp_path / "r.json"
    uri = "file://" + str(data["npy"])
    result = poly("validate", models["mlp"], "--onnxrt", "--dataset", uri, "--golden", data["golden"], *TOL,
                  "--ray", "--report-json", rj)
    assert result.exit_code == 1, result.output
    report = _report(rj)
    assert report["samples"] == N and report["errors"] == 0
    assert [s["file"] for s in report["failed_samples"]] == [f"img_{i:03d}.npy" for i in sorted(BAD)]


def test_ray_parquet_rows_are_samples(poly, models, data, ray_cluster, tmp_path):
    rj = tmp_path / "r.json"
    result = poly("validate", models["mlp"], "--onnxrt", "--dataset", data["parquet"], "--golden", data["golden"],
                  *TOL, "--ray", "--ray-workers", "1", "--report-json", rj)
    assert result.exit_code == 1, result.output
    report = _report(rj)
    assert report["samples"] == N and report["passed"] == N - len(BAD)
    assert report["failed_samples"] == [{"index": i, "file": f"img_{i:03d}.npz"} for i in sorted(BAD)]


def test_ray_golden_under_a_uri(poly, models, data, ray_cluster, tmp_path):
    # a Parquet dataset against golden outputs read through pyarrow's file:// filesystem: the
    # same verdicts as with the golden directory given as a path
    rj = tmp_path / "r.json"
    uri = "file://" + str(data["golden"])
    result = poly("validate", models["mlp"], "--onnxrt", "--dataset", data["parquet"], "--golden", uri, *TOL,
                  "--ray", "--ray-workers", "1", "--report-json", rj)
    assert result.exit_code == 1, result.output
    report = _report(rj)
    assert report["samples"] == N and report["passed"] == N - len(BAD) and report["errors"] == 0
    assert report["failed_samples"] == [{"index": i, "file": f"img_{i:03d}.npz"} for i in sorted(BAD)]


def test_ray_golden_uri_missing_sample_and_bad_directory(poly, models, data, ray_cluster, tmp_path):
    golden = tmp_path / "golden"
    shutil.copytree(data["golden"], golden)
    (golden / "img_003.npz").unlink()
    rj = tmp_path / "r.json"
    result = poly("validate", models["mlp"], "--onnxrt", "--dataset", data["ds"], "--golden", "file://" + str(golden),
                  *TOL, "--ray", "--ray-workers", "1", "--report-json", rj)
    report = _report(rj)
    assert report["errors"] == 1 and report["samples"] == N, result.output[-2000:]
    assert "no golden file for sample 'img_003.npz'" in result.output
    missing = "file://" + str(tmp_path / "nowhere")
    result = poly("validate", models["mlp"], "--onnxrt", "--dataset", data["ds"], "--golden", missing, *TOL, "--ray")
    assert result.exit_code == 2
    assert f"--golden '{missing}': not a directory" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("cpus", "threads"), [(0.5, 1), (1.0, 1), (2.0, 2)])
def test_actor_session_threads_follow_the_cpus_it_reserves(models, ray_cluster, cpus, threads):
    """Each actor's ONNX-Runtime pool is as wide as its CPU reservation, not as the machine (two
    actors with machine-wide pools on two cores ran a third as fast as one)."""
    from poly.cli.args.onnx.onnxrt import OnnxrtArgs
    from poly.cli.args.ray_cluster import RayArgs
    from poly.cli.validate.ray import actor_session_options
    from poly.onnx import OnnxrtRunner, SessionFromOnnx

    options = actor_session_options(RayArgs(address="", cpus_per_worker=cpus), OnnxrtArgs())
    assert options == {"intra_op_num_threads": threads, "inter_op_num_threads": 1}
    assert actor_session_options(RayArgs(address="", cpus_per_worker=cpus), OnnxrtArgs(providers=("cuda",))) is None

    @ray.remote(num_cpus=min(cpus, 1.0))
    def pool_width(runner):
        with runner:
            used = runner.sess.get_session_options()
            return used.intra_op_num_threads, used.inter_op_num_threads

    runner = OnnxrtRunner(SessionFromOnnx(models["mlp"], session_options=options))
    assert ray.get(pool_width.remote(runner)) == (threads, 1)


@pytest.mark.slow
def test_killed_worker_is_retried_and_samples_counted_once(models, data, ray_cluster, tmp_path):
    from poly.onnx import OnnxrtRunner, SessionFromOnnx

    marker = str(tmp_path / "killed")

    class DyingRunner(OnnxrtRunner):
        """Ends its process at its 5th inference, the first time only (a marker file remembers)."""

        calls = 0

        def infer(self, feed_dict, *args, **kwargs):
            DyingRunner.calls += 1
            if DyingRunner.calls == 5 and not os.path.exists(marker):
                open(marker, "w").close()
                os._exit(1)
            return super().infer(feed_dict, *args, **kwargs)

    outcome = _run_on_ray(DyingRunner(SessionFromOnnx(models["mlp"])), data, workers=2)
    assert os.path.exists(marker)  # a worker did die
    acc = outcome.accumulator
    assert not outcome.interrupted
    assert acc.samples == N and acc.passed == N - len(BAD)
    assert [s["index"] for s in acc.failed_samples] == sorted(BAD)


def _wait_for_free_cpus(cpus=2.0, deadline_s=60.0):
    """Whether the cluster's CPUs are all free again (the run's actors ended) before the deadline."""
    import time

    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if ray.available_resources().get("CPU", 0.0) >= cpus:
            return True
        time.sleep(0.1)
    return False


def test_actors_start_once_hold_the_runner_and_end_with_the_run(models, data, ray_cluster, tmp_path):
    """Two actors validate all six blocks (one runner load each, in two processes), their
    processes never import Ray Data or pandas (a Ray Data actor pool's workers import both at
    start), and their CPUs are free again once the run returns."""
    from poly.onnx import OnnxrtRunner, SessionFromOnnx

    record = tmp_path / "record"
    record.mkdir()

    class RecordingRunner(OnnxrtRunner):
        """Leaves a file per activation, and per inference the modules its process has loaded."""

        def activate(self):
            (record / f"activate_{os.getpid()}_{len(list(record.glob('activate_*')))}").touch()
            return super().activate()

        def infer(self, feed_dict, *args, **kwargs):
            loaded = [m for m in ("ray.data", "pandas") if m in sys.modules]
            (record / f"infer_{os.getpid()}_{len(list(record.glob('infer_*')))}").write_text(",".join(loaded))
            return super().infer(feed_dict, *args, **kwargs)

    merged = []
    outcome = _run_on_ray(RecordingRunner(SessionFromOnnx(models["mlp"])), data, workers=2,
                          progress=lambda acc, elapsed: merged.append(acc.samples))
    assert outcome.accumulator.samples == N and outcome.accumulator.passed == N - len(BAD)
    assert len(merged) == N // 4  # six blocks, each merged once
    activations = sorted(p.name.split("_")[1] for p in record.glob("activate_*"))
    assert len(activations) == 2 and len(set(activations)) == 2, activations
    inferences = list(record.glob("infer_*"))
    assert len(inferences) == N and {p.name.split("_")[1] for p in inferences} <= set(activations)
    assert all(p.read_text() == "" for p in inferences), [p.read_text() for p in inferences]
    assert _wait_for_free_cpus(), ray.available_resources()


@pytest.mark.slow
def test_worker_dying_on_every_try_ends_the_run_after_bounded_restarts(models, data, ray_cluster, tmp_path):
    """An actor whose process dies on every try of a block is restarted MAX_WORKER_RESTARTS
    times, then the run fails with Ray's error instead of retrying without end."""
    from poly.cli.validate.ray import MAX_WORKER_RESTARTS
    from poly.onnx import OnnxrtRunner, SessionFromOnnx

    deaths = tmp_path / "deaths"
    deaths.mkdir()

    class AlwaysDyingRunner(OnnxrtRunner):
        """Ends its process at its 3rd inference, in every process it is loaded in."""

        calls = 0

        def infer(self, feed_dict, *args, **kwargs):
            AlwaysDyingRunner.calls += 1
            if AlwaysDyingRunner.calls == 3:
                (deaths / str(os.getpid())).touch()
                os._exit(1)
            return super().infer(feed_dict, *args, **kwargs)

    with pytest.raises(ray.exceptions.RayActorError):
        _run_on_ray(AlwaysDyingRunner(SessionFromOnnx(models["mlp"])), data, workers=1)
    assert len(list(deaths.iterdir())) == MAX_WORKER_RESTARTS + 1
    assert _wait_for_free_cpus(), ray.available_resources()


def test_max_failures_stops_the_actors(models, data, ray_cluster):
    """--max-failures stops after the block that reaches it, with blocks still queued on the
    actors: those are dropped and the actors end."""
    from poly.onnx import OnnxrtRunner, SessionFromOnnx

    outcome = _run_on_ray(OnnxrtRunner(SessionFromOnnx(models["mlp"])), data, workers=2, max_failures=1)
    assert outcome.stopped_early and not outcome.interrupted
    assert 1 <= outcome.accumulator.failed and outcome.accumulator.samples < N
    assert _wait_for_free_cpus(), ray.available_resources()


@pytest.mark.slow
def test_sigint_stops_the_job_and_writes_a_partial_report(data, ray_cluster, tmp_path):
    from fixtures import onnx_models
    from onnx import TensorProto, helper, numpy_helper

    from poly.onnx import OnnxrtRunner, SessionFromOnnx

    # a model slow enough per sample that the run is still going when it is interrupted
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array((rng.standard_normal((256, 256)) / 16).astype(np.float32), "w")
    nodes, prev = [], "x"
    for k in range(24):
        nodes.append(helper.make_node("MatMul", [prev, "w"], [f"h{k}"]))
        prev = f"h{k}"
    nodes.append(helper.make_node("Identity", [prev], ["y"]))
    graph = helper.make_graph(nodes, "slow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [256, 256])], initializer=[w])
    model = onnx_models.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx_models.OPSET)],
                                               ir_version=onnx_models.IR_VERSION), tmp_path / "slow.onnx")
    ds, golden = tmp_path / "ds", tmp_path / "golden"
    ds.mkdir()
    golden.mkdir()
    total = 400
    x = rng.standard_normal((256, 256)).astype(np.float32)
    for i in range(total):
        np.save(ds / f"s_{i:04d}.npy", x)
    with OnnxrtRunner(SessionFromOnnx(str(model))) as runner:
        y = runner.infer({"x": x})["y"]
    for i in range(total):
        np.savez(golden / f"s_{i:04d}.npz", y=y)
    rj = tmp_path / "r.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", POLY_MAIN, "validate", str(model), "--onnxrt", "--dataset", str(ds),
         "--golden", str(golden), f"--ray={ray_cluster}", "--report-json", str(rj)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if "samples/s" in line:  # the first merged batch
            proc.send_signal(signal.SIGINT)
            break
    out = "".join(lines) + proc.communicate(timeout=120)[0]
    assert proc.returncode == 1, out
    assert "INTERRUPTED" in out and "Traceback" not in out
    report = _report(rj)
    assert report["status"] == "interrupted" and report["interrupted"]
    assert 0 < report["samples"] < total and report["failed"] == 0


def test_ray_flags_need_ray_and_uris_need_ray(poly, models, data):
    base = ["validate", models["mlp"], "--onnxrt", "--golden", data["golden"]]
    result = poly(*base, "--dataset", data["ds"], "--ray-workers", "3")
    assert result.exit_code == 2 and "--ray-workers needs --ray" in result.output
    result = poly(*base, "--dataset", "s3://bucket/samples")
    assert result.exit_code == 2 and "URIs are read with --ray only" in result.output
    result = poly("validate", models["mlp"], "--onnxrt", "--data-loader-script", "x.py", "--golden", data["golden"],
                  "--ray")
    assert result.exit_code == 2 and "--data-loader-script cannot be used with --ray" in result.output


def test_ray_missing_names_the_install(models, data):
    code = ("import sys; sys.modules['ray'] = None\n"
            "from poly.cli.main import main\n"
            "sys.argv = ['poly'] + sys.argv[1:]\n"
            "main()")
    proc = subprocess.run([sys.executable, "-c", code, "validate", models["mlp"], "--onnxrt", "--dataset",
                           str(data["ds"]), "--golden", str(data["golden"]), "--ray"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    errors = [line for line in (proc.stdout + proc.stderr).splitlines() if "poly-cli[ray]" in line]
    assert len(errors) == 1 and "pip install" in errors[0], proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
