"""
2:4 structured sparsity of an ONNX model's weights, for `poly inspect sparsity` and `poly surgeon
prune`. The weights considered are the initializers that feed the reduction axis of a ``Conv``
(its weight's input-channel axis), ``MatMul`` or ``Gemm``, directly or through ``Cast``,
quantize/dequantize (TensorRT's FP8 variants included) and ``Transpose`` (whose ``perm`` moves
the axis): ``find_sparsity_candidates`` lists them, with the reason where one cannot be sparse
(a data type other than float32, float16 or bfloat16, an axis length that is no multiple of 4).
A weight follows the pattern when every group of four consecutive values along that axis holds
at least two zeros (``is_2_4_sparse``, ``check_sparsity``); pruning zeroes the two values of
smallest magnitude in each group (``prune_2_4``). ``SparsityPruner`` is Polygraphy's class and
``PruneSparsity`` the loader form.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import Any

import numpy as np

from poly.core import G_LOGGER
from poly.core.func import funcify
from poly.core.optional_import import lazy_import
from poly.onnx.model.base import BaseLoadOnnxCopy
from poly.onnx.surgery.tensor_data import read_values, type_name, write_values

onnx = lazy_import("onnx")

__all__ = [
    "PruneInfo",
    "WeightSparsity",
    "find_sparsity_candidates",
    "check_sparsity",
    "SparsityPruner",
    "PruneSparsity",
    "prune_sparsity",
    "prune_2_4",
    "is_2_4_sparse",
]

PruneInfo = namedtuple("PruneInfo", ["name", "axis"])
"""An initializer to prune and the axis along which its groups of four run."""

GROUP = 4
"""Values per group; two of each are zero in a 2:4 sparse tensor."""

PASS_THROUGH_OPS = ("QuantizeLinear", "DequantizeLinear", "TRT_FP8QuantizeLinear", "TRT_FP8DequantizeLinear", "Cast")
"""Operators whose first input keeps the layout of their output: the search goes on through them."""
STOP_OPS = ("LayerNormalization", "Reshape", "Concat", "Slice", "Shape", "Unsqueeze", "Gather", "Mul", "Add")
"""Operators that end the search silently (their input is no weight with a known sparse axis)."""

_FLOAT_TYPES = ("FLOAT", "FLOAT16", "BFLOAT16")


@dataclass
class WeightSparsity:
    """One candidate weight of a Conv, MatMul or Gemm."""

    name: str
    """The initializer's name."""
    axis: int
    """The axis along which groups of 4 values run (the reduction axis of the consuming op)."""
    sparse: bool | None = None
    """Whether the weight follows the 2:4 pattern; None where it was not checked."""
    skipped: str | None = None
    """Why the weight cannot be sparse (data type, axis length), or None."""


