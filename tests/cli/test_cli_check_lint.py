"""`poly check lint`: the JSON report's entries and summary on models with planted defects,
its log lines and exit status, the same report as Polygraphy's `check lint` on the same models,
and one-line errors for a missing file, a bad flag value or input data that does not fit."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from fixtures import lint_models
from fixtures.cli_helpers import POLYGRAPHY, run_cli, run_poly


def _save(model, path):
    onnx.save(model, str(path))
    return str(path)


def _lint(tmp_path, model, *extra):
    path = _save(model, tmp_path / "model.onnx")
    proc = run_poly("check", "lint", path, "-o", tmp_path / "report.json", *extra, cwd=tmp_path)
    assert "Traceback" not in proc.stdout + proc.stderr
    return proc, json.loads((tmp_path / "report.json").read_text())


def _entries(report):
    return [(e["level"], e["source"], e["message"], e.get("nodes")) for e in report["lint_entries"]]


def test_wrong_attribute_fails_its_node_and_skips_its_dependents(tmp_path):
    proc, report = _lint(tmp_path, lint_models.wrong_attribute())
    assert proc.returncode == 1
    assert _entries(report) == [
        ("exception", "onnxruntime", "Unrecognized attribute: foo for operator Relu", ["relu"]),
    ]
    # neg depends on the faulty relu: it is not checked, so neither passing nor failing.
    assert report["summary"] == {"passing": [], "failing": ["relu"]}
    assert "[E] LINT | Name: relu, Op: Relu | Unrecognized attribute: foo for operator Relu" in proc.stdout
    assert "FAILED | Runtime:" in proc.stdout + proc.stderr


def test_unused_input_initializer_and_node_are_warnings_of_a_valid_model(tmp_path):
    proc, report = _lint(tmp_path, lint_models.unused_parts())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _entries(report) == [
        ("warning", "onnxruntime",
         "Removing initializer 'unused_w'. It is not used by any node and should be removed from the model.", None),
        ("warning", "onnx_graphsurgeon", "Input: 'extra' does not affect outputs, can be removed.", None),
        ("warning", "onnx_graphsurgeon", "Does not affect outputs, can be removed.", ["dead_relu"]),
    ]
    # The model runs as a whole: the nodes the outputs need pass; the dead node is only warned about.
    assert report["summary"] == {"passing": ["add"], "failing": []}
    assert "[W] LINT | Name: dead_relu, Op: Relu | Does not affect outputs, can be removed." in proc.stdout
    assert "PASSED | Runtime:" in proc.stdout


def test_duplicate_and_empty_node_names(tmp_path):
    proc, report = _lint(tmp_path, lint_models.bad_names())
    assert proc.returncode == 1
    assert _entries(report) == [
        ("exception", "onnx_graphsurgeon", "Duplicate node name: 'dup' for nodes with topological IDs: [0, 1] found.",
         ["dup"]),
    ]
    # The unnamed node is named after its index, as Polygraphy names it.
    assert report["summary"] == {"passing": ["polygraphy_unnamed_node_2"], "failing": ["dup"]}


def test_node_onnxruntime_rejects_and_independent_nodes_still_checked(tmp_path):
    proc, report = _lint(tmp_path, lint_models.ort_rejected())
    assert proc.returncode == 1
    assert _entries(report) == [
        ("exception", "onnxruntime", " Incompatible dimensions for matrix multiplication", ["mm"]),
    ]
    assert report["summary"] == {"passing": ["relu", "side"], "failing": ["mm"]}


def test_custom_op_is_a_warning_and_the_model_is_valid(tmp_path):
    proc, report = _lint(tmp_path, lint_models.custom_op())
    assert proc.returncode == 0
    assert _entries(report) == [
        ("warning", "onnxruntime", "Fatal error: my.domain:MyOp(-1) is not a registered function/op", ["custom"]),
    ]
    assert report["summary"] == {"passing": ["relu", "custom"], "failing": []}


def test_graph_level_checker_error_then_nodes_linted(tmp_path):
    proc, report = _lint(tmp_path, lint_models.unnamed_graph())
    assert proc.returncode == 1
    assert _entries(report) == [
        ("exception", "onnx_checker", "Field 'name' of 'graph' is required to be non-empty.", None),
    ]
    assert report["summary"] == {"passing": ["relu", "neg"], "failing": []}


def test_node_whose_subgraphs_read_outer_tensors_is_fed_them(tmp_path):
    # Run alone, the If gets r (read by its branches, not listed among its inputs) as an input.
    proc, report = _lint(tmp_path, lint_models.if_reading_outer_tensor())
    assert proc.returncode == 1  # the unnamed graph
    assert [e["source"] for e in report["lint_entries"]] == ["onnx_checker"]
    assert report["summary"] == {"passing": ["relu", "if"], "failing": []}


def test_valid_model_passes_without_entries(tmp_path):
    proc, report = _lint(tmp_path, lint_models.valid_chain())
    assert proc.returncode == 0
    assert report == {"summary": {"passing": ["relu", "neg"], "failing": []}, "lint_entries": []}


def test_not_an_onnx_file_and_empty_file_are_loader_exceptions(tmp_path):
    (tmp_path / "garbage.onnx").write_bytes(b"definitely not protobuf")
    proc = run_poly("check", "lint", "garbage.onnx", "-o", "report.json", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    [entry] = json.loads((tmp_path / "report.json").read_text())["lint_entries"]
    assert (entry["level"], entry["source"]) == ("exception", "onnx_loader")
    assert "garbage.onnx" in entry["message"] and "not an ONNX model" in entry["message"]

    (tmp_path / "empty.onnx").write_bytes(b"")
    proc = run_poly("check", "lint", "empty.onnx", "-o", "report.json", cwd=tmp_path)
    assert proc.returncode == 1
    assert json.loads((tmp_path / "report.json").read_text())["lint_entries"] == [
        {"level": "exception", "source": "onnx_loader", "message": "Empty ONNX model given"}
    ]


def test_loaded_inputs_feed_the_node_by_node_run(tmp_path):
    # The linter runs on the --load-inputs data: a file without the model's input is a one-line
    # error naming it; a fitting one is linted.
    from poly.compare import save_inputs

    save_inputs([{"not_x": np.ones((1, 4), np.float32)}], str(tmp_path / "wrong.json"))
    path = _save(lint_models.wrong_attribute(), tmp_path / "model.onnx")
    proc = run_poly("check", "lint", path, "--load-inputs", "wrong.json", cwd=tmp_path)
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "'x'" in lines[0] and "not_x" in lines[0], proc.stderr

    save_inputs([{"x": np.ones((1, 4), np.float32)}], str(tmp_path / "good.json"))
    proc = run_poly("check", "lint", path, "--load-inputs", "good.json", "-o", "r.json", cwd=tmp_path)
    assert proc.returncode == 1 and json.loads((tmp_path / "r.json").read_text())["summary"]["failing"] == ["relu"]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["check", "lint", "missing.onnx"], "missing.onnx"),
        (["check", "lint", "{model}", "--val-range", "oops"], "--val-range"),
        (["check", "lint", "{model}", "--input-shapes", "nope:[1,4]"], "'nope' is not an input"),
        (["check", "lint", "{model}", "--providers", "no_such_provider"], "no_such_provider"),
    ],
)
def test_usage_errors_are_one_line(tmp_path, args, needle):
    model = _save(lint_models.valid_chain(), tmp_path / "model.onnx")
    proc = run_poly(*[a.format(model=model) for a in args], cwd=tmp_path)
    assert proc.returncode in (1, 2)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert len(lines) == 1 and needle in lines[0], proc.stderr


def _summary_sets(report):
    return {key: sorted(names) for key, names in report["summary"].items()}


@pytest.mark.slow
@pytest.mark.parametrize("make", [lint_models.ort_rejected, lint_models.unused_parts, lint_models.bad_names])
def test_same_report_as_polygraphy(tmp_path, make):
    path = _save(make(), tmp_path / "model.onnx")
    ours = run_poly("check", "lint", path, "-o", "poly.json", cwd=tmp_path)
    theirs = run_cli(POLYGRAPHY, "check", "lint", path, "-o", "polygraphy.json", cwd=tmp_path)
    assert ours.returncode == theirs.returncode
    poly_report = json.loads((tmp_path / "poly.json").read_text())
    polygraphy_report = json.loads((tmp_path / "polygraphy.json").read_text())
    # Polygraphy writes the summary from sets (any order); the entries are ordered lists.
    assert _summary_sets(poly_report) == _summary_sets(polygraphy_report)
    assert poly_report["lint_entries"] == polygraphy_report["lint_entries"]
