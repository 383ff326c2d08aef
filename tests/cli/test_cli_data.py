"""`poly data to-input` / `merge` and `poly data concat`: saved inputs and layer-wise outputs
merged into feed dicts that `--load-inputs` and Polygraphy read, iterations concatenated, and
one-line errors for missing files, wrong data and mixed kinds."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from fixtures.cli_helpers import POLYGRAPHY, run_cli, run_poly

from poly.compare import IterationResult, RunResults, load_inputs, save_inputs


def _results(*iterations, runner="onnxrt-runner"):
    return RunResults([(runner, [IterationResult(outputs=dict(it), runner_name=runner) for it in iterations])])


def _one_error_line(proc):
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.fixture
def saved(tmp_path):
    """Two iterations of inputs (x) and of layer-wise outputs (h, y)."""
    rng = np.random.default_rng(0)
    inputs = [{"x": rng.random((1, 4), dtype=np.float32)} for _ in range(2)]
    outputs = [{"h": rng.random((1, 4), dtype=np.float32), "y": rng.random((2,), dtype=np.float32)} for _ in range(2)]
    save_inputs(inputs, str(tmp_path / "inputs.json"))
    _results(*outputs).save(str(tmp_path / "golden.json"))
    return inputs, outputs


@pytest.mark.parametrize("command", ["to-input", "merge"])
@pytest.mark.parametrize("out_name", ["merged.json", "merged.npz"])
def test_inputs_and_outputs_become_one_feed_dict_per_iteration(tmp_path, saved, command, out_name):
    inputs, outputs = saved
    proc = run_poly("data", command, "inputs.json", "golden.json", "-o", out_name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    merged = load_inputs([str(tmp_path / out_name)])
    assert len(merged) == 2
    for feed_dict, inp, out in zip(merged, inputs, outputs, strict=True):
        assert list(feed_dict) == ["x", "h", "y"]
        for name, value in {**inp, **out}.items():
            np.testing.assert_array_equal(feed_dict[name], value)
            assert feed_dict[name].dtype == value.dtype


def test_polygraphy_reads_the_merged_file(tmp_path, saved):
    _, outputs = saved
    assert run_poly("data", "to-input", "inputs.json", "golden.json", "-o", "merged.json", cwd=tmp_path).returncode == 0
    (tmp_path / "read.py").write_text(
        "import json, sys\n"
        "from polygraphy.json import load_json\n"
        "data = load_json(sys.argv[1])\n"
        "print(json.dumps([{name: arr.tolist() for name, arr in d.items()} for d in data]))\n"
    )
    proc = run_cli(sys.executable, "read.py", "merged.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    read = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [sorted(d) for d in read] == [["h", "x", "y"], ["h", "x", "y"]]
    np.testing.assert_array_equal(np.array(read[1]["h"], np.float32), outputs[1]["h"])


def test_same_file_as_polygraphy_data_merge(tmp_path, saved):
    # One iteration: Polygraphy 0.53's merge pads its list with one dict repeated, so with
    # several iterations every iteration of its file ends up holding the last one's values.
    inputs, outputs = saved
    save_inputs(inputs[:1], str(tmp_path / "in1.json"))
    _results(*outputs[:1]).save(str(tmp_path / "out1.json"))
    assert run_poly("data", "to-input", "in1.json", "out1.json", "-o", "ours.json", cwd=tmp_path).returncode == 0
    proc = run_cli(POLYGRAPHY, "data", "merge", "in1.json", "out1.json", "-o", "theirs.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    ours, theirs = load_inputs([str(tmp_path / "ours.json")]), load_inputs([str(tmp_path / "theirs.json")])
    assert [list(d) for d in ours] == [list(d) for d in theirs]
    for a, b in zip(ours, theirs, strict=True):
        for name in a:
            np.testing.assert_array_equal(a[name], b[name])


def test_conflicting_values_keep_the_last_file_and_warn(tmp_path):
    save_inputs([{"x": np.zeros(3, np.float32)}], str(tmp_path / "a.json"))
    save_inputs([{"x": np.ones(3, np.float32)}], str(tmp_path / "b.npz"))
    save_inputs([{"x": np.ones(3, np.float32)}], str(tmp_path / "c.json"))
    proc = run_poly("data", "to-input", "a.json", "b.npz", "c.json", "-o", "m.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    [feed_dict] = load_inputs([str(tmp_path / "m.json")])
    np.testing.assert_array_equal(feed_dict["x"], np.ones(3, np.float32))
    warnings = [line for line in proc.stdout.splitlines() + proc.stderr.splitlines() if "different values" in line]
    # one warning, naming the tensor and the file whose value is kept (b.npz: c.json agrees with it)
    assert len(warnings) == 1 and "'x'" in warnings[0] and "b.npz" in warnings[0]


def test_outputs_of_several_runners_warn(tmp_path):
    results = _results({"y": np.zeros(2, np.float32)}, runner="a")
    results.append(("b", [IterationResult(outputs={"y": np.ones(2, np.float32)}, runner_name="b")]))
    results.save(str(tmp_path / "two.json"))
    proc = run_poly("data", "to-input", "two.json", "-o", "m.json", cwd=tmp_path)
    assert proc.returncode == 0
    assert "2 runners" in proc.stdout + proc.stderr
    np.testing.assert_array_equal(load_inputs([str(tmp_path / "m.json")])[0]["y"], np.ones(2, np.float32))


def test_different_iteration_counts_pad_with_separate_dicts(tmp_path):
    save_inputs([{"x": np.zeros(1)}, {"x": np.ones(1)}], str(tmp_path / "two.json"))
    save_inputs([{"a": np.zeros(1)}, {"a": np.ones(1)}, {"a": np.full(1, 2.0)}], str(tmp_path / "three.json"))
    proc = run_poly("data", "to-input", "two.json", "three.json", "-o", "m.json", cwd=tmp_path)
    assert proc.returncode == 0
    assert "different numbers of iterations" in proc.stdout + proc.stderr
    merged = load_inputs([str(tmp_path / "m.json")])
    assert [sorted(d) for d in merged] == [["a", "x"], ["a", "x"], ["a"]]


def test_concat_inputs_and_outputs(tmp_path, saved):
    inputs, outputs = saved
    proc = run_poly("data", "concat", "inputs.json", "inputs.json", "-o", "in4.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    concatenated = load_inputs([str(tmp_path / "in4.json")])
    assert len(concatenated) == 4
    np.testing.assert_array_equal(concatenated[3]["x"], inputs[1]["x"])

    proc = run_poly("data", "concat", "golden.json", "golden.json", "-o", "out4.npz", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = RunResults.load(str(tmp_path / "out4.npz"))
    [(runner, iterations)] = list(results.items())
    assert runner == "onnxrt-runner" and len(iterations) == 4
    np.testing.assert_array_equal(iterations[2]["h"], outputs[0]["h"])


def test_errors_are_one_line(tmp_path, saved):
    proc = run_poly("data", "concat", "inputs.json", "golden.json", "-o", "x.json", cwd=tmp_path)
    assert proc.returncode == 1 and "Cannot concatenate inputs" in _one_error_line(proc)

    proc = run_poly("data", "to-input", "inputs.json", "missing.json", "-o", "x.json", cwd=tmp_path)
    assert proc.returncode == 2 and "missing.json" in _one_error_line(proc)

    proc = run_poly("data", "to-input", "inputs.json", cwd=tmp_path)
    assert proc.returncode == 2 and "-o" in _one_error_line(proc)

    (tmp_path / "list.json").write_text(json.dumps([1, 2]))
    proc = run_poly("data", "to-input", "list.json", "-o", "x.json", cwd=tmp_path)
    assert proc.returncode == 1 and "list.json" in _one_error_line(proc)

    (tmp_path / "broken.json").write_text("{not json")
    proc = run_poly("data", "to-input", "broken.json", "-o", "x.json", cwd=tmp_path)
    assert proc.returncode == 1 and "broken.json" in _one_error_line(proc)
    assert not (tmp_path / "x.json").exists()