def _grouped(values: Any, axis: Any) -> Any:
    """``values`` with ``axis`` moved last and split into groups of four: shape (..., n / 4, 4)."""
    length = values.shape[axis]
    if length % GROUP:
        raise ValueError(f"axis {axis} has length {length}, which is not a multiple of 4")
    moved = np.moveaxis(values, axis, -1)
    return moved.reshape(*moved.shape[:-1], length // GROUP, GROUP)


def prune_2_4(values: Any, axis: Any) -> Any:
    """
    Zeroes the two values of smallest magnitude in every group of four consecutive values along
    ``axis`` (the first of equal magnitudes goes first). ``values.shape[axis]`` must be a
    multiple of 4.

    Args:
        values (numpy.ndarray): The weights.
        axis (int): The axis the groups run along.

    Returns:
        numpy.ndarray: A pruned copy, of the same shape and data type.
    """
    groups = _grouped(np.array(values), axis)
    magnitudes = np.abs(groups.astype(np.float32) if groups.dtype.kind != "f" else groups)
    smallest = np.argsort(magnitudes, axis=-1, kind="stable")[..., :2]
    np.put_along_axis(groups, smallest, 0, axis=-1)
    moved = groups.reshape(*groups.shape[:-2], groups.shape[-2] * GROUP)
    return np.ascontiguousarray(np.moveaxis(moved, -1, axis))


def is_2_4_sparse(values: Any, axis: Any) -> bool:
    """Whether every group of four consecutive values along ``axis`` holds at least two zeros
    (``values.shape[axis]`` must be a multiple of 4)."""
    groups = _grouped(np.asarray(values), axis)
    return bool(np.all(np.count_nonzero(groups == 0, axis=-1) >= 2))


def _attribute(node: Any, name: Any, default: Any) -> Any:
    for attr in node.attribute:
        if attr.name == name:
            return onnx.helper.get_attribute_value(attr)
    return default


def _is_float(tensor: Any) -> bool:
    return tensor.data_type in {getattr(onnx.TensorProto, t) for t in _FLOAT_TYPES}


def _skip_reason(tensor: Any, axis: Any) -> str | None:
    """Why ``tensor`` cannot be 2:4 sparse along ``axis``, or None."""
    dims = list(tensor.dims)
    if not _is_float(tensor):
        return f"unsupported data type {type_name(tensor.data_type).lower()} (float32, float16 or bfloat16 only)"
    if axis >= len(dims):
        return f"it has no axis {axis} (shape {dims})"
    if dims[axis] % GROUP:
        return f"the length of axis {axis} ({dims[axis]} in {dims}) is not a multiple of 4"
    return None


def find_sparsity_candidates(model: Any) -> list[WeightSparsity]:
    """
    The initializers of ``model``'s main graph that feed the reduction axis of a Conv, MatMul or
    Gemm, in the order the graph first uses them, each with its axis (the axis of its last use,
    as Polygraphy records it) and ``skipped`` set where it cannot be sparse.

    Args:
        model (onnx.ModelProto): The model.

    Returns:
        List[WeightSparsity]
    """
    graph = model.graph
    initializers = {t.name: t for t in graph.initializer}
    producers = {out: node for node in graph.node for out in node.output}
    found: dict[str, WeightSparsity] = {}

    def follow(name: Any, axis: Any) -> None:
        seen = set()
        while name not in initializers:
            producer = producers.get(name)
            if producer is None or id(producer) in seen:
                return
            seen.add(id(producer))
            if producer.op_type in PASS_THROUGH_OPS:
                name = producer.input[0]
            elif producer.op_type == "Transpose":
                perm = list(_attribute(producer, "perm", []))
                if axis not in perm:
                    G_LOGGER.warning(f"Transpose node '{producer.name}' has no usable perm attribute; "
                                     f"not following tensor '{name}' further")
                    return
                name, axis = producer.input[0], perm.index(axis)
            else:
                if producer.op_type not in STOP_OPS:
                    G_LOGGER.verbose(f"Tensor '{name}' is produced by {producer.op_type} node '{producer.name}', "
                                     "which sparsity analysis does not look through")
                return
        found.setdefault(name, WeightSparsity(name, axis)).axis = axis

    for node in graph.node:
        if node.op_type == "Conv" and len(node.input) > 1:
            follow(node.input[1], 1)
        elif node.op_type == "MatMul" and len(node.input) > 1:
            follow(node.input[0], 1)
            follow(node.input[1], 0)
        elif node.op_type == "Gemm" and len(node.input) > 1:
            follow(node.input[0], 0 if _attribute(node, "transA", 0) else 1)
            follow(node.input[1], 1 if _attribute(node, "transB", 0) else 0)

    for candidate in found.values():
        candidate.skipped = _skip_reason(initializers[candidate.name], candidate.axis)
    return list(found.values())


def check_sparsity(model: Any) -> list[WeightSparsity]:
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
        candidate.sparse = is_2_4_sparse(read_values(initializers[candidate.name]), candidate.axis)
        if candidate.sparse:
            G_LOGGER.info(f"Found sparse tensor: {candidate.name}")
        else:
            G_LOGGER.warning(f"Found non-sparse tensor: {candidate.name}")
    G_LOGGER.finish(f"Finished checking {len(eligible)} tensors.")
    return candidates


class SparsityPruner:
    """
    Finds the weights of a model that TensorRT can run with 2:4 structured sparsity, and checks
    or prunes them (Polygraphy's ``polygraphy.tools.sparse.SparsityPruner``).
    """

    def __init__(self, model: Any) -> None:
        """
        Args:
            model (onnx.ModelProto): The model; ``prune`` changes its initializers in place.
        """
        self.model = model
        self.initializers = {t.name: t for t in model.graph.initializer}
        self.sparse_tensors: set[Any] = set()
        """Names of the checked weights found 2:4 sparse (filled by ``check``)."""

    def candidates(self, weights_skip: Any = ()) -> Any:
        """
        The weights eligible for 2:4 sparsity (``find_sparsity_candidates`` less the skipped
        ones), in the order the graph first uses them.

        Args:
            weights_skip (Iterable[str]): Names of initializers to leave out.

        Returns:
            List[PruneInfo]
        """
        eligible = []
        for candidate in find_sparsity_candidates(self.model):
            tensor = self.initializers[candidate.name]
            if candidate.name in weights_skip:
                G_LOGGER.verbose(f"Skipping tensor {candidate.name}: it was marked to skip pruning")
            elif not _is_float(tensor):
                # As Polygraphy: a weight of another data type is worth a warning, an odd shape is not.
                G_LOGGER.warning(f"Skipping tensor {candidate.name}: unsupported data type {type_name(tensor.data_type)}")
            elif candidate.skipped:
                G_LOGGER.verbose(f"Skipping tensor {candidate.name}: {candidate.skipped}")
            else:
                eligible.append(PruneInfo(candidate.name, candidate.axis))
        G_LOGGER.info(f"Found: {len(eligible)} weight tensor(s) eligible for pruning.")
        return eligible

    def check(self) -> None:
        """Checks each eligible weight; the 2:4 sparse ones are added to ``sparse_tensors``."""
        for info in self.candidates():
            if is_2_4_sparse(read_values(self.initializers[info.name]), info.axis):
                G_LOGGER.info(f"Found sparse tensor: {info.name}")
                self.sparse_tensors.add(info.name)
            else:
                G_LOGGER.verbose(f"Found non-sparse tensor: {info.name}")

    def prune(self, weights_skip: Any = ()) -> Any:
        """
        Prunes each eligible weight (``prune_2_4``) in place.

        Args:
            weights_skip (Iterable[str]): Names of initializers to leave untouched.

        Returns:
            onnx.ModelProto: The model.
        """
        infos = self.candidates(set(weights_skip))
        G_LOGGER.start(f"Pruning {len(infos)} tensors.")
        for info in infos:
            tensor = self.initializers[info.name]
            write_values(tensor, prune_2_4(read_values(tensor), info.axis))
        G_LOGGER.finish(f"Finished pruning {len(infos)} tensors.")
        return self.model


class PruneSparsity(BaseLoadOnnxCopy):
    """
    Functor that prunes the weights of an ONNX model to the 2:4 structured sparsity pattern,
    without regard for accuracy: for functional tests of sparsity only.
    """

    def __init__(self, model: Any, weights_skip: Any = None, copy: Any = None) -> None:
        """
        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    An ONNX model or a callable that returns one.
            weights_skip (Sequence[str]): Names of initializers to leave untouched.
            copy (bool): Whether to work on a copy of the model. Defaults to True.
        """
        super().__init__(model, copy)
        self.weights_skip = set(weights_skip or ())

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The model with its eligible weights pruned.
        """
        return SparsityPruner(self.load()).prune(self.weights_skip)


prune_sparsity = funcify(PruneSparsity)
