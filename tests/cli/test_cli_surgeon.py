"""`poly surgeon insert/prune/weight-strip/weight-reconstruct`, the flags of `surgeon sanitize` and
`surgeon extract`, and `inspect model --list-unbounded-dds`, on small models the tests build;
side by side with the installed `polygraphy` where it has the same command."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from fixtures import weight_models
from fixtures.cli_helpers import POLYGRAPHY, run_cli
from onnx import TensorProto, helper, numpy_helper

from poly.onnx.surgery import is_2_4_sparse

PRUNED_AXES = {"Wc": 1, "Wg": 1, "Wt": 1, "Wh": 0, "Wq": 0, "Wo": 0}
STRIPPED = {"Wc", "bc", "Wg", "Cg", "Wt", "Wq", "E", "Wo", "W6"}


def _save(model, path):
    onnx.save(model, str(path))
    return path


def _run(path, feeds):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))


def _weights(path):
    return {t.name: numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer}


def _dims(value_info):
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


def _dds_model():
    """x[1,4] -> ReduceMax -> Cast(int64) -> lim; Range(0, lim, 1) -> Cast -> y: y's length depends on x."""
    nodes = [helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0),
             helper.make_node("Cast", ["m"], ["lim"], to=TensorProto.INT64),
             helper.make_node("Range", ["start", "lim", "delta"], ["r"]),
             helper.make_node("Cast", ["r"], ["y"], to=TensorProto.FLOAT)]
    graph = helper.make_graph(nodes, "dds", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=[numpy_helper.from_array(np.array(0, np.int64), "start"),
                                           numpy_helper.from_array(np.array(1, np.int64), "delta")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


def _shape_model():
    """y = x + Cast(Shape(x)): the Shape subgraph folds only when shapes are folded."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["x", "sf"], ["y"])]
    graph = helper.make_graph(nodes, "shape", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


def _tile_model():
    """y = x + Tile(c[1,256], [4,1]): folding the Tile creates a 4 KiB constant."""
    inits = [numpy_helper.from_array(np.ones((1, 256), np.float32), "c"),
             numpy_helper.from_array(np.array([4, 1], np.int64), "reps")]
    nodes = [helper.make_node("Tile", ["c", "reps"], ["t"]), helper.make_node("Add", ["x", "t"], ["y"])]
    graph = helper.make_graph(nodes, "tile", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 256])], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)


@pytest.fixture
def net(tmp_path):
    return _save(weight_models.weighted_net(), tmp_path / "net.onnx")


# ---- insert ---------------------------------------------------------------------------------------


def test_insert_node_with_attrs_runs_and_matches_polygraphy(poly, models, tmp_path):
    out, theirs = tmp_path / "ins.onnx", tmp_path / "pg_ins.onnx"
    args = [models["identity"], "--inputs", "y", "--outputs", "y", "--op", "ReduceMean", "--name", "mean",
            "--attrs", "axes=[2,3]", "keepdims=0"]
    result = poly("surgeon", "insert", *args, "-o", out)
    assert result.exit_code == 0, result.output
    model = onnx.load(str(out))
    node = model.graph.node[-1]
    assert (node.op_type, node.name, list(node.input), list(node.output)) == (
        "ReduceMean", "mean", ["y_polygraphy_surgeon_insert_output"], ["y"])
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    assert attrs == {"axes": [2, 3], "keepdims": 0}
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    np.testing.assert_array_equal(_run(out, {"x": x})["y"], x.mean(axis=(2, 3)))
    pg = run_cli(POLYGRAPHY, "surgeon", "insert", *args, "-o", theirs)
    assert pg.returncode == 0, pg.stderr
    expected = onnx.load(str(theirs))
    assert [(n.op_type, list(n.input), list(n.output)) for n in expected.graph.node] == \
        [(n.op_type, list(n.input), list(n.output)) for n in model.graph.node]
    assert expected.graph.node[-1].attribute == node.attribute


def test_insert_node_string_and_float_attrs(poly, models, tmp_path):
    out = tmp_path / "pad.onnx"
    result = poly("surgeon", "insert", models["identity"], "--inputs", "x", "--outputs", "y", "--op", "Cast",
                  "--attrs", "to=1", "-o", out)
    assert result.exit_code == 0, result.output
    out2 = tmp_path / "leaky.onnx"
    assert poly("surgeon", "insert", out, "--inputs", "y", "--outputs", "y", "--op", "LeakyRelu",
                "--attrs", "alpha=0.25", "-o", out2).exit_code == 0
    alpha = onnx.load(str(out2)).graph.node[-1].attribute[0]
    assert alpha.type == onnx.AttributeProto.FLOAT and alpha.f == 0.25
    x = np.array([[[[-4.0, 1.0], [2.0, -8.0]]]], np.float32)
    np.testing.assert_array_equal(_run(out2, {"x": x})["y"], np.where(x > 0, x, 0.25 * x))


def test_insert_errors_name_the_tensor_or_flag(poly, models, tmp_path):
    result = poly("surgeon", "insert", models["identity"], "--inputs", "nope", "--outputs", "y", "--op", "Relu",
                  "-o", tmp_path / "o.onnx")
    assert result.exit_code == 1 and "Tensor: nope does not exist in the model" in result.output
    assert "Traceback" not in result.output
    result = poly("surgeon", "insert", models["identity"], "--inputs", "x", "--outputs", "y", "--op", "Relu",
                  "--attrs", "alpha", "-o", tmp_path / "o.onnx")
    assert result.exit_code == 2 and "--attrs" in result.output and "NAME=VALUE" in result.output


# ---- prune ----------------------------------------------------------------------------------------


def test_prune_gives_the_2_4_pattern_and_equals_polygraphys(poly, net, tmp_path):
    ours, theirs = tmp_path / "pruned.onnx", tmp_path / "pg_pruned.onnx"
    result = poly("surgeon", "prune", net, "-o", ours)
    assert result.exit_code == 0, result.output
    before, after = _weights(net), _weights(ours)
    for name, axis in PRUNED_AXES.items():
        assert is_2_4_sparse(after[name], axis) and not is_2_4_sparse(before[name], axis), name
    for name in set(before) - set(PRUNED_AXES):
        np.testing.assert_array_equal(after[name], before[name], err_msg=name)
    pg = run_cli(POLYGRAPHY, "surgeon", "prune", net, "-o", theirs)
    assert pg.returncode == 0, pg.stderr
    expected = _weights(theirs)
    for name in before:
        np.testing.assert_array_equal(after[name], expected[name], err_msg=name)
    assert _run(ours, weight_models.feed())["y"].shape == (3, 4)


# ---- weight-strip / weight-reconstruct ---------------------------------------------------------------


def test_weight_strip_records_what_polygraphys_reconstruct_reads(poly, net, tmp_path):
    pruned, stripped, rebuilt = tmp_path / "p.onnx", tmp_path / "s.onnx", tmp_path / "r.onnx"
    assert poly("surgeon", "prune", net, "-o", pruned).exit_code == 0
    result = poly("surgeon", "weight-strip", pruned, "-o", stripped)
    assert result.exit_code == 0, result.output
    model = onnx.load(str(stripped))
    assert model.doc_string == "TRT_WEIGHTLESS"
    marks = {t.name: t.doc_string for t in model.graph.initializer}
    assert {name for name, mark in marks.items() if mark} == STRIPPED
    assert {name for name, mark in marks.items() if mark == "TRT_WEIGHTLESS/SPARSE_2_4"} == set(PRUNED_AXES) - {"Wh"}
    assert all(not t.raw_data for t in model.graph.initializer if t.name in STRIPPED)
    pg = run_cli(POLYGRAPHY, "surgeon", "weight-reconstruct", stripped, "-o", rebuilt)
    assert pg.returncode == 0, pg.stderr
    original, theirs = _weights(net), _weights(rebuilt)
    for name, array in theirs.items():
        assert array.shape == original[name].shape and array.dtype == original[name].dtype, name
        if name in PRUNED_AXES and name in STRIPPED:
            assert is_2_4_sparse(array, PRUNED_AXES[name]), name


def test_weight_reconstruct_reads_polygraphys_stripped_model(poly, net, tmp_path):
    stripped, rebuilt, again = tmp_path / "pg_s.onnx", tmp_path / "r.onnx", tmp_path / "r2.onnx"
    pg = run_cli(POLYGRAPHY, "surgeon", "weight-strip", net, "-o", stripped)
    assert pg.returncode == 0, pg.stderr
    assert {t.name for t in onnx.load(str(stripped)).graph.initializer if t.doc_string} == STRIPPED
    result = poly("surgeon", "weight-reconstruct", stripped, "-o", rebuilt, "--seed", "7")
    assert result.exit_code == 0, result.output
    original, ours = _weights(net), _weights(rebuilt)
    for name, array in ours.items():
        assert array.shape == original[name].shape and array.dtype == original[name].dtype, name
        assert np.array_equal(array, original[name]) == (name not in STRIPPED), name
    model = onnx.load(str(rebuilt))
    assert model.doc_string == "" and not any(t.doc_string for t in model.graph.initializer)
    assert _run(rebuilt, weight_models.feed())["y"].shape == (3, 4)
    assert poly("surgeon", "weight-reconstruct", stripped, "-o", again, "--seed", "7").exit_code == 0
    assert all(np.array_equal(a, _weights(again)[n]) for n, a in ours.items())


def test_weight_reconstruct_with_the_original_weights_restores_outputs(poly, net, tmp_path):
    stripped, rebuilt = tmp_path / "s.onnx", tmp_path / "r.onnx"
    assert poly("surgeon", "weight-strip", net, "-o", stripped).exit_code == 0
    result = poly("surgeon", "weight-reconstruct", stripped, "--weights", net, "-o", rebuilt)
    assert result.exit_code == 0, result.output
    feeds = weight_models.feed()
    np.testing.assert_array_equal(_run(rebuilt, feeds)["y"], _run(net, feeds)["y"])
    npz = tmp_path / "w.npz"
    np.savez(npz, Wo=np.zeros((8, 6), np.float32))
    assert poly("surgeon", "weight-reconstruct", stripped, "--weights", npz, "-o", rebuilt).exit_code == 0
    assert not _weights(rebuilt)["Wo"].any() and _weights(rebuilt)["Wc"].any()
    np.savez(npz, Wo=np.zeros((2, 2), np.float32))
    result = poly("surgeon", "weight-reconstruct", stripped, "--weights", npz, "-o", rebuilt)
    assert result.exit_code == 1 and "initializer Wo has shape [2, 2]" in result.output
    npz.write_text("not an archive")
    result = poly("surgeon", "weight-reconstruct", stripped, "--weights", npz, "-o", rebuilt)
    assert result.exit_code == 2 and "'--weights'" in result.output and "is not an .npz archive" in result.output


def test_weight_strip_exclude_list(poly, net, tmp_path):
    keep, stripped = tmp_path / "keep.txt", tmp_path / "s.onnx"
    keep.write_text("Wc\nE\nmissing\n")
    result = poly("surgeon", "weight-strip", net, "--exclude-list", keep, "-o", stripped)
    assert result.exit_code == 0, result.output
    assert "missing" in result.output  # warned about: not in the model
    model = onnx.load(str(stripped))
    assert {t.name for t in model.graph.initializer if t.doc_string} == STRIPPED - {"Wc", "E"}
    result = poly("surgeon", "weight-strip", net, "--exclude-list", tmp_path / "none.txt", "-o", stripped)
    assert result.exit_code == 2 and "--exclude-list" in result.output and "none.txt" in result.output


# ---- sanitize -------------------------------------------------------------------------------------


def test_sanitize_outputs_and_exclude_outputs(poly, models, tmp_path):
    out = tmp_path / "o.onnx"
    assert poly("surgeon", "sanitize", models["multi"], "--outputs", "s", "r", "-o", out).exit_code == 0
    assert [o.name for o in onnx.load(str(out)).graph.output] == ["s", "r"]
    assert poly("surgeon", "sanitize", models["multi"], "--exclude-outputs", "r", "-o", out).exit_code == 0
    assert [o.name for o in onnx.load(str(out)).graph.output] == ["sum"]
    assert poly("surgeon", "sanitize", models["multi"], "--outputs", "mark", "all", "-o", out).exit_code == 0
    assert {o.name for o in onnx.load(str(out)).graph.output} == {"r", "s", "sum"}


def test_sanitize_fp_to_fp16(poly, models, tmp_path):
    out = tmp_path / "half.onnx"
    assert poly("surgeon", "sanitize", models["mlp"], "--fp-to-fp16", "-o", out).exit_code == 0
    assert {t.data_type for t in onnx.load(str(out)).graph.initializer} == {TensorProto.FLOAT16}


def test_sanitize_shape_inference_is_on_unless_disabled(poly, models, tmp_path):
    on, off = tmp_path / "on.onnx", tmp_path / "off.onnx"
    assert poly("surgeon", "sanitize", models["mlp"], "-o", on).exit_code == 0
    assert poly("surgeon", "sanitize", models["mlp"], "--no-shape-inference", "-o", off).exit_code == 0
    inferred = {vi.name: _dims(vi) for vi in onnx.load(str(on)).graph.value_info}
    assert inferred["h"] == ["batch", 16] and inferred["logits"] == ["batch", 4]
    assert not onnx.load(str(off)).graph.value_info
    both = poly("surgeon", "sanitize", models["mlp"], "--no-shape-inference", "--force-fallback-shape-inference",
                "-o", off)
    assert both.exit_code == 2 and "cannot be used together" in both.output


def test_sanitize_sets_unbounded_dds_upper_bounds(poly, tmp_path):
    model, out = _save(_dds_model(), tmp_path / "dds.onnx"), tmp_path / "b.onnx"
    listed = poly("inspect", "model", model, "--list-unbounded-dds")
    assert listed.exit_code == 0 and "Found tensors with unbounded DDS: ['lim']" in listed.output
    for arg, bound in (("1000", 1000), ("lim:50", 50)):
        result = poly("surgeon", "sanitize", model, "--set-unbounded-dds-upper-bound", arg, "-o", out)
        assert result.exit_code == 0, result.output
        bounded = onnx.load(str(out))
        node = next(n for n in bounded.graph.node if n.op_type == "Min")
        assert list(node.output) == ["lim"]
        values = {t.name: numpy_helper.to_array(t) for t in bounded.graph.initializer}
        assert int(values[node.input[1]]) == bound
        x = np.array([[1.0, 70.0, 3.0, 2.0]], np.float32)
        assert _run(out, {"x": x})["y"].shape == (min(70, bound),)
    listed = poly("inspect", "model", out, "--list-unbounded-dds")
    assert "Found tensors with unbounded DDS: []" in listed.output
    bad = poly("surgeon", "sanitize", model, "--set-unbounded-dds-upper-bound", "lim:many", "-o", out)
    assert bad.exit_code == 2 and "--set-unbounded-dds-upper-bound" in bad.output


def test_sanitize_folding_flags(poly, tmp_path):
    shape_model, tile_model = _save(_shape_model(), tmp_path / "s.onnx"), _save(_tile_model(), tmp_path / "t.onnx")
    out = tmp_path / "o.onnx"

    def ops(path):
        return [n.op_type for n in onnx.load(str(path)).graph.node]

    assert poly("surgeon", "sanitize", shape_model, "--fold-constants", "-o", out).exit_code == 0
    assert ops(out) == ["Add"]
    assert poly("surgeon", "sanitize", shape_model, "--fold-constants", "--no-fold-shapes", "-o", out).exit_code == 0
    assert "Shape" in ops(out)
    assert poly("surgeon", "sanitize", tile_model, "--fold-constants", "--partitioning", "basic",
                "-o", out).exit_code == 0
    assert ops(out) == ["Add"]
    assert poly("surgeon", "sanitize", tile_model, "--fold-constants", "--fold-size-threshold", "1K",
                "-o", out).exit_code == 0
    assert ops(out) == ["Tile", "Add"]
    bad = poly("surgeon", "sanitize", tile_model, "--fold-constants", "--fold-size-threshold", "lots", "-o", out)
    assert bad.exit_code == 2 and "--fold-size-threshold" in bad.output
    warned = poly("surgeon", "sanitize", tile_model, "--partitioning", "basic", "-o", out)
    assert warned.exit_code == 0 and "'--partitioning' will be ignored" in warned.output
    assert ops(out) == ["Tile", "Add"]


def test_sanitize_partitioning_and_per_pass_inference_reach_fold_constants(poly, models, tmp_path, monkeypatch):
    import poly.onnx as poly_onnx

    calls = []

    class RecordingFoldConstants(poly_onnx.FoldConstants):
        def __init__(self, model, **kwargs):
            calls.append(kwargs)
            super().__init__(model, **kwargs)

    monkeypatch.setattr(poly_onnx, "FoldConstants", RecordingFoldConstants)
    out = tmp_path / "o.onnx"
    assert poly("surgeon", "sanitize", models["foldable"], "--fold-constants", "--partitioning", "recursive",
                "--no-per-pass-shape-inference", "--num-passes", "2", "--fold-size-threshold", "2M",
                "-o", out).exit_code == 0
    assert calls[-1]["partitioning"] == "recursive" and calls[-1]["do_shape_inference"] is False
    assert calls[-1]["num_passes"] == 2 and calls[-1]["size_threshold"] == 2 << 20
    assert len(onnx.load(str(out)).graph.node) < len(onnx.load(models["foldable"]).graph.node)


def test_sanitize_external_data_dir(poly, models, tmp_path):
    weights_dir, model_dir = tmp_path / "weights", tmp_path / "model"
    weights_dir.mkdir()
    model_dir.mkdir()
    onnx.save(onnx.load(models["mlp"]), str(model_dir / "mlp.onnx"), save_as_external_data=True,
              location="mlp.data", size_threshold=0)
    (model_dir / "mlp.data").rename(weights_dir / "mlp.data")
    out = tmp_path / "o.onnx"
    missing = poly("surgeon", "sanitize", model_dir / "mlp.onnx", "-o", out)
    assert missing.exit_code != 0 and "mlp.data" in missing.output and "Traceback" not in missing.output
    result = poly("surgeon", "sanitize", model_dir / "mlp.onnx", "--external-data-dir", weights_dir, "-o", out)
    assert result.exit_code == 0, result.output
    np.testing.assert_array_equal(_weights(out)["w1"], _weights(models["mlp"])["w1"])


def test_sanitize_fallback_shape_inference_uses_the_data_loader(poly, models, tmp_path):
    inputs, out = tmp_path / "in.json", tmp_path / "o.onnx"
    assert poly("run", models["dynamic"], "--onnxrt", "--input-shapes", "X:[3,1,4,4]",
                "--save-inputs", inputs).exit_code == 0
    result = poly("surgeon", "sanitize", models["dynamic"], "--force-fallback-shape-inference",
                  "--load-inputs", inputs, "-o", out)
    assert result.exit_code == 0, result.output
    assert _dims(onnx.load(str(out)).graph.output[0]) == [3, 1, 4, 4]
    saved = tmp_path / "fallback_inputs.json"
    result = poly("surgeon", "sanitize", models["dynamic"], "--force-fallback-shape-inference",
                  "--override-input-shapes", "X:[2,1,5,5]", "--save-inputs", saved, "-o", out)
    assert result.exit_code == 0, result.output
    from poly.compare import load_inputs

    assert [feed["X"].shape for feed in load_inputs([str(saved)])] == [(2, 1, 5, 5)]
    model = onnx.load(str(out))
    assert _dims(model.graph.input[0]) == [2, 1, 5, 5] and _dims(model.graph.output[0]) == [2, 1, 5, 5]


# ---- extract --------------------------------------------------------------------------------------


def test_extract_fallback_shapes_from_model_input_shapes(poly, models, tmp_path):
    out = tmp_path / "sub.onnx"
    args = ["surgeon", "extract", models["dynamic"], "--inputs", "X:auto:auto", "--outputs", "Y:auto", "-o", out]
    assert poly(*args).exit_code == 0
    assert _dims(onnx.load(str(out)).graph.input[0]) == _dims(onnx.load(models["dynamic"]).graph.input[0])
    result = poly(*args, "--force-fallback-shape-inference", "--model-input-shapes", "X:[2,1,3,3]")
    assert result.exit_code == 0, result.output
    model = onnx.load(str(out))
    assert _dims(model.graph.input[0]) == [2, 1, 3, 3] and _dims(model.graph.output[0]) == [2, 1, 3, 3]
    assert poly(*args, "--shape-inference", "--no-onnxruntime-shape-inference").exit_code == 0
    bad = poly(*args, "--model-input-shapes", "X:2,1")
    assert bad.exit_code == 2 and "--model-input-shapes" in bad.output


# ---- value parsing and the shape-inference group ------------------------------------------------------


def test_attrs_and_byte_counts_parse_as_polygraphy_parses_them():
    import click

    from poly.cli.value_parsing import parse_attrs, parse_byte_count

    assert parse_attrs("--attrs", ["axis=1", "alpha=1.0", "name='53'", "mode=constant", "axes=[0,1]",
                                   "scales=[0.5,2.0]", "names=[a,b]", "eps=1e-5"]) == {
        "axis": 1, "alpha": 1.0, "name": "53", "mode": "constant", "axes": [0, 1], "scales": [0.5, 2.0],
        "names": ["a", "b"], "eps": 1e-5}
    assert isinstance(parse_attrs("--attrs", ["alpha=1.0"])["alpha"], float)
    assert parse_byte_count("--x", "16M") == 16 << 20 and parse_byte_count("--x", "2k") == 2048
    assert parse_byte_count("--x", "1e3") == 1000 and parse_byte_count("--x", None) is None
    for bad in ("M", "-1", "lots"):
        with pytest.raises(click.BadParameter, match="number of bytes") as caught:
            parse_byte_count("--fold-size-threshold", bad)
        assert caught.value.param_hint == "'--fold-size-threshold'"


def test_shape_inference_group_defaults_and_conflicts():
    import click

    from poly.cli.args.onnx.shape_inference import OnnxInferShapesArgs

    def parse(*args, default=True):
        @click.command()
        @OnnxInferShapesArgs.options(default=default)
        def command(**kwargs):
            return OnnxInferShapesArgs.from_kwargs(kwargs, default=default)

        return command.main(list(args), standalone_mode=False)

    assert parse() == OnnxInferShapesArgs(shape_inference=True, force_fallback=False, allow_onnxruntime=True)
    assert parse("--no-shape-inference").shape_inference is False
    assert parse(default=False).shape_inference is False and parse("--shape-inference", default=False).shape_inference
    forced = parse("--force-fallback-shape-inference", "--no-onnxruntime-shape-inference")
    assert forced == OnnxInferShapesArgs(shape_inference=False, force_fallback=True, allow_onnxruntime=False)
    with pytest.raises(click.UsageError, match="--shape-inference and --force-fallback"):
        parse("--shape-inference", "--force-fallback-shape-inference", default=False)
