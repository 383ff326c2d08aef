"""`poly run --trt`, `poly convert` to engines, `poly inspect model --display-as trt`, engines,
and `poly inspect tactics` / `diff-tactics`, with the installed TensorRT flavour (TensorRT-RTX:
it builds engines without a GPU; running or deserializing them needs one, which CI lacks)."""

from __future__ import annotations

import pytest
from fixtures import onnx_models
from fixtures.cli_helpers import error_lines, require_tensorrt, run_poly
from fixtures.tactic_replays import make_replays

from poly.core import cuda


@pytest.fixture(scope="module", autouse=True)
def _needs_tensorrt():
    require_tensorrt()


@pytest.mark.parametrize("name", ["light_zfnet512", "light_vgg19"])
def test_convert_real_models_to_engines(tmp_path, name):
    model = onnx_models.light_model_dir() / f"{name}.onnx"
    engine = tmp_path / f"{name}.engine"
    cache = tmp_path / "timing.cache"
    proc = run_poly("convert", model, "-o", engine, "--builder-optimization-level", "0",
                   "--save-timing-cache", cache)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert engine.stat().st_size > 100_000 and cache.exists()
    assert f"Saved engine to {engine}" in proc.stdout


def test_convert_with_profiles_and_timing_cache(models, tmp_path):
    engine = tmp_path / "dyn.engine"
    cache = tmp_path / "t.cache"
    cache.write_bytes(b"")  # an empty cache file is a fresh start
    proc = run_poly("convert", models["dynamic"], "-o", engine,
                   "--trt-min-shapes", "X:[1,1,2,2]", "--trt-opt-shapes", "X:[1,1,4,4]", "--trt-max-shapes", "X:[2,1,8,8]",
                   "--trt-min-shapes", "X:[4,1,8,8]", "--trt-opt-shapes", "X:[8,1,8,8]", "--trt-max-shapes", "X:[16,1,8,8]",
                   "--load-timing-cache", cache, "--profiling-verbosity", "detailed", "-v")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Optimization profile 1: {X (min=[4, 1, 8, 8], opt=[8, 1, 8, 8], max=[16, 1, 8, 8])}" in proc.stdout
    assert engine.stat().st_size > 0


def test_profile_flags_group_per_occurrence():
    from poly.cli.args.trt.config import parse_profiles
    from poly.cli.multi_option import MultiOption

    sep = MultiOption.OCCURRENCE_SEPARATOR
    opts = {"trt_min_shapes": (f"a:[1,2]{sep}b:[1]", "a:[4,2]"), "trt_opt_shapes": (f"a:[2,2]{sep}b:[2]", "a:[5,2]"),
            "trt_max_shapes": (f"a:[3,2]{sep}b:[3]", "a:[6,2]")}
    first, second = parse_profiles(opts)
    assert list(first) == ["a", "b"] and first["b"].max == (3,)
    assert list(second) == ["a"] and tuple(second["a"]) == ((4, 2), (5, 2), (6, 2))


@pytest.mark.parametrize("args, needle", [
    (["--trt-min-shapes", "X:[2,1,2,2]", "--trt-opt-shapes", "X:[1,1,2,2]", "--trt-max-shapes", "X:[2,1,2,2]"],
     "min <= opt <= max"),
    (["--trt-min-shapes", "X:[1,1,2,2]", "--trt-opt-shapes", "Y:[1,1,2,2]", "--trt-max-shapes", "X:[1,1,2,2]"],
     "input 'X' has no --trt-opt-shapes"),
    (["--pool-limit", "workspace:lots"], "--pool-limit"),
])
def test_bad_builder_flags_are_usage_errors(models, tmp_path, args, needle):
    proc = run_poly("convert", models["dynamic"], "-o", tmp_path / "x.engine", *args)
    assert proc.returncode == 2
    assert needle in error_lines(proc)[-1]
    assert not (tmp_path / "x.engine").exists()


def test_flags_the_flavour_lacks_fail_in_one_line(models, tmp_path):
    from poly.trt import is_rtx

    if not is_rtx():
        pytest.skip("full TensorRT has --fp16")
    proc = run_poly("convert", models["identity"], "-o", tmp_path / "x.engine", "--fp16")
    assert proc.returncode == 1
    lines = error_lines(proc)
    assert len(lines) == 1 and "fp16 is not available in TensorRT-RTX" in lines[0]


