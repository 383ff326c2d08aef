"""`poly inspect sparsity` and poly.onnx.surgery.sparsity: which Conv/MatMul/Gemm weights follow the 2:4
structured sparsity pattern along the op's reduction axis, on a model built to have each case."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from fixtures.cli_helpers import POLYGRAPHY, run_cli, run_poly
from onnx import TensorProto, helper, numpy_helper

from poly.onnx.surgery.sparsity import check_sparsity, find_sparsity_candidates, is_2_4_sparse


def _sparse_along(shape, axis, seed):
    """Random nonzero values with 2 of every 4 consecutive values along ``axis`` set to zero."""
    rng = np.random.default_rng(seed)
    array = rng.uniform(0.5, 1.5, size=shape).astype(np.float32)
    moved = np.moveaxis(array, axis, -1)  # a view: writes go to ``array``
    groups = moved.reshape(moved.shape[:-1] + (shape[axis] // 4, 4))
    for index in np.ndindex(groups.shape[:-1]):
        zeros = rng.choice(4, size=2, replace=False)
        groups[index + (zeros,)] = 0
    moved[...] = groups.reshape(moved.shape)
    return array


def _model():
    """x[2,8] -> MatMul(W_mm sparse on axis 0) -> Gemm(transB, W_gemm sparse on axis 1)
    -> MatMul(Transpose(W_t)) -> MatMul(W_dense) -> MatMul(DequantizeLinear(W_int8)) -> MatMul(W_odd)
    and a Conv whose weight is sparse along its output channels only (axis 0, not 1)."""
    w_mm = _sparse_along((8, 8), 0, 1)
    w_gemm = _sparse_along((8, 8), 1, 2)  # transB: the reduction axis is 1
    w_t_src = _sparse_along((8, 8), 1, 3)  # Transpose(perm=[1, 0]) makes axis 0 of the result axis 1 here
    w_dense = np.full((8, 8), 0.5, np.float32)
    w_int8 = np.ones((8, 8), np.int8)
    w_odd = np.zeros((8, 6), np.float32)
    w_odd_in = np.zeros((6, 8), np.float32)  # reduction axis of length 6: not a multiple of 4
    conv_w = _sparse_along((4, 8, 1, 1), 0, 4)
    inits = [numpy_helper.from_array(a, n) for a, n in (
        (w_mm, "W_mm"), (w_gemm, "W_gemm"), (w_t_src, "W_t"), (w_dense, "W_dense"), (w_int8, "W_int8"),
        (w_odd, "W_to6"), (w_odd_in, "W_odd"), (conv_w, "W_conv"),
        (np.array(0.1, np.float32), "scale"), (np.array(0, np.int8), "zero"))]
    nodes = [
        helper.make_node("MatMul", ["x", "W_mm"], ["a"], name="mm"),
        helper.make_node("Gemm", ["a", "W_gemm"], ["b"], name="gemm", transB=1),
        helper.make_node("Transpose", ["W_t"], ["W_t_T"], name="tr", perm=[1, 0]),
        helper.make_node("MatMul", ["b", "W_t_T"], ["c"], name="mm_t"),
        helper.make_node("MatMul", ["c", "W_dense"], ["d"], name="mm_dense"),
        helper.make_node("DequantizeLinear", ["W_int8", "scale", "zero"], ["W_dq"], name="dq"),
        helper.make_node("MatMul", ["d", "W_dq"], ["e"], name="mm_dq"),
        helper.make_node("MatMul", ["e", "W_to6"], ["f"], name="mm_to6"),
        helper.make_node("MatMul", ["f", "W_odd"], ["y"], name="mm_odd"),
        helper.make_node("Conv", ["img", "W_conv"], ["z"], name="conv"),
    ]
    graph = helper.make_graph(
        nodes, "sparsity",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8]),
         helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 8, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4, 2, 2])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("sparsity") / "model.onnx"
    onnx.save(_model(), str(path))
    return path


def test_is_2_4_sparse_checks_runs_of_four_along_the_axis():
    array = _sparse_along((4, 8, 3), 1, 0)
    assert is_2_4_sparse(array, 1)
    assert not is_2_4_sparse(array, 0)  # along axis 0 the zeros fall anywhere
    one_zero = np.ones((4,), np.float32)
    one_zero[2] = 0
    assert not is_2_4_sparse(one_zero, 0)
    with pytest.raises(ValueError, match="not a multiple of 4"):
        is_2_4_sparse(np.zeros((6,)), 0)


def test_candidates_follow_the_reduction_axis_through_transpose_and_dequantize():
    candidates = {c.name: c for c in find_sparsity_candidates(_model())}
    assert {n: c.axis for n, c in candidates.items()} == {
        "W_mm": 0, "W_gemm": 1, "W_t": 1, "W_dense": 0, "W_int8": 0, "W_to6": 0, "W_odd": 0, "W_conv": 1}
    assert "int8" in candidates["W_int8"].skipped
    assert "not a multiple of 4" in candidates["W_odd"].skipped
    assert candidates["W_to6"].skipped is None  # its reduction axis (0) has length 8


def test_check_sparsity_verdicts():
    verdicts = {c.name: c.sparse for c in check_sparsity(_model())}
    assert verdicts == {"W_mm": True, "W_gemm": True, "W_t": True, "W_dense": False, "W_to6": True,
                        "W_int8": None, "W_odd": None, "W_conv": False}


def _verdict_lines(text):
    return sorted(re.findall(r"Found (?:non-)?sparse tensor: \w+", text))


def test_cli_reports_each_weight(model_path):
    proc = run_poly("inspect", "sparsity", model_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert _verdict_lines(out) == sorted([
        "Found sparse tensor: W_mm", "Found sparse tensor: W_gemm", "Found sparse tensor: W_t",
        "Found sparse tensor: W_to6", "Found non-sparse tensor: W_dense", "Found non-sparse tensor: W_conv"])
    assert "Found: 6 weight tensor(s) eligible for pruning." in out
    assert "Skipping tensor: W_int8" in out and "Skipping tensor: W_odd" in out


def test_cli_agrees_with_polygraphy(model_path):
    theirs = run_cli(POLYGRAPHY, "inspect", "sparsity", model_path)
    if theirs.returncode != 0:
        pytest.skip(f"polygraphy inspect sparsity did not run here: {theirs.stderr.strip().splitlines()[-1:]}")
    ours = run_poly("inspect", "sparsity", model_path)
    assert _verdict_lines(ours.stdout + ours.stderr) == _verdict_lines(theirs.stdout + theirs.stderr)


def test_cli_bad_model_is_one_line(tmp_path):
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00\x01 not onnx")
    proc = run_poly("inspect", "sparsity", junk)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 1 and len(lines) == 1 and "junk.onnx" in lines[0], proc.stderr
    proc = run_poly("inspect", "sparsity", tmp_path / "none.onnx")
    assert proc.returncode == 2 and "does not exist" in proc.stderr


@pytest.mark.parametrize("dtype", [TensorProto.FLOAT16, TensorProto.BFLOAT16])
def test_half_precision_weights_are_checked(dtype):
    sparse = _sparse_along((8, 4), 0, 5)
    dense = np.full((8, 4), 0.5, np.float32)
    weights = [helper.make_tensor(name, dtype, [8, 4], [float(v) for v in a.flatten()])
               for name, a in (("W_sparse", sparse), ("W_dense", dense))]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W_sparse"], ["a"]), helper.make_node("MatMul", ["x", "W_dense"], ["b"])],
        "half", [helper.make_tensor_value_info("x", dtype, [1, 8])],
        [helper.make_tensor_value_info("a", dtype, [1, 4]), helper.make_tensor_value_info("b", dtype, [1, 4])],
        initializer=weights)
    verdicts = {c.name: c.sparse for c in check_sparsity(helper.make_model(graph))}
    assert verdicts == {"W_sparse": True, "W_dense": False}
