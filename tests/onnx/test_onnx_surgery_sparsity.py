"""poly.onnx.surgery.sparsity: `poly inspect sparsity` and `poly surgeon prune` share one weight
search, so the weights one reports are the weights the other prunes, on the same axes; a weight
used by two ops is checked on the axis of its last use, as Polygraphy's pruner records it."""

import numpy as np
import pytest
from fixtures import weight_models
from onnx import TensorProto, helper, numpy_helper

from poly.onnx.surgery.sparsity import (
    SparsityPruner,
    check_sparsity,
    find_sparsity_candidates,
    is_2_4_sparse,
    prune_2_4,
)


def _shared_weight_model():
    """W [8,8] feeds MatMul(x, W) (reduction axis 0), then MatMul(W, y) (reduction axis 1); its
    zeros make it 2:4 sparse along axis 1 only."""
    w = np.tile(np.array([0, 0, 1, 2], np.float32), (8, 2))  # rows [0 0 1 2 0 0 1 2]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["a"], name="first"),
         helper.make_node("MatMul", ["W", "y"], ["b"], name="second")],
        "shared",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 1])],
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 8]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [8, 1])],
        initializer=[numpy_helper.from_array(w, "W")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_inspect_and_prune_see_the_same_weights_and_axes():
    model = weight_models.weighted_net()
    eligible = [(c.name, c.axis) for c in find_sparsity_candidates(model) if not c.skipped]
    assert eligible == [tuple(info) for info in SparsityPruner(model).candidates()]
    pruned = SparsityPruner(weight_models.weighted_net()).prune()
    verdicts = {c.name: c.sparse for c in check_sparsity(pruned) if not c.skipped}
    assert verdicts == {name: True for name, _ in eligible}


def test_a_shared_weight_is_checked_on_the_axis_of_its_last_use():
    model = _shared_weight_model()
    assert [(c.name, c.axis) for c in find_sparsity_candidates(model)] == [("W", 1)]
    assert [c.sparse for c in check_sparsity(model)] == [True]
    pruner = SparsityPruner(model)
    pruner.check()
    assert pruner.sparse_tensors == {"W"}


def test_shared_weight_verdict_matches_polygraphy():
    sparse = pytest.importorskip("polygraphy.tools.sparse")
    theirs = sparse.SparsityPruner(_shared_weight_model())
    theirs.check()
    ours = {c.name for c in check_sparsity(_shared_weight_model()) if c.sparse}
    assert ours == theirs.sparse_tensors == {"W"}


def test_prune_2_4_rejects_an_axis_that_is_not_a_multiple_of_4():
    with pytest.raises(ValueError, match="axis 1 has length 6"):
        prune_2_4(np.ones((4, 6), np.float32), 1)
    assert is_2_4_sparse(prune_2_4(np.arange(1, 25, dtype=np.float32).reshape(4, 6), 0), 0)
