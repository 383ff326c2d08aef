"""`poly inspect capability`: what TensorRT's ONNX parser (TensorRT-RTX's here, which runs without
a GPU) supports of small models with operators it rejects, with and without --with-partitioning."""

from __future__ import annotations

import onnx
import pytest
from fixtures.cli_helpers import require_tensorrt, run_poly
from onnx import TensorProto, helper

OPSET = 17


@pytest.fixture(scope="module", autouse=True)
def _needs_tensorrt():
    require_tensorrt()


def _model(nodes, functions=()):
    # every tensor is [1, 4] float32, declared (as exporters of custom operators do): shape
    # inference cannot see through operators it does not know
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT, [1, 4])
    known = [helper.make_tensor_value_info(n.output[0], TensorProto.FLOAT, [1, 4]) for n in nodes[:-1]]
    graph = helper.make_graph(nodes, "capability", [x], [y], value_info=known)
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("custom", 1)]
    model = helper.make_model(graph, opset_imports=opsets, functions=list(functions))
    model.ir_version = 10
    return model


def _chain(ops):
    """x -> op0 -> t0 -> op1 -> ... ; ops that are not ONNX operators (Fake*) are in domain 'custom'."""
    nodes, prev = [], "x"
    for i, op in enumerate(ops):
        domain = "custom" if op.startswith("Fake") else ""
        nodes.append(helper.make_node(op, [prev], [f"t{i}"], name=f"n{i}_{op}", domain=domain))
        prev = f"t{i}"
    return _model(nodes)


def _save(model, path):
    onnx.save(model, str(path))
    return path


def _node_names(path):
    return [n.name for n in onnx.load(str(path)).graph.node]


def _lines(proc):
    assert "Traceback" not in proc.stdout + proc.stderr
    return [line for line in proc.stderr.splitlines() if line.strip()]


