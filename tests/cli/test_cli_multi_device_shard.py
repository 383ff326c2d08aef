"""`poly multi-device shard` and poly.onnx.multi_device: a single-device attention model made
multi-device with DistCollective nodes as a hints file asks. With one rank every collective is an
identity, so the sharded model, its DistCollectives replaced by Identity, must compute what the
original does: that checks the wiring; the attributes are checked one by one."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from fixtures.cli_helpers import error_lines, run_cli, run_poly
from onnx import TensorProto, helper, numpy_helper

from poly.onnx.multi_device import AttentionLayerHint, DistCollective, ShardHints, ShardModel, ShardTensor


def _attention_model():
    """input[4,2,8] -> MatMul W_q/W_k/W_v -> q, k, v; MatMul(q, Transpose(k)) -> Softmax -> MatMul(., v) -> output."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32), n) for n in ("W_q", "W_k", "W_v")]
    nodes = [
        helper.make_node("MatMul", ["input", "W_q"], ["q"], name="mmq"),
        helper.make_node("MatMul", ["input", "W_k"], ["k"], name="mmk"),
        helper.make_node("MatMul", ["input", "W_v"], ["v"], name="mmv"),
        helper.make_node("Transpose", ["k"], ["k_T"], name="t", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "k_T"], ["qk"], name="mm1"),
        helper.make_node("Softmax", ["qk"], ["sm"], name="sm", axis=-1),
        helper.make_node("MatMul", ["sm", "v"], ["output"], name="mm2"),
    ]
    graph = helper.make_graph(nodes, "attention", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [4, 2, 8])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [4, 2, 8])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


# The layout of Polygraphy's example hints file (collective settings at the top level)
EXAMPLE_HINTS = {
    "parallelism": "CP", "group_size": 0, "root": 0, "groups": [],
    "attention_layers": [{"q": "q", "gather_kv": True, "gather_q": False, "polygraphy_class": "AttentionLayerHint"}],
    "inputs": [{"name": "input", "seq_len_idx": 0, "rank": 3, "polygraphy_class": "ShardTensor"}],
    "outputs": [{"name": "output", "seq_len_idx": 0, "rank": 3, "polygraphy_class": "ShardTensor"}],
    "k_seq_len_idx": 0, "v_seq_len_idx": 0, "kv_rank": None, "reduce_scatter_reduce_op": "max",
    "polygraphy_class": "ShardHints",
}


