"""poly.onnx.lint's report: ONNX-Runtime's decorations stripped from real error texts, the
passing/failing bookkeeping, and the JSON layout; lint_onnx through the API on a real model."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from fixtures import lint_models

from poly.onnx.lint import LintLevel, LintReport, LintSource, clean_onnxruntime_message, lint_onnx


def _ort_error(model):
    import onnxruntime

    with pytest.raises(Exception) as info:
        onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return str(info.value)


def test_real_onnxruntime_error_is_cleaned():
    model = lint_models.ort_rejected()
    raw = _ort_error(model)
    assert raw.startswith("[ONNXRuntimeError]")
    assert clean_onnxruntime_message(raw) == " Incompatible dimensions for matrix multiplication"


def test_log_line_decorations_are_removed():
    line = ("2025-01-02 03:04:05.678901 [W:onnxruntime:, graph.cc:4285 CleanUnusedInitializersAndNodeArgs] "
            "Removing initializer 'w'. It is not used by any node and should be removed from the model.")
    assert clean_onnxruntime_message(line) == (
        "Removing initializer 'w'. It is not used by any node and should be removed from the model."
    )
    assert clean_onnxruntime_message("\x1b[1;31mbad thing\x1b[m") == "bad thing"
    assert clean_onnxruntime_message("multi\nline") == "multiline"


def test_failing_wins_over_passing_and_json_layout(tmp_path):
    report = LintReport()
    report.mark_passing("a")
    report.add(LintLevel.WARNING, LintSource.ONNX_GS, "Does not affect outputs, can be removed.", node_name="b", op="Relu")
    report.add(LintLevel.EXCEPTION, LintSource.ONNXRUNTIME, "boom", node_name="a", op="Add")
    report.mark_passing("a")
    report.add(LintLevel.EXCEPTION, LintSource.ONNX_CHECKER, "graph-level")
    assert not report.is_valid
    report.save(str(tmp_path / "r.json"))
    assert json.loads((tmp_path / "r.json").read_text()) == {
        "summary": {"passing": ["b"], "failing": ["a"]},
        "lint_entries": [
            {"level": "warning", "source": "onnx_graphsurgeon", "message": "Does not affect outputs, can be removed.",
             "nodes": ["b"]},
            {"level": "exception", "source": "onnxruntime", "message": "boom", "nodes": ["a"]},
            {"level": "exception", "source": "onnx_checker", "message": "graph-level"},
        ],
    }


def test_lint_onnx_runs_nodes_on_the_given_data(tmp_path):
    path = str(tmp_path / "m.onnx")
    onnx.save(lint_models.ort_rejected(), path)
    feeds = [{"x": np.full((1, 4), -1.0, np.float32)}]
    report = lint_onnx(path, feeds)
    assert list(report.failing) == ["mm"] and list(report.passing) == ["relu", "side"]
    from poly.core import PolyException

    with pytest.raises(PolyException, match="'x'"):
        lint_onnx(path, [{"y": np.zeros((1, 4), np.float32)}])
