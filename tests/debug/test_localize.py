"""`poly debug localize` from the user's side (the CLI on models with planted faults) and through
its API (segments, memory bound, shadow runs, several samples)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from fixtures.cli_helpers import error_lines, run_poly
from fixtures.localize_models import conv_chain, feeds, save_inputs_json

from poly.compare.dataset import SampleChecker
from poly.debug.localize import GraphPlan, Localizer, ModelSource, OnnxExecutor, SavedSource


def _localize(tmp_path, candidate, reference=None, *flags, samples=2):
    cand = tmp_path / "cand.onnx"
    onnx.save(candidate, cand)
    args = [cand, "--onnxrt"]
    if reference is not None:
        ref = tmp_path / "ref.onnx"
        onnx.save(reference, ref)
        args += ["--reference-model", ref]
    inputs = tmp_path / "inputs.json"
    save_inputs_json(inputs, feeds(samples))
    report = tmp_path / "report.json"
    outcome = run_poly("debug", "localize", *args, "--load-inputs", inputs, "--report-json", report, *flags)
    data = json.loads(report.read_text()) if report.exists() else None
    return outcome, data


def test_a_perturbed_weight_is_found_first_divergent_and_most_to_blame(tmp_path):
    outcome, report = _localize(tmp_path, conv_chain(scale={3: 1.01}), conv_chain(), "--atol", "1e-4",
                                "--rtol", "1e-4")
    assert outcome.returncode == 1, outcome.stderr
    assert report["first_divergent"] == "conv3"
    assert report["ranking"][0] == "conv3"
    assert report["first_nonfinite"] is None
    nodes = {n["name"]: n for n in report["nodes"]}
    # downstream nodes diverge, but only through what they inherit
    assert nodes["conv5"]["passed"] is False
    assert nodes["conv5"]["own"]["worst"]["severity"] < 1 < nodes["conv5"]["inherited"]["worst"]["severity"]
    assert nodes["conv3"]["own"]["worst"]["severity"] > 1
    assert nodes["conv2"]["passed"] is True and nodes["conv2"]["own"] is None
    assert "Most to blame: conv3" in outcome.stdout + outcome.stderr


@pytest.mark.slow
def test_two_faults_first_divergent_and_most_to_blame_differ(tmp_path):
    # a small fault early (just over the tolerance) and a large one later
    outcome, report = _localize(tmp_path, conv_chain(scale={1: 1.0005, 5: 1.5}), conv_chain(), "--atol", "1e-4",
                                "--rtol", "1e-4")
    assert outcome.returncode == 1
    assert report["first_divergent"] == "conv1"
    assert report["ranking"][0] == "conv5"
    assert report["ranking"].index("conv1") < report["ranking"].index("conv2")


def test_the_first_nonfinite_node_is_where_nan_starts_from_finite_inputs(tmp_path):
    outcome, report = _localize(tmp_path, conv_chain(nan_block=2), conv_chain())
    assert outcome.returncode == 1
    assert report["first_nonfinite"] == "sqrt2"
    nodes = {n["name"]: n for n in report["nodes"]}
    assert nodes["sqrt2"]["nonfinite"] == {"candidate": True, "reference": False, "from_finite_inputs": True}
    # the node downstream reads NaN: non-finite, but not from finite inputs
    assert nodes["conv3"]["nonfinite"]["from_finite_inputs"] is False
    # the constant that changed is what the shadow runs blame
    assert report["ranking"][0] == "sub2"
    assert report["first_divergent"] == "sub2"


@pytest.mark.slow
def test_two_backends_on_one_model_agree_and_exit_0(tmp_path):
    model = tmp_path / "m.onnx"
    onnx.save(conv_chain(), model)
    report = tmp_path / "r.json"
    outcome = run_poly("debug", "localize", model, "--onnxrt", "--onnx-ref", "--atol", "1e-4", "--rtol", "1e-4",
                      "--report-json", report)
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    data = json.loads(report.read_text())
    assert data["ranking"] == [] and data["first_divergent"] is None
    assert data["candidate_runner"] == "onnxrt" and data["reference_runner"] == "onnx-ref"
    assert len(data["nodes"]) == 8 * 4 + 1


def test_a_saved_layerwise_golden_is_the_reference(tmp_path):
    good = tmp_path / "good.onnx"
    onnx.save(conv_chain(), good)
    inputs = tmp_path / "inputs.json"
    save_inputs_json(inputs, feeds(2))
    golden = tmp_path / "golden.json"
    saved = run_poly("run", good, "--onnxrt", "--onnx-outputs", "mark", "all", "--load-inputs", inputs,
                    "--save-outputs", golden)
    assert saved.returncode == 0, saved.stderr
    bad = tmp_path / "bad.onnx"
    onnx.save(conv_chain(scale={6: 1.2}), bad)
    report = tmp_path / "r.json"
    outcome = run_poly("debug", "localize", bad, "--onnxrt", "--load-outputs", golden, "--load-inputs", inputs,
                      "--report-json", report)
    assert outcome.returncode == 1
    data = json.loads(report.read_text())
    assert data["ranking"][0] == "conv6" and data["first_divergent"] == "conv6"
    assert data["samples"] == 2


@pytest.mark.slow
def test_html_report_is_written(tmp_path):
    html = tmp_path / "r.html"
    outcome, _ = _localize(tmp_path, conv_chain(scale={3: 1.1}), conv_chain(), "--report", html)
    assert outcome.returncode == 1
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>") or page.lstrip().lower().startswith("<!doctype html")
    assert "conv3" in page and "<svg" in page


@pytest.mark.slow
def test_external_data_models_run_without_loading_their_weights_into_the_plan(tmp_path):
    cand = conv_chain(scale={4: 1.1})
    onnx.save(cand, tmp_path / "cand.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
              location="cand.data", size_threshold=0)
    onnx.save(conv_chain(), tmp_path / "ref.onnx", save_as_external_data=True, location="ref.data",
              size_threshold=0)
    inputs = tmp_path / "inputs.json"
    save_inputs_json(inputs, feeds(1))
    report = tmp_path / "r.json"
    outcome = run_poly("debug", "localize", "cand.onnx", "--onnxrt", "--reference-model", "ref.onnx",
                      "--load-inputs", inputs, "--report-json", report, cwd=tmp_path)
    assert outcome.returncode == 1, outcome.stderr
    assert json.loads(report.read_text())["ranking"][0] == "conv4"


@pytest.mark.parametrize("args, needle", [
    ([], "give the candidate's backend"),
    (["--onnxrt"], "give a reference"),
    (["--onnxrt", "--segment-memory", "lots"], "--segment-memory"),
    (["--onnxrt", "--onnx-ref", "--load-outputs", "MODEL"], "--load-outputs is the reference"),
])
def test_usage_errors_are_one_line_and_exit_2(tmp_path, args, needle):
    model = tmp_path / "m.onnx"
    onnx.save(conv_chain(blocks=1), model)
    args = [str(model) if a == "MODEL" else a for a in args]
    outcome = run_poly("debug", "localize", model, *args)
    assert outcome.returncode == 2
    lines = error_lines(outcome)
    assert any(needle in line for line in lines), lines


# -- the API ----------------------------------------------------------------------------------


def _api(candidate, reference, segment_bytes, samples, **checker):
    plan = GraphPlan(candidate, segment_bytes=segment_bytes)
    ref_plan = GraphPlan(reference, segment_bytes=segment_bytes)
    localizer = Localizer(plan, ModelSource(plan, OnnxExecutor("onnxrt")),
                          ModelSource(ref_plan, OnnxExecutor("onnxrt"), keep=plan.producer),
                          SampleChecker(**checker), shadow_executor=OnnxExecutor("onnxrt"))
    return plan, localizer, localizer.run(samples)


def test_segments_bound_the_tensors_held():
    one_tensor = 8 * 16 * 16 * 4
    plan, localizer, report = _api(conv_chain(blocks=12, scale={9: 1.1}), conv_chain(blocks=12), 6 * one_tensor,
                                   feeds(1), atol=1e-4, rtol=1e-4)
    assert len(plan.segments) >= 8
    # every tensor produced: 12 blocks x 4 + the final Add; at most a segment's worth and the frontier held
    assert localizer.peak_held <= 2 * (6 + 2)
    assert report.ranking[0] == "conv9"
    assert all(s.produces for s in plan.segments)
    assert [i for s in plan.segments for i in s.indices] == list(range(len(plan.nodes)))


@pytest.mark.slow
def test_the_segmentation_does_not_change_the_figures():
    kwargs = dict(atol=1e-4, rtol=1e-4)
    _, _, small = _api(conv_chain(scale={2: 1.05}), conv_chain(), 8 * 16 * 16 * 4, feeds(2), **kwargs)
    _, _, whole = _api(conv_chain(scale={2: 1.05}), conv_chain(), 1 << 30, feeds(2), **kwargs)
    assert small.to_dict()["nodes"] == whole.to_dict()["nodes"]


def test_several_samples_give_worst_and_median():
    samples = feeds(3)
    samples[1] = {"x": samples[1]["x"] * 10}  # one sample far larger: its error dominates the worst
    _, _, report = _api(conv_chain(scale={1: 1.01}), conv_chain(), 1 << 30, samples, atol=1e-4, rtol=1e-4)
    node = report.node("conv1").to_dict()
    assert node["samples_compared"] == 3
    assert node["error"]["worst"]["max_absdiff"] > node["error"]["median"]["max_absdiff"] > 0


def test_saved_source_serves_iteration_i_to_sample_i():
    from poly.compare import RunResults

    results = RunResults()
    results.append(("golden", [{"a": np.zeros(2)}, {"a": np.ones(2)}]))
    source = SavedSource(results)
    source.start({"x": np.zeros(1)})
    assert source.values(["a", "x", "nosuch"])["a"].tolist() == [0, 0]
    source.start({"x": np.zeros(1)})
    assert source.values(["a"])["a"].tolist() == [1, 1]
    with pytest.raises(Exception, match="2 iteration"):
        source.start({"x": np.zeros(1)})


@pytest.mark.slow
def test_a_dataset_directory_gives_the_samples(tmp_path):
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    for i, feed in enumerate(feeds(3)):
        np.savez(dataset / f"{i:03d}.npz", **feed)
    (dataset / "004.npz").write_bytes(b"not a zip")  # unreadable: skipped with a warning
    onnx.save(conv_chain(scale={2: 1.1}), tmp_path / "cand.onnx")
    onnx.save(conv_chain(), tmp_path / "ref.onnx")
    outcome = run_poly("debug", "localize", "cand.onnx", "--reference-model", "ref.onnx", "--onnxrt",
                      "--dataset", dataset, "--report-json", "r.json", cwd=tmp_path)
    assert outcome.returncode == 1, outcome.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["samples"] == 3 and data["ranking"][0] == "conv2"
    assert "004.npz" in outcome.stdout + outcome.stderr
