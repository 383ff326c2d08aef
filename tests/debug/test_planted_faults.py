"""The planted-fault fixtures (tests/fixtures/planted_faults.py) do what they promise on real
architectures: every tensor computed before the planted node is unchanged, and the planted
node's output differs (NaN for plant_nan, from finite inputs). ONNX-Runtime runs the original and
the planted model with every node output marked, optimizations off."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from fixtures import planted_faults as pf

TOL = {"rtol": 1e-6, "atol": 1e-6}


def run_all(model, feeds):
    """Every named node output of `model` on `feeds`."""
    marked = pf.mark_all_outputs(model)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(marked.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds), strict=True))


def relative_error(got, ref):
    return float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-12))


def assert_unchanged_before(planted, node_name, ref, got, renamed=None):
    """Every output of the nodes before `node_name` (in graph order) equals the original's."""
    renamed = renamed or {}
    names = [n.name for n in planted.graph.node]
    assert node_name in names
    compared = 0
    for node in planted.graph.node[: names.index(node_name)]:
        for out in node.output:
            original = renamed.get(out, out)
            if original in ref:
                np.testing.assert_allclose(got[out], ref[original], **TOL, err_msg=f"{out} ({node.name})")
                compared += 1
    return compared


@pytest.fixture(scope="module")
def squeezenet():
    model = pf.light_model("squeezenet")
    feeds = pf.random_inputs(model, seed=0)
    return model, feeds, run_all(model, feeds)


def _node(model, name):
    return next(n for n in model.graph.node if n.name == name)


def test_light_model_names_nodes_and_depends_on_its_input(squeezenet):
    model, feeds, ref = squeezenet
    names = [n.name for n in model.graph.node]
    assert all(names) and len(set(names)) == len(names)
    assert "ConstantOfShape" not in {n.op_type for n in model.graph.node}
    (out,) = [o.name for o in model.graph.output]
    other = run_all(model, pf.random_inputs(model, seed=1))
    assert np.all(np.isfinite(ref[out])) and relative_error(other[out], ref[out]) > 1e-3
    assert list(feeds) == ["data_0"] and feeds["data_0"].shape == (1, 3, 224, 224)
    assert feeds["data_0"].dtype == np.float32
    original = pf.light_model("squeezenet", weights="original")
    assert sum(n.op_type == "ConstantOfShape" for n in original.graph.node) == 39
    with pytest.raises(ValueError, match="no light model 'nope'"):
        pf.light_model("nope")


def test_perturb_weight(squeezenet):
    model, feeds, ref = squeezenet
    planted, name = pf.perturb_weight(model, seed=0)
    weighted = pf.weighted_nodes(model)
    assert name == weighted[len(weighted) // 2] and name not in (weighted[0], weighted[-1])
    got = run_all(planted, feeds)
    assert assert_unchanged_before(planted, name, ref, got) > 10
    out = _node(planted, name).output[0]
    assert relative_error(got[out], ref[out]) > 1e-2
    # Deterministic, and the original model is left alone.
    again, _ = pf.perturb_weight(model, seed=0)
    assert again.SerializeToString() == planted.SerializeToString()
    assert not any(t.name.endswith("_perturbed") for t in model.graph.initializer)


def test_perturb_weight_made_by_constant_of_shape():
    # The file's own weights come from ConstantOfShape nodes (IR version 3: initializers are
    # graph inputs too); the perturbed weight becomes an initializer of the planted node.
    model = pf.light_model("squeezenet", weights="original")
    feeds = pf.random_inputs(model, seed=0)
    assert list(feeds) == ["data_0"]
    planted, name = pf.perturb_weight(model, seed=3)
    ref, got = run_all(model, feeds), run_all(planted, feeds)
    assert assert_unchanged_before(planted, name, ref, got) > 10
    out = _node(planted, name).output[0]
    assert relative_error(got[out], ref[out]) > 1e-2


def test_change_attribute_dilates_a_conv_without_changing_shapes(squeezenet):
    model, feeds, ref = squeezenet
    planted, name = pf.change_attribute(model)
    node = _node(planted, name)
    assert node.op_type == "Conv" and any(a.name == "dilations" for a in node.attribute)
    got = run_all(planted, feeds)
    assert_unchanged_before(planted, name, ref, got)
    out = node.output[0]
    assert got[out].shape == ref[out].shape and relative_error(got[out], ref[out]) > 1e-2
    (final,) = [o.name for o in model.graph.output]
    assert got[final].shape == ref[final].shape


def test_plant_nan(squeezenet):
    model, feeds, ref = squeezenet
    planted, name = pf.plant_nan(model)
    sqrt = _node(planted, name)
    assert sqrt.op_type == "Sqrt"
    got = run_all(planted, feeds)
    out = sqrt.output[0]  # the original tensor's name, now written by the Sqrt
    assert out in ref and np.all(np.isfinite(ref[out]))
    assert np.all(np.isnan(got[out])) and np.all(np.isfinite(got[sqrt.input[0]]))
    assert assert_unchanged_before(planted, name, ref, got, renamed={f"{out}_pre_nan": out}) > 10
    (final,) = [o.name for o in model.graph.output]
    assert np.all(np.isnan(got[final]))


def test_two_faults(squeezenet):
    model, feeds, ref = squeezenet
    planted, first, biggest = pf.two_faults(model)
    names = [n.name for n in planted.graph.node]
    assert names.index(first) < names.index(biggest)
    got = run_all(planted, feeds)
    assert_unchanged_before(planted, first, ref, got)
    first_out = _node(planted, first).output[0]
    small = relative_error(got[first_out], ref[first_out])
    assert 1e-5 < small < 1e-2
    # The later fault is the one most to blame: against the model with the early fault alone,
    # nothing changes before it and its own output changes by far more than the early fault did.
    early_only = pf.scale_weight(model, first, 1.0 + 1e-3)
    base = run_all(early_only, feeds)
    assert_unchanged_before(planted, biggest, base, got)
    big_out = _node(planted, biggest).output[0]
    assert relative_error(got[big_out], base[big_out]) > 100 * small


@pytest.mark.slow  # ResNet-50 with 25 M random weights, run twice
def test_change_attribute_batch_normalization_in_resnet50():
    model = pf.light_model("resnet50")
    feeds = pf.random_inputs(model, seed=0)
    planted, name = pf.change_attribute(model)
    node = _node(planted, name)
    assert node.op_type == "BatchNormalization"
    ref, got = run_all(model, feeds), run_all(planted, feeds)
    assert assert_unchanged_before(planted, name, ref, got) > 10
    out = node.output[0]
    assert relative_error(got[out], ref[out]) > 1e-2


def test_errors_are_one_line(squeezenet):
    model, _, _ = squeezenet
    relu = next(n.name for n in model.graph.node if n.op_type == "Relu")
    maxpool = next(n.name for n in model.graph.node if n.op_type == "MaxPool")
    with pytest.raises(ValueError, match="not a Conv/Gemm/MatMul with a constant weight"):
        pf.perturb_weight(model, relu)
    with pytest.raises(ValueError, match="without changing shapes"):
        pf.change_attribute(model, maxpool)
    with pytest.raises(ValueError, match="no node named 'nope'"):
        pf.plant_nan(model, "nope")
    with pytest.raises(ValueError, match="is a graph output"):
        pf.plant_nan(model, model.graph.node[-1].name)
