"""`poly run`'s post-processing, custom comparison, warm-up, subprocess, plot, ONNX loading and
saving flags, comparing saved results without a model, and `poly inspect data`'s display flags,
driven as a user would on small models the tests build."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from fixtures import onnx_models
from fixtures.cli_helpers import POLY, run_poly

from poly.compare import IterationResult, RunResults, save_inputs


def _results(path, runner, **outputs):
    """Saves one iteration of ``outputs`` as RunResults of ``runner``."""
    arrays = {name: np.asarray(value, dtype=np.float32) for name, value in outputs.items()}
    RunResults([(runner, [IterationResult(arrays, runner_name=runner)])]).save(str(path))
    return path


def _error_lines(output):
    return [line for line in output.splitlines() if line.startswith("[!]")]


# -- comparing saved results without a model ---------------------------------------------------

def test_load_outputs_without_model_compares_first_with_others(poly, tmp_path):
    a = _results(tmp_path / "a.json", "runner-a", y=[[1.0, 2.0, 3.0]])
    same = _results(tmp_path / "same.json", "runner-b", y=[[1.0, 2.0, 3.0]])
    other = _results(tmp_path / "other.json", "runner-c", y=[[1.0, 2.0, 4.0]])
    passed = poly("run", "--load-outputs", a, same)
    assert passed.exit_code == 0, passed.output
    assert "runner-a" in passed.output and "runner-b" in passed.output and "PASSED" in passed.output
    failed = poly("run", "--load-outputs", a, same, other)
    assert failed.exit_code == 1, failed.output
    assert "Accuracy Comparison | runner-a vs. runner-c" in failed.output
    assert "runner-b vs. runner-c" not in failed.output  # the first against each other, not all pairs


# -- --postprocess ------------------------------------------------------------------------------

def test_postprocess_top_k_compares_indices(poly, tmp_path):
    a = _results(tmp_path / "a.json", "a", y=[[0.1, 0.9, 0.5, 0.3]], z=[[1.0, 2.0]])
    scaled = _results(tmp_path / "b.json", "b", y=[[0.2, 1.8, 1.0, 0.6]], z=[[1.0, 2.0]])
    swapped = _results(tmp_path / "c.json", "c", y=[[0.1, 0.5, 0.9, 0.3]], z=[[1.0, 2.0]])
    assert poly("run", "--load-outputs", a, scaled).exit_code == 1  # the values differ
    result = poly("run", "--load-outputs", a, scaled, "--postprocess", "top-2")
    assert result.exit_code == 0, result.output  # the indices of the 2 largest do not
    assert "Applying post-processing" in result.output
    # per output, with an axis: the two largest of y are at different places in c
    assert poly("run", "--load-outputs", a, swapped, "--postprocess", "y:top-2,axis=1").exit_code == 1
    assert poly("run", "--load-outputs", a, swapped, "--postprocess", "y:top-1,axis=-1").exit_code == 1
    # top-4 of 4 values: both orders are a permutation, but not the same one
    assert poly("run", "--load-outputs", a, scaled, "--postprocess", "y:top-4", "z:top-1").exit_code == 0


@pytest.mark.parametrize("value, needle", [("bottom-3", "unknown post-processing function"),
                                           ("top-x", "is not an integer"),
                                           ("top-0", "at least 1"),
                                           ("top-2,ax=1", "axis")])
def test_postprocess_bad_value_is_one_line(poly, tmp_path, value, needle):
    a = _results(tmp_path / "a.json", "a", y=[[1.0, 2.0]])
    result = poly("run", "--load-outputs", a, a, "--postprocess", value)
    assert result.exit_code == 2
    lines = _error_lines(result.output)
    assert len(lines) == 1 and "--postprocess" in lines[0] and needle in lines[0]


# -- --compare-func-script ----------------------------------------------------------------------

def test_compare_func_script_decides(poly, tmp_path):
    a = _results(tmp_path / "a.json", "a", y=[[1.0, 2.0]])
    b = _results(tmp_path / "b.json", "b", y=[[1.0, 5.0]])
    script = tmp_path / "cmp.py"
    script.write_text(
        "def compare_outputs(run0, run1):\n"
        "    return {name: bool(abs(run0[name] - run1[name]).max() < 10) for name in run0}\n"
        "def strict(run0, run1):\n"
        "    return {name: bool((run0[name] == run1[name]).all()) for name in run0}\n")
    assert poly("run", "--load-outputs", a, b).exit_code == 1
    assert poly("run", "--load-outputs", a, b, "--compare-func-script", script).exit_code == 0
    assert poly("run", "--load-outputs", a, b, "--compare-func-script", f"{script}:strict").exit_code == 1
    missing = poly("run", "--load-outputs", a, b, "--compare-func-script", tmp_path / "nope.py")
    assert missing.exit_code == 2
    lines = _error_lines(missing.output)
    assert len(lines) == 1 and "--compare-func-script" in lines[0] and "nope.py" in lines[0]


# -- --warm-up, --use-subprocess ------------------------------------------------------------------

def test_warm_up_runs_before_inference(poly, models):
    result = poly("run", models["identity"], "--onnxrt", "--warm-up", "3")
    assert result.exit_code == 0, result.output
    assert "Running 3 warm-up run(s)" in result.output and "Finished 3 warm-up run(s)" in result.output
    bad = poly("run", models["identity"], "--onnxrt", "--warm-up", "-1")
    assert bad.exit_code == 2 and "--warm-up" in _error_lines(bad.output)[0]


def test_warm_up_and_subprocess_reach_comparator_run(poly, models, monkeypatch):
    from poly.compare import Comparator

    calls = []
    original = Comparator.run

    def recording(runners, **kwargs):
        calls.append(kwargs)
        return original(runners, **kwargs)

    monkeypatch.setattr(Comparator, "run", staticmethod(recording))
    assert poly("run", models["identity"], "--onnxrt", "--warm-up", "2", "--use-subprocess").exit_code == 0
    assert calls[-1]["warm_up"] == 2 and calls[-1]["use_subprocess"] is True


def test_use_subprocess_gives_the_same_results(models, tmp_path):
    inline, child = tmp_path / "inline.json", tmp_path / "child.json"
    assert run_poly("run", models["mlp"], "--onnxrt", "--save-outputs", inline).returncode == 0
    proc = run_poly("run", models["mlp"], "--onnxrt", "--use-subprocess", "--save-outputs", child)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ours, theirs = RunResults.load(str(inline)), RunResults.load(str(child))
    np.testing.assert_array_equal(list(ours.values())[0][0]["probs"], list(theirs.values())[0][0]["probs"])


# -- --show-heatmaps / --show-error-metrics-plot without a display --------------------------------

@pytest.mark.slow
def test_show_plots_without_display_writes_files(tmp_path):
    pytest.importorskip("matplotlib", reason="the plots need matplotlib, which is not installed")
    a = _results(tmp_path / "a.json", "a", y=[[[1.0, 2.0], [3.0, 4.0]]])
    b = _results(tmp_path / "b.json", "b", y=[[[1.0, 2.5], [3.0, 4.0]]])
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "MPLBACKEND")}
    proc = subprocess.run([POLY, "run", "--load-outputs", a, b, "--show-heatmaps", "--show-error-metrics-plot"],
                          capture_output=True, text=True, env=env, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    for flag in ("--show-heatmaps", "--show-error-metrics-plot"):
        line = next(line for line in out.splitlines() if f"{flag}: there is no display" in line)
        directory = line.rsplit("saving them to: ", 1)[1].strip()
        files = os.listdir(directory)
        assert files, f"{flag} wrote nothing to {directory}"
        if flag == "--show-heatmaps":
            assert all(f.endswith(".svg") for f in files) and len(files) == 2  # absolute and relative
        else:
            assert files == ["error_metrics_y.png"]


# -- ONNX loading and saving ------------------------------------------------------------------------

@pytest.mark.slow
def test_fp_to_fp16_and_save_onnx(models, tmp_path):
    saved = tmp_path / "run_fp16.onnx"
    proc = run_poly("run", models["mlp"], "--onnxrt", "--fp-to-fp16", "--save-onnx", saved,
                   "--atol", "1e-2", "--rtol", "1e-2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    model = onnx.load(str(saved))
    assert any(t.data_type == onnx.TensorProto.FLOAT16 for t in model.graph.initializer)
    assert proc.stdout.count(f"Saving ONNX model to: {saved}") == 1
    # The fp16 model's outputs differ from the fp32 one's, at fp16 precision.
    fp32 = tmp_path / "fp32.json"
    assert run_poly("run", models["mlp"], "--onnxrt", "--save-outputs", fp32).returncode == 0
    strict = run_poly("run", models["mlp"], "--onnxrt", "--fp-to-fp16", "--load-outputs", fp32,
                     "--atol", "0", "--rtol", "0")
    assert strict.returncode == 1


def test_save_onnx_with_external_data(models, tmp_path):
    saved = tmp_path / "saved.onnx"
    proc = run_poly("run", models["mlp"], "--onnxrt", "--save-onnx", saved, "--save-external-data",
                   "weights.bin", "--external-data-size-threshold", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "weights.bin").stat().st_size > 0
    model = onnx.load(str(saved), load_external_data=False)
    assert all(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer)


@pytest.mark.slow
def test_external_data_dir_and_ignore_external_data(tmp_path):
    model_dir, data_dir = tmp_path / "model", tmp_path / "data"
    model_dir.mkdir()
    data_dir.mkdir()
    path = model_dir / "mlp.onnx"
    onnx.save(onnx_models.mlp(), str(path), save_as_external_data=True, location="mlp.bin", size_threshold=0)
    (model_dir / "mlp.bin").rename(data_dir / "mlp.bin")

    without = run_poly("run", path, "--onnxrt")
    assert without.returncode != 0
    proc = run_poly("run", path, "--onnxrt", "--onnx-ref", "--external-data-dir", data_dir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    alias = run_poly("run", path, "--onnxrt", "--load-external-data", data_dir)
    assert alias.returncode == 0, alias.stdout + alias.stderr

    structure = tmp_path / "structure.onnx"
    proc = run_poly("run", path, "--ignore-external-data", "--save-onnx", structure)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    saved = onnx.load(str(structure), load_external_data=False)
    assert [n.op_type for n in saved.graph.node] == [n.op_type for n in onnx_models.mlp().graph.node]

    missing = run_poly("run", path, "--onnxrt", "--external-data-dir", tmp_path / "none")
    assert missing.returncode == 2 and "--external-data-dir" in missing.stderr


@pytest.mark.slow
def test_external_data_dir_and_fp16_reach_the_tensorrt_parser(tmp_path):
    model_dir, data_dir = tmp_path / "model", tmp_path / "data"
    model_dir.mkdir()
    data_dir.mkdir()
    path = model_dir / "mlp.onnx"
    onnx.save(onnx_models.mlp(), str(path), save_as_external_data=True, location="mlp.bin", size_threshold=0)
    (model_dir / "mlp.bin").rename(data_dir / "mlp.bin")
    lost, found, fp16 = tmp_path / "lost.engine", tmp_path / "found.engine", tmp_path / "fp16.engine"
    # Without the directory the parser finds no weights and no engine is built.
    run_poly("run", path, "--trt", "--save-engine", lost)
    assert not lost.exists()
    # With it the engine is built and saved (running it needs a GPU: that may end the command).
    run_poly("run", path, "--trt", "--external-data-dir", data_dir, "--save-engine", found)
    assert found.stat().st_size > 0
    run_poly("run", path, "--trt", "--external-data-dir", data_dir, "--fp-to-fp16", "--save-engine", fp16)
    # Builds are deterministic here; the fp16 model's weights take half the space in the engine.
    assert 0 < fp16.stat().st_size < found.stat().st_size


def test_no_onnxruntime_shape_inference_reaches_the_loader(poly, models, monkeypatch):
    import poly.onnx as onnx_api

    seen = []
    original = onnx_api.InferShapes

    class Recording(original):
        def __init__(self, *args, **kwargs):
            seen.append(kwargs.get("allow_onnxruntime"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(onnx_api, "InferShapes", Recording)
    assert poly("run", models["mlp"], "--onnxrt", "--shape-inference").exit_code == 0
    assert poly("run", models["mlp"], "--onnxrt", "--shape-inference", "--no-onnxruntime-shape-inference").exit_code == 0
    assert seen == [True, False]


# -- inspect data ---------------------------------------------------------------------------------

def test_inspect_data_histogram_num_items_line_width(poly, tmp_path):
    values = np.arange(1600, dtype=np.int32).reshape(40, 40)  # more than numpy's summary threshold
    path = tmp_path / "r.json"
    RunResults([("a", [IterationResult({"y": values}, runner_name="a")]),
                ("b", [IterationResult({"y": values}, runner_name="b")])]).save(str(path))
    plain = poly("inspect", "data", path)
    assert plain.exit_code == 0, plain.output
    assert plain.output.count("==== Run Results (2 runners) ====") == 1
    assert "---- a (1 iterations) ----" in plain.output and "---- b (1 iterations) ----" in plain.output
    assert "Histogram" not in plain.output

    hist = poly("inspect", "data", path, "--histogram")
    assert hist.output.count("---- Histogram ----") == 2
    assert "Num Elems" in hist.output

    few = poly("inspect", "data", path, "-s", "-n", "1")
    assert "..." in few.output and " 1599]" in few.output and " 1598" not in few.output
    three = poly("inspect", "data", path, "-s")  # Polygraphy's default: 3
    assert " 1597" in three.output and " 1596" not in three.output
    every = poly("inspect", "data", path, "-s", "--num-items", "-1")
    assert "..." not in every.output and " 850 " in every.output
    rows = [line for line in every.output.splitlines() if line.startswith(" ") and line.lstrip().startswith("[")]
    assert len(rows) >= 80 and len({re.match(r"[ \[]*\[", row).end() for row in rows}) == 1  # aligned
    narrow = poly("inspect", "data", path, "-s", "-n", "-1", "--line-width", "20")
    wide = poly("inspect", "data", path, "-s", "-n", "-1", "--line-width", "-1")
    assert max(map(len, narrow.output.splitlines()[2:])) < max(map(len, wide.output.splitlines()[2:]))
    bad = poly("inspect", "data", path, "-n", "-2")
    assert bad.exit_code == 2 and "--num-items" in _error_lines(bad.output)[0]


def test_inspect_data_stats_lines_are_polygraphy_s(poly, tmp_path):
    path = tmp_path / "r.json"
    y = np.array([[-3.0, 1.0], [2.0, 4.0]], np.float32)
    mask = np.array([True, False, False, False])
    RunResults([("a", [IterationResult({"y": y, "mask": mask}, runner_name="a"),
                       IterationResult({"y": -y, "mask": mask}, runner_name="a")])]).save(str(path))
    plain = poly("inspect", "data", path)
    assert plain.exit_code == 0, plain.output
    lines = plain.output.splitlines()
    # the average magnitude and (for all but bool data) p90/p95/p99 end every statistics line
    assert ("    y [dtype=float32, shape=(2, 2)] | Stats: mean=1, std-dev=2.5495, var=6.5, median=1.5, "
            "min=-3 at (0, 0), max=4 at (1, 1), avg-magnitude=2.5, p90=3.4, p95=3.7, p99=3.94") in lines
    assert ("    mask [dtype=bool, shape=(4,)] | Stats: mean=0.25, std-dev=0.43301, var=0.1875, median=0, "
            "min=0 at (1,), max=1 at (0,), avg-magnitude=0.25") in lines
    # no iteration header for the first iteration alone; with --all one per iteration, tensors below
    assert "Iteration" not in plain.output
    every = poly("inspect", "data", path, "--all")
    lines = [line.rstrip() for line in every.output.splitlines()]
    assert lines[lines.index("    -- Iteration: 0") + 1].startswith("        y [dtype=float32")
    assert lines[lines.index("    -- Iteration: 1") + 1].startswith("        y [dtype=float32, shape=(2, 2)] | Stats: mean=-1,")
    assert "Iteration 0:" not in every.output

    # saved inputs: no "Loading" line for a single file, the same layout
    inputs = tmp_path / "inputs.json"
    save_inputs([{"x": y}], str(inputs))
    data = poly("inspect", "data", inputs)
    assert data.output.splitlines()[:3] == [
        "[I] ==== Data (1 iterations) ====", "    ",
        "    x [dtype=float32, shape=(2, 2)] | Stats: mean=1, std-dev=2.5495, var=6.5, median=1.5, "
        "min=-3 at (0, 0), max=4 at (1, 1), avg-magnitude=2.5, p90=3.4, p95=3.7, p99=3.94"]


def test_inspect_data_empty_tensor_is_nan_not_zero(poly, tmp_path):
    # deliberate difference: Polygraphy shows an empty tensor as "min=0 at 0 ... p90=inf" and its
    # histogram as "None"; poly shows nan and no histogram
    path = tmp_path / "r.json"
    RunResults([("a", [IterationResult({"e": np.zeros((0, 3), np.float32)}, runner_name="a")])]).save(str(path))
    result = poly("inspect", "data", path, "--histogram", "--show-values")
    assert result.exit_code == 0, result.output
    assert ("e [dtype=float32, shape=(0, 3)] | Stats: mean=nan, std-dev=nan, var=nan, median=nan, min=nan at (), "
            "max=nan at (), avg-magnitude=nan, p90=nan, p95=nan, p99=nan") in result.output
    assert "None" not in result.output
