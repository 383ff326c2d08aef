"""
2:4 structured sparsity of an ONNX model's weights, as `poly inspect sparsity` reports it.

The weights considered are the initializers that feed the reduction axis of a Conv (its weight's
input-channel axis), MatMul or Gemm, directly or through Cast, QuantizeLinear/DequantizeLinear
(and TensorRT's FP8 variants) and Transpose (whose ``perm`` moves the axis). A weight follows the
pattern when every run of 4 consecutive values along that axis holds at least 2 zeros, which is
what TensorRT's sparse kernels need. Only float32, float16 and bfloat16 weights whose axis length
is a multiple of 4 can be sparse; the others are skipped with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from poly.core.logger import G_LOGGER
from poly.core.optional_import import lazy_import

onnx = lazy_import("onnx")
numpy_helper = lazy_import("onnx.numpy_helper", install="onnx")

__all__ = ["WeightSparsity", "find_sparsity_candidates", "check_sparsity", "is_2_4_sparse"]

# Ops whose output keeps the layout of their first input: the weight is looked for behind them.
_LAYOUT_KEEPING_OPS = ("QuantizeLinear", "DequantizeLinear", "TRT_FP8QuantizeLinear", "TRT_FP8DequantizeLinear", "Cast")
# Ops behind which the weight is not followed (they change or combine the data).
_STOP_OPS = ("LayerNormalization", "Reshape", "Concat", "Slice", "Shape", "Unsqueeze", "Gather", "Mul", "Add")


@dataclass
class WeightSparsity:
    """One candidate weight of a Conv, MatMul or Gemm."""

    name: str
    """The initializer's name."""
    axis: int
    """The axis along which runs of 4 values are checked (the reduction axis of the consuming op)."""
    sparse: bool | None = None
    """Whether the weight follows the 2:4 pattern; None where it was skipped."""
    skipped: str | None = None
    """Why the weight cannot be checked (data type, axis length), or None."""


def is_2_4_sparse(array, axis: int) -> bool:
    """Whether every run of 4 consecutive values of ``array`` along ``axis`` holds at least 2 zeros
    (the axis length must be a multiple of 4)."""
    array = np.asarray(array)
    length = array.shape[axis]
    if length % 4:
        raise ValueError(f"axis {axis} has length {length}, which is not a multiple of 4")
    moved = np.moveaxis(array, axis, -1)
    groups = moved.reshape(moved.shape[:-1] + (length // 4, 4))
    return bool(np.all(np.count_nonzero(groups == 0, axis=-1) >= 2))


def _attribute(node, name, default):
    for attr in node.attribute:
        if attr.name == name:
            return onnx.helper.get_attribute_value(attr)
    return default


def find_sparsity_candidates(model) -> list[WeightSparsity]:
    """The initializers of ``model``'s main graph that feed the reduction axis of a Conv, MatMul or
    Gemm, in node order, each with its axis (``skipped`` set where it cannot be sparse)."""
    graph = model.graph
    initializers = {t.name: t for t in graph.initializer}
    producers = {out: node for node in graph.node for out in node.output}
    found: dict[str, WeightSparsity] = {}

    def follow(name, axis):
        seen = set()
        while name not in initializers:
            producer = producers.get(name)
            if producer is None or id(producer) in seen:
                return
            seen.add(id(producer))
            if producer.op_type in _LAYOUT_KEEPING_OPS:
                name = producer.input[0]
            elif producer.op_type == "Transpose":
                perm = list(_attribute(producer, "perm", []))
                if axis not in perm:
                    G_LOGGER.warning(f"Transpose node '{producer.name}' has no usable perm attribute; "
                                     f"not following tensor '{name}' further")
                    return
                name, axis = producer.input[0], perm.index(axis)
            else:
                if producer.op_type not in _STOP_OPS:
                    G_LOGGER.verbose(f"Tensor '{name}' is produced by {producer.op_type} node '{producer.name}', "
                                     "which sparsity analysis does not look through")
                return
        found.setdefault(name, WeightSparsity(name, axis))

    for node in graph.node:
        if node.op_type == "Conv" and len(node.input) > 1:
            follow(node.input[1], 1)
        elif node.op_type == "MatMul" and len(node.input) > 1:
            follow(node.input[0], 1)
            follow(node.input[1], 0)
        elif node.op_type == "Gemm" and len(node.input) > 1:
            follow(node.input[0], 0 if _attribute(node, "transA", 0) else 1)
            follow(node.input[1], 1 if _attribute(node, "transB", 0) else 0)

    float_types = {onnx.TensorProto.FLOAT: "float32", onnx.TensorProto.FLOAT16: "float16",
                   onnx.TensorProto.BFLOAT16: "bfloat16"}
    for candidate in found.values():
        tensor = initializers[candidate.name]
        dims = list(tensor.dims)
        if tensor.data_type not in float_types:
            type_name = onnx.helper.tensor_dtype_to_string(tensor.data_type).replace("TensorProto.", "").lower()
            candidate.skipped = f"unsupported data type {type_name} (float32, float16 or bfloat16 only)"
        elif candidate.axis >= len(dims):
            candidate.skipped = f"it has no axis {candidate.axis} (shape {dims})"
        elif dims[candidate.axis] % 4:
            candidate.skipped = (f"the length of axis {candidate.axis} ({dims[candidate.axis]} in {dims}) "
                                 "is not a multiple of 4")
    return list(found.values())


def check_sparsity(model) -> list[WeightSparsity]:
    """
    Checks which weights of ``model`` (an ``onnx.ModelProto`` with its weights loaded) follow the
    2:4 structured sparsity pattern, logging each verdict as `poly inspect sparsity` shows it.

    Returns:
        List[WeightSparsity]: every candidate, ``sparse`` set for the ones checked.
    """
    candidates = find_sparsity_candidates(model)
    for candidate in candidates:
        if candidate.skipped:
            G_LOGGER.warning(f"Skipping tensor: {candidate.name}: {candidate.skipped}")
    eligible = [c for c in candidates if not c.skipped]
    G_LOGGER.info(f"Found: {len(eligible)} weight tensor(s) eligible for pruning.")
    initializers = {t.name: t for t in model.graph.initializer}
    G_LOGGER.start(f"Checking the sparsity pattern of {len(eligible)} tensors.")
    for candidate in eligible:
        array = numpy_helper.to_array(initializers[candidate.name])
        candidate.sparse = is_2_4_sparse(array, candidate.axis)
        if candidate.sparse:
            G_LOGGER.info(f"Found sparse tensor: {candidate.name}")
        else:
            G_LOGGER.warning(f"Found non-sparse tensor: {candidate.name}")
    G_LOGGER.finish(f"Finished checking {len(eligible)} tensors.")
    return candidates