def test_inspect_network_of_an_unseen_model():
    model = onnx_models.light_model_dir() / "light_shufflenet.onnx"
    proc = run_poly("inspect", "model", model, "--display-as", "trt", "--show", "layers", "attrs")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "==== TensorRT Network ====" in out and "---- 1 Network Input(s) ----" in out
    assert "[Op: LayerType.CONVOLUTION]" in out and ".kernel_size_nd = (3, 3)" in out
    assert "<array dtype=float32" in out  # weights summarized, not printed, without --show weights
    weights = run_poly("inspect", "model", model, "--display-as", "trt", "--show", "weights")
    assert weights.returncode == 0 and weights.stdout.count("\n") > out.count("\n")


def test_mark_all_shows_in_the_network(models):
    proc = run_poly("inspect", "model", models["multi"], "--display-as", "trt")
    assert "---- 2 Network Output(s) ----" in proc.stdout


@pytest.mark.skipif(cuda.cuda_available(), reason="a GPU is present: the no-GPU path cannot be shown")
def test_run_trt_without_gpu_builds_saves_and_stops_in_one_line(models, tmp_path):
    engine = tmp_path / "mlp.engine"
    proc = run_poly("run", models["mlp"], "--trt", "--onnxrt", "--trt-outputs", "mark", "all",
                   "--save-engine", engine)
    assert proc.returncode == 1
    lines = error_lines(proc)
    assert len(lines) == 1 and "TrtRunner needs an NVIDIA GPU" in lines[0]
    assert engine.stat().st_size > 0
    again = run_poly("inspect", "model", engine)
    assert again.returncode == 1 and "no NVIDIA driver or GPU" in error_lines(again)[0]
    mixed = run_poly("run", engine, "--onnxrt")
    assert mixed.returncode == 2 and "only --trt can run it" in error_lines(mixed)[-1]


def test_inspect_tactics_and_diff(tmp_path):
    problem = make_replays(tmp_path)
    if problem:
        pytest.skip(f"Polygraphy could not write replay fixtures here: {problem}")
    shown = run_poly("inspect", "tactics", tmp_path / "bad" / "b1.json")
    assert shown.returncode == 0 and "Layer: conv" in shown.stdout and "Tactic: 11" in shown.stdout
    diff = run_poly("inspect", "diff-tactics", "--dir", tmp_path)
    assert diff.returncode == 0
    assert "potentially bad tactics in 2 layer(s)" in diff.stdout
    assert "Tactic: 11" in diff.stdout and "Tactic: 6" in diff.stdout and "Tactic: 10)" not in diff.stdout
    same = run_poly("inspect", "diff-tactics", "--good", tmp_path / "good", "--bad", tmp_path / "good" / "g1.json")
    assert same.returncode == 0 and "Could not determine potentially bad tactics" in same.stdout
    bad = run_poly("inspect", "tactics", tmp_path / "nothing.json")
    assert bad.returncode == 1 and "does not exist" in error_lines(bad)[0]


@pytest.mark.skipif(cuda.cuda_available(), reason="a GPU is present: the no-GPU path cannot be shown")
def test_validate_trt_reaches_the_runner(models, tmp_path):
    import numpy as np

    data, golden = tmp_path / "data", tmp_path / "golden"
    data.mkdir()
    golden.mkdir()
    x = np.ones((2, 8), np.float32)
    np.savez(data / "s0.npz", x=x)
    np.savez(golden / "s0.npz", probs=np.full((2, 4), 0.25, np.float32))
    proc = run_poly("validate", models["mlp"], "--trt", "--dataset", data, "--golden", golden,
                   "--trt-min-shapes", "x:[1,8]", "--trt-opt-shapes", "x:[2,8]", "--trt-max-shapes", "x:[4,8]")
    assert proc.returncode == 1
    assert "Building engine" in proc.stdout
    assert "TrtRunner needs an NVIDIA GPU" in error_lines(proc)[-1]
