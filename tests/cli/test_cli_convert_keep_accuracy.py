"""`poly convert --fp-to-fp16 --keep-accuracy` / `--fp32-nodes`, and `poly debug precision --onnxrt`."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from fixtures import fp16_models
from fixtures.cli_helpers import error_lines
from fixtures.fp16_models import SENSITIVE_NODES, TOLERANCE

from poly.compare.dataset import SampleChecker

TOL = ["--atol", str(TOLERANCE), "--rtol", str(TOLERANCE)]
DATA = ["--val-range", "[-1,1]", "--seed", "3", "--iterations", "6"]


@pytest.fixture(scope="module")
def sensitive(tmp_path_factory):
    path = tmp_path_factory.mktemp("fp16") / "sensitive.onnx"
    onnx.save(fp16_models.sensitive_model(), str(path))
    return str(path)


def _save(model, path):
    onnx.save(model, str(path))
    return str(path)


def _passes(path, reference_path, feeds):
    checker = SampleChecker(atol=TOLERANCE, rtol=TOLERANCE)
    sessions = [ort.InferenceSession(p, providers=["CPUExecutionProvider"]) for p in (path, reference_path)]
    for feed in feeds:
        (outputs, names), (reference, _) = [
            (s.run(None, feed), [o.name for o in s.get_outputs()]) for s in sessions]
        for name, value, ref in zip(names, outputs, reference, strict=True):
            if not checker.check_output(name, value, ref).passed:
                return False
    return True


def test_keep_accuracy_writes_a_model_that_passes_on_held_out_inputs(poly, sensitive, tmp_path):
    out, report = tmp_path / "mixed.onnx", tmp_path / "report.json"
    result = poly("convert", sensitive, "--fp-to-fp16", "--keep-accuracy", *DATA, *TOL, "-o", out,
                  "--report-json", report)
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    assert set(data["fp32_nodes"]) >= SENSITIVE_NODES
    assert data["evaluations"] >= 3 and data["time_s"] > 0 and data["one_minimal"] is True
    assert data["passed_before"] is False and data["passed_after"] is True
    assert data["error_before"]["y1"]["max_absdiff"] > data["error_after"]["y1"]["max_absdiff"]
    # the 6 synthetic inputs of --iterations 6, then a validation batch of the next 6, which passes
    assert data["options"]["atol"] == TOLERANCE and data["samples"] == 12
    assert data["validation"] == [{"samples": 6, "failed": 0}]
    assert "Validation on new inputs (round by round): 6 passed; the set is 1-minimal on all 12 sample(s)" \
        in result.output
    assert set(data["ranking"]) >= SENSITIVE_NODES
    assert f"Kept {len(data['fp32_nodes'])} of 7 float16 node(s) in float32" in result.output
    # held-out inputs from the same distribution
    assert _passes(str(out), sensitive, fp16_models.inputs(12, seed=123))
    # 1-minimal, checked by hand: each kept node back in float16 fails the training inputs
    from poly.onnx import ConvertToFp16

    model = onnx.load(sensitive)
    train = fp16_models.inputs(6, seed=3)
    for name in data["fp32_nodes"]:
        fewer = _save(ConvertToFp16(model, node_block_list=[n for n in data["fp32_nodes"] if n != name])(),
                      tmp_path / f"without_{name}.onnx")
        assert not _passes(fewer, sensitive, fp16_models.inputs(12, seed=123) + train), name


def test_fp32_nodes_keeps_the_named_nodes(poly, sensitive, tmp_path):
    out = tmp_path / "named.onnx"
    result = poly("convert", sensitive, "--fp-to-fp16", "--fp32-nodes", *sorted(SENSITIVE_NODES), "-o", out)
    assert result.exit_code == 0, result.output
    assert _passes(str(out), sensitive, fp16_models.inputs(8, seed=5))
    plain = tmp_path / "plain.onnx"
    assert poly("convert", sensitive, "--fp-to-fp16", "-o", plain).exit_code == 0
    assert not _passes(str(plain), sensitive, fp16_models.inputs(8, seed=5))


def test_an_unknown_fp32_node_is_one_line_and_exit_2(poly, sensitive, tmp_path):
    result = poly("convert", sensitive, "--fp-to-fp16", "--fp32-nodes", "exp", "no_such_node", "-o",
                  tmp_path / "x.onnx")
    assert result.exit_code == 2
    lines = error_lines(result)
    assert len(lines) == 1 and "no_such_node" in lines[0] and "'exp'" not in lines[0]
    assert not (tmp_path / "x.onnx").exists()


def test_an_unreachable_tolerance_is_one_line_and_exit_1(poly, tmp_path):
    model = _save(fp16_models.nan_model(), tmp_path / "nan.onnx")
    result = poly("convert", model, "--fp-to-fp16", "--keep-accuracy", *TOL, "-o", tmp_path / "x.onnx")
    assert result.exit_code == 1
    lines = error_lines(result)
    assert len(lines) == 1 and "even with every node in float32" in lines[0]
    assert not (tmp_path / "x.onnx").exists()


@pytest.mark.parametrize(("builder", "words"), [(fp16_models.half_model, "already float16"),
                                               (fp16_models.int_model, "no float32 tensor")])
def test_a_model_with_nothing_to_convert_is_refused(poly, tmp_path, builder, words):
    model = _save(builder(), tmp_path / "m.onnx")
    result = poly("convert", model, "--fp-to-fp16", "--keep-accuracy", *TOL, "-o", tmp_path / "x.onnx")
    assert result.exit_code == 1
    lines = error_lines(result)
    assert len(lines) == 1 and words in lines[0]


@pytest.mark.parametrize("args", [
    ["--keep-accuracy"],                                   # without --fp-to-fp16
    ["--fp-to-fp16", "--report-json", "r.json"],           # a search flag without --keep-accuracy
    ["--fp-to-fp16", "--atol", "0.1"],
])
def test_search_flags_without_the_search_are_usage_errors(poly, sensitive, tmp_path, args):
    result = poly("convert", sensitive, *args, "-o", tmp_path / "x.onnx")
    assert result.exit_code == 2
    assert len(error_lines(result)) == 1


def test_debug_precision_onnxrt_runs_the_same_search(poly, sensitive, tmp_path):
    out, report = tmp_path / "mixed.onnx", tmp_path / "report.json"
    result = poly("debug", "precision", sensitive, "--onnxrt", *DATA, *TOL, "-o", out, "--report-json", report)
    assert result.exit_code == 0, result.output
    assert set(json.loads(report.read_text())["fp32_nodes"]) >= SENSITIVE_NODES
    assert _passes(str(out), sensitive, fp16_models.inputs(8, seed=7))


def test_keep_accuracy_reads_input_files(poly, sensitive, tmp_path):
    from poly.compare import save_inputs

    inputs = tmp_path / "inputs.json"
    save_inputs(fp16_models.inputs(4, seed=11), str(inputs))
    out = tmp_path / "mixed.onnx"
    result = poly("convert", sensitive, "--fp-to-fp16", "--keep-accuracy", "--load-inputs", inputs, *TOL, "-o", out)
    assert result.exit_code == 0, result.output
    mixed = onnx.load(str(out))
    kinds = {n.name: n for n in mixed.graph.node}
    assert SENSITIVE_NODES <= set(kinds)
    assert np.isfinite(ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(
        None, fp16_models.inputs(1, seed=2)[0])[1]).all()


@pytest.mark.parametrize("args", [
    ["--onnxrt", *TOL, "--check", "true"],   # the comparison is the check
    ["-o", "x.onnx"],                       # -o is the ONNX search's
])
def test_debug_precision_onnxrt_usage_errors(poly, sensitive, args):
    result = poly("debug", "precision", sensitive, *args)
    assert result.exit_code == 2
    assert len(error_lines(result)) == 1
