"""tools/bench_reduce.py on its small model: the detector holds one planted node, both tools
reduce it to that node alone (poly already in the bisect step), and every figure of the report is there; poly runs
fewer checks than Polygraphy (no timing is asserted)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "bench_reduce.py"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    importlib.util.find_spec("polygraphy") is None or importlib.util.find_spec("onnx_graphsurgeon") is None,
    reason="the benchmark runs `polygraphy debug reduce`: polygraphy or onnx-graphsurgeon is not importable",
)]


def _load_tool():
    spec = importlib.util.spec_from_file_location("bench_reduce", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("plant", ["head", "backbone"])
def test_detector_has_one_planted_node_and_is_valid(tmp_path, plant):
    bench = _load_tool()
    path = tmp_path / "model.onnx"
    count = bench.build_detector(path, plant=plant)
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    assert count == len(model.graph.node) == 670
    assert [n.op_type for n in model.graph.node if n.name == bench.PLANTED] == ["Relu"]
    ops = {n.op_type for n in model.graph.node}
    assert {"Conv", "Relu", "Add", "Resize", "Concat", "Reshape", "Transpose", "Sigmoid"} <= ops


def test_bench_reduce_small(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(TOOL), "--small", "--repeat", "1", "--out", str(out), "--keep", str(tmp_path / "w")],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = json.loads(out.read_text())
    planted = ["Relu:planted_fault"]
    for name in ("poly", "polygraphy"):
        figures = res[name]
        assert figures["result"] == planted, name  # after both steps
        assert planted[0] in figures["bisect_result"], name
        assert figures["iterations"] == figures["iterations_bisect"] + figures["iterations_linear"] > 0
        assert figures["wall_s"] > 0 and figures["per_iteration_check_s"] > 0
    assert res["poly"]["bisect_result"] == planted  # poly's bisect step already isolates the node
    assert res["poly"]["same_result"] is True and res["poly"]["speedup"] > 0
    assert res["poly"]["iterations"] < res["polygraphy"]["iterations"]
    assert "speed-up (Polygraphy wall / poly wall" in proc.stdout