def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _as_identity(model):
    """The model with each DistCollective replaced by an Identity (a one-rank collective)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for node in model.graph.node:
        if node.op_type == "DistCollective":
            node.op_type = "Identity"
            del node.attribute[:]
    return model


def _run(model):
    feed = {"input": np.random.default_rng(1).standard_normal((4, 2, 8)).astype(np.float32)}
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run([model.graph.output[0].name], feed)[0]


def _write(path, hints):
    path.write_text(json.dumps(hints))
    return path


def test_example_hints_shard_inputs_kv_and_outputs(tmp_path):
    model_path = tmp_path / "attention.onnx"
    onnx.save(_attention_model(), str(model_path))
    out = tmp_path / "attention_md.onnx"
    proc = run_poly("multi-device", "shard", model_path, "-s", _write(tmp_path / "hint.json", EXAMPLE_HINTS),
                   "-o", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sharded = onnx.load(str(out))
    dist = [n for n in sharded.graph.node if n.op_type == "DistCollective"]
    kinds = sorted((_attrs(n)["collective_operation"].decode(), n.input[0], n.output[0]) for n in dist)
    assert kinds == [("all_gather", "k_T_md", "k_T"), ("all_gather", "output_md", "output"),
                     ("all_gather", "v_md", "v"), ("reduce_scatter", "input", "input_md")]
    for node in dist:
        attrs = _attrs(node)
        expected_op = b"max" if attrs["collective_operation"] == b"reduce_scatter" else b"none"
        assert attrs["reduce_op"] == expected_op
        assert (attrs["group_size"], attrs["root"], attrs["nb_rank"], attrs["groups"]) == (0, 0, 1, [])
    assert [o.name for o in sharded.graph.output] == ["output"] and [i.name for i in sharded.graph.input] == ["input"]
    np.testing.assert_allclose(_run(_as_identity(sharded)), _run(_attention_model()), rtol=1e-6)


def test_gather_q_leaves_outputs_unsharded_and_seq_axis_gets_transposes(tmp_path):
    hints = ShardHints(
        parallelism="CP",
        attention_layers=[AttentionLayerHint("q", gather_kv=True, gather_q=True)],
        dist_collectives=DistCollective(group_size=2, root=1, nb_rank=2, groups=[0, 1], reduce_scatter_reduce_op="sum"),
        inputs=[ShardTensor("input", 1)],
        outputs=[ShardTensor("output", 0)],
        v_seq_len_idx=1,
        kv_rank=3,  # v has no recorded shape
    )
    sharded = ShardModel(_attention_model(), hints)()
    dist = {n.output[0]: n for n in sharded.graph.node if n.op_type == "DistCollective"}
    gathered = sorted(_attrs(n)["collective_operation"].decode() for n in dist.values())
    assert gathered == ["all_gather", "all_gather", "all_gather", "reduce_scatter"]  # q, k_T, v; no output gather
    transposes = [n for n in sharded.graph.node if n.name.startswith(("TransposePre_", "TransposePost_"))]
    assert len(transposes) == 4  # around the input's reduce-scatter and v's all-gather
    assert all(_attrs(n)["perm"] == [1, 0, 2] for n in transposes)
    some = next(iter(dist.values()))
    assert (_attrs(some)["group_size"], _attrs(some)["root"], _attrs(some)["nb_rank"], _attrs(some)["groups"]) == (
        2, 1, 2, [0, 1])
    np.testing.assert_allclose(_run(_as_identity(sharded)), _run(_attention_model()), rtol=1e-6)


def test_hints_round_trip_in_polygraphy_053_layout(tmp_path):
    hints = ShardHints.load(str(_write(tmp_path / "old.json", EXAMPLE_HINTS)))
    assert hints.dist_collectives == DistCollective(0, 0, 1, [], "max")
    saved = tmp_path / "new.json"
    hints.save(str(saved))
    data = json.loads(saved.read_text())
    assert data["polygraphy_class"] == "ShardHints"
    assert data["dist_collectives"] == {"group_size": 0, "root": 0, "nb_rank": 1, "reduce_op": "max", "groups": [],
                                        "polygraphy_class": "DistCollective"}
    assert "group_size" not in data
    assert ShardHints.load(str(saved)) == hints
    polygraphy_md = pytest.importorskip("polygraphy.tools.multi_device.multi_device",
                                        reason="Polygraphy is not installed")
    theirs = polygraphy_md.ShardHints.load(str(saved))
    assert theirs.dist_collectives.reduce_scatter_reduce_op == "max"
    assert [layer.q for layer in theirs.attention_layers] == ["q"]


@pytest.mark.parametrize(("change", "needle"), [
    ({"parallelism": "TP"}, "parallelism 'TP' is not supported"),
    ({"inputs": [{"name": "nope", "seq_len_idx": 0, "polygraphy_class": "ShardTensor"}]}, "'nope'"),
    ({"reduce_scatter_reduce_op": "median"}, "'median'"),
    ({"k_seq_len_idx": "zero"}, "k_seq_len_idx"),
    ({"outputs": [{"name": "output", "seq_len_idx": 5, "polygraphy_class": "ShardTensor"}]}, "seq_len_idx 5"),
])
def test_bad_hints_end_with_one_line(tmp_path, change, needle):
    model_path = tmp_path / "attention.onnx"
    onnx.save(_attention_model(), str(model_path))
    hints = _write(tmp_path / "hint.json", {**EXAMPLE_HINTS, **change})
    proc = run_poly("multi-device", "shard", model_path, "-s", hints, "-o", tmp_path / "o.onnx")
    lines = error_lines(proc)
    assert proc.returncode == 1 and len(lines) == 1 and needle in lines[0], proc.stderr
    assert not (tmp_path / "o.onnx").exists()


def test_missing_hints_file_and_flag(tmp_path):
    model_path = tmp_path / "attention.onnx"
    onnx.save(_attention_model(), str(model_path))
    proc = run_poly("multi-device", "shard", model_path, "-s", tmp_path / "none.json", "-o", tmp_path / "o.onnx")
    assert proc.returncode == 2 and "none.json" in proc.stderr and "--hint" in proc.stderr
    proc = run_poly("multi-device", "shard", model_path, "-o", tmp_path / "o.onnx")
    assert proc.returncode == 2 and "--hint" in proc.stderr


def _collectives(model):
    return sorted(sorted((k, v if not isinstance(v, bytes) else v.decode()) for k, v in _attrs(n).items())
                  for n in model.graph.node if n.op_type == "DistCollective")


@pytest.fixture
def attention_path(tmp_path):
    path = tmp_path / "attention.onnx"
    onnx.save(_attention_model(), str(path))
    return path


def test_template_shard_hints_suggests_layers_and_io(attention_path, tmp_path):
    out = tmp_path / "hints.json"
    proc = run_poly("template", "shard-hints", attention_path, "-o", out, "--gpus", "4", "--groups", "0", "1",
                   "--reduce-op", "sum", "--k-idx", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert data["attention_layers"] == [{"q": "q", "gather_kv": True, "gather_q": False, "replace": None,
                                         "polygraphy_class": "AttentionLayerHint"}]
    assert [(t["name"], t["seq_len_idx"], t["rank"]) for t in data["inputs"]] == [("input", 0, 3)]
    assert [(t["name"], t["seq_len_idx"], t["rank"]) for t in data["outputs"]] == [("output", 0, 3)]
    assert data["dist_collectives"] == {"group_size": 4, "root": -1, "nb_rank": 1, "reduce_op": "sum",
                                        "groups": [0, 1], "polygraphy_class": "DistCollective"}
    assert data["k_seq_len_idx"] == 1 and data["parallelism"] == "CP"

    proc = run_poly("template", "shard-hints", attention_path, "-o", out, "--no-suggest-io", "--cp-type", "fused",
                   "--is-causal", "--q-shuffle", "0", "2", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert data["inputs"] == [] and data["outputs"] == []
    layer = data["attention_layers"][0]
    assert layer["gather_kv"] is False
    assert layer["replace"] == {"is_causal": True, "q_shuffle": [0, 2, 1], "k_shuffle": None, "v_shuffle": None,
                                "nb_rank": 1, "polygraphy_class": "FusedAttention"}
    # poly does not apply a fused replacement: one line says so
    proc = run_poly("multi-device", "shard", attention_path, "-s", out, "-o", tmp_path / "md.onnx")
    lines = error_lines(proc)
    assert proc.returncode == 1 and len(lines) == 1 and "fused-attention replacement" in lines[0]


def test_template_bad_flags_are_usage_errors(attention_path, tmp_path):
    proc = run_poly("template", "shard-hints", attention_path, "-o", tmp_path / "hints.txt")
    assert proc.returncode == 2 and ".json" in proc.stderr
    proc = run_poly("template", "shard-hints", attention_path, "-o", tmp_path / "h.json", "--groups", "a")
    assert proc.returncode == 2 and "--groups" in proc.stderr
    proc = run_poly("template", "shard-hints", attention_path, "-o", tmp_path / "h.json", "--attention-pattern", "1")
    assert proc.returncode == 2 and "--attention-pattern" in proc.stderr


def test_one_shot_equals_template_then_shard(attention_path, tmp_path):
    hints = tmp_path / "hints.json"
    assert run_poly("template", "shard-hints", attention_path, "-o", hints).returncode == 0
    assert run_poly("multi-device", "shard", attention_path, "-s", hints, "-o", tmp_path / "a.onnx").returncode == 0
    proc = run_poly("multi-device", "shard", attention_path, "--one-shot", "-o", tmp_path / "b.onnx")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    a, b = onnx.load(str(tmp_path / "a.onnx")), onnx.load(str(tmp_path / "b.onnx"))
    assert a.graph == b.graph
    proc = run_poly("multi-device", "shard", attention_path, "--one-shot", "-s", hints, "-o", tmp_path / "c.onnx")
    assert proc.returncode == 2 and "exactly one of -s/--hint and --one-shot" in proc.stderr


@pytest.mark.slow
def test_hints_and_sharded_model_agree_with_polygraphy(attention_path, tmp_path):
    from fixtures.cli_helpers import POLYGRAPHY

    theirs_hints = tmp_path / "theirs.json"
    proc = run_cli(POLYGRAPHY, "template", "shard-hints", attention_path, "-o", theirs_hints)
    if proc.returncode != 0:
        pytest.skip(f"polygraphy template shard-hints did not run here: {proc.stderr.strip().splitlines()[-1:]}")
    ours_hints = tmp_path / "ours.json"
    assert run_poly("template", "shard-hints", attention_path, "-o", ours_hints).returncode == 0
    assert json.loads(ours_hints.read_text()) == json.loads(theirs_hints.read_text())

    assert run_cli(POLYGRAPHY, "multi-device", "shard", attention_path, "-s", ours_hints,
                   "-o", tmp_path / "theirs.onnx").returncode == 0
    assert run_poly("multi-device", "shard", attention_path, "-s", theirs_hints,
                   "-o", tmp_path / "ours.onnx").returncode == 0
    theirs, ours = onnx.load(str(tmp_path / "theirs.onnx")), onnx.load(str(tmp_path / "ours.onnx"))
    assert _collectives(ours) == _collectives(theirs) and len(_collectives(ours)) == 4
    assert sorted(n.op_type for n in ours.graph.node) == sorted(n.op_type for n in theirs.graph.node)
    # Polygraphy renames the gathered graph output; poly keeps its name. The values agree.
    assert [o.name for o in ours.graph.output] == ["output"]
    np.testing.assert_allclose(_run(_as_identity(ours)), _run(_as_identity(theirs)), rtol=1e-6)


def test_cli_choices_are_the_librarys():
    from poly.cli.args.onnx import shard_hints
    from poly.onnx import multi_device
    from poly.onnx.multi_device import hints

    assert shard_hints.CP_TYPES == multi_device.CP_TYPES
    assert shard_hints.REDUCE_OPS == multi_device.REDUCE_OPS
    assert shard_hints.PARALLELISMS == hints.PARALLELISMS