def test_partitioning_writes_subgraphs_that_cover_the_model_and_a_summary(tmp_path):
    ops = ["Relu", "Sigmoid", "FakeA", "Relu", "FakeB", "FakeB", "Abs"]
    model = _chain(ops)
    path = _save(model, tmp_path / "model.onnx")
    out = tmp_path / "dumps"
    proc = run_poly("inspect", "capability", "--with-partitioning", path, "-o", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr

    files = sorted(p.name for p in out.glob("*.onnx"))
    assert files == sorted([
        "supported_subgraph-nodes-0-1.onnx", "unsupported_subgraph-nodes-2-2.onnx", "supported_subgraph-nodes-3-3.onnx",
        "unsupported_subgraph-nodes-4-5.onnx", "supported_subgraph-nodes-6-6.onnx",
    ])
    covered = []
    for name in files:
        sub = onnx.load(str(out / name))
        onnx.checker.check_model(sub)
        start, end = (int(v) for v in name.removesuffix(".onnx").split("-")[-2:])
        assert [n.name for n in sub.graph.node] == [f"n{i}_{ops[i]}" for i in range(start, end + 1)]
        covered += [n.name for n in sub.graph.node]
    assert sorted(covered) == sorted(n.name for n in model.graph.node)
    # the unsupported range 4-5 reads t3 and feeds the supported range 6-6 through t5
    sub = onnx.load(str(out / "unsupported_subgraph-nodes-4-5.onnx"))
    assert [i.name for i in sub.graph.input] == ["t3"] and [o.name for o in sub.graph.output] == ["t5"]

    results = (out / "results.txt").read_text()
    assert results.startswith("===== Summary =====\nOperator | Count   | Reason")
    rows = {line.split("|")[0].strip(): line for line in results.splitlines()[3:]}
    assert set(rows) == {"FakeA", "FakeB"}
    assert rows["FakeA"].endswith("| [[2, 3]]") and "|       1 |" in rows["FakeA"]
    assert rows["FakeB"].endswith("| [[4, 6]]") and "operator: FakeB" in rows["FakeB"]
    assert "Plugin not found" in rows["FakeA"]
    assert "===== Summary =====" in proc.stdout


def test_the_supported_partitions_parse_in_tensorrt(tmp_path):
    from poly.trt.inspection.onnx_capability import partition_capability, supports_model

    path = _save(_chain(["Relu", "FakeA", "Sigmoid", "Abs"]), tmp_path / "model.onnx")
    result = partition_capability(str(path), str(tmp_path))
    assert result.supported == [(0, 1), (2, 4)]
    assert list(result.unsupported) == ["FakeA"]
    for file in result.files:
        supported, _, parser = supports_model(file)
        assert supported == ("/supported_" in file), file
        assert (parser.num_errors == 0) == supported


def test_static_mode_reports_each_error_with_its_node_and_local_function_stack(tmp_path):
    inner = helper.make_function("local", "Inner", ["a"], ["b"],
                                 [helper.make_node("FakeInner", ["a"], ["b"], name="fake_inner", domain="custom")],
                                 [helper.make_opsetid("", OPSET), helper.make_opsetid("custom", 1)])
    outer = helper.make_function("local", "Outer", ["a"], ["b"],
                                 [helper.make_node("Inner", ["a"], ["m"], name="call_inner", domain="local"),
                                  helper.make_node("FakeOuter", ["m"], ["b"], name="fake_outer", domain="custom")],
                                 [helper.make_opsetid("", OPSET), helper.make_opsetid("custom", 1),
                                  helper.make_opsetid("local", 1)])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Outer", ["r"], ["y"], name="call_outer", domain="local")]
    model = _model(nodes, functions=[inner, outer])
    model.opset_import.append(helper.make_opsetid("local", 1))
    path = _save(model, tmp_path / "functions.onnx")
    out = tmp_path / "dumps"
    proc = run_poly("inspect", "capability", path, "-o", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["results.txt"]
    lines = (out / "results.txt").read_text().splitlines()
    assert [c.strip() for c in lines[1].split("|")] == ["Stack trace", "Operator", "Node", "Reason"]
    rows = [[c.strip() for c in line.split("|")] for line in lines[3:]]
    by_node = {row[2]: row for row in rows}
    assert set(by_node) == {"fake_inner", "fake_outer"}
    assert by_node["fake_inner"][:2] == ["call_outer (Outer) -> call_inner (Inner)", "FakeInner"]
    assert by_node["fake_outer"][:2] == ["call_outer (Outer)", "FakeOuter"]
    assert "operator: FakeInner" in by_node["fake_inner"][3]


def test_fully_supported_model_writes_nothing(tmp_path):
    path = _save(_chain(["Relu", "Abs"]), tmp_path / "ok.onnx")
    for flags, message in (([], "Will not report errors"), (["--with-partitioning"], "Will not generate subgraphs")):
        out = tmp_path / f"out{len(flags)}"
        proc = run_poly("inspect", "capability", *flags, path, "-o", out)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"Graph is fully supported by TensorRT; {message}." in proc.stdout
        assert not out.exists() or not any(out.iterdir())


def test_default_output_directory_is_polygraphys(tmp_path):
    path = _save(_chain(["FakeA", "Relu"]), tmp_path / "model.onnx")
    proc = run_poly("inspect", "capability", "--with-partitioning", path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dumps = tmp_path / "polygraphy_capability_dumps"
    assert sorted(p.name for p in dumps.iterdir()) == [
        "results.txt", "supported_subgraph-nodes-1-1.onnx", "unsupported_subgraph-nodes-0-0.onnx"]
    assert "| [[0, 1]]" in (dumps / "results.txt").read_text()


def test_bad_inputs_end_with_one_line(tmp_path):
    proc = run_poly("inspect", "capability", tmp_path / "missing.onnx")
    assert proc.returncode == 2
    assert "missing.onnx" in proc.stderr and "does not exist" in proc.stderr and "Traceback" not in proc.stderr

    junk = tmp_path / "junk.onnx"
    junk.write_text("this is not a model")
    proc = run_poly("inspect", "capability", "--with-partitioning", junk, "-o", tmp_path / "d")
    lines = _lines(proc)
    assert proc.returncode == 1 and len(lines) == 1 and "junk.onnx" in lines[0], proc.stderr
