"""
2:4 structured sparsity of an ONNX model's weights: ``SparsityPruner`` finds the initializers
that feed the sparse-capable inputs of ``MatMul``, ``Gemm`` and ``Conv`` (through ``Cast``,
quantize/dequantize and ``Transpose`` nodes) with the axis TensorRT reduces over, and either
checks that every group of four values along that axis holds at least two zeros or zeroes the
two values of smallest magnitude in each group. ``PruneSparsity`` is the loader form.
"""

from collections import namedtuple

import numpy as np

from poly.core.func import funcify
from poly.core.logger import G_LOGGER
from poly.core.optional_import import lazy_import
from poly.onnx.base import BaseLoadOnnxCopy
from poly.onnx.surgery.tensor_data import read_values, type_name, write_values

onnx = lazy_import("onnx")

__all__ = ["PruneInfo", "SparsityPruner", "PruneSparsity", "prune_sparsity", "prune_2_4", "is_2_4_sparse"]

PruneInfo = namedtuple("PruneInfo", ["name", "axis"])
"""An initializer to prune and the axis along which its groups of four run."""

GROUP = 4
"""Values per group; two of each are zero in a 2:4 sparse tensor."""

PASS_THROUGH_OPS = ("QuantizeLinear", "DequantizeLinear", "TRT_FP8QuantizeLinear", "TRT_FP8DequantizeLinear", "Cast")
"""Operators whose first input keeps the layout of their output: the search goes on through them."""
STOP_OPS = ("LayerNormalization", "Reshape", "Concat", "Slice", "Shape", "Unsqueeze", "Gather", "Mul", "Add")
"""Operators that end the search silently (their input is no weight with a known sparse axis)."""

_FLOAT_TYPES = ("FLOAT", "FLOAT16", "BFLOAT16")


def _grouped(values, axis):
    """``values`` with ``axis`` moved last and split into groups of four: shape (..., n / 4, 4)."""
    moved = np.moveaxis(values, axis, -1)
    return moved.reshape(*moved.shape[:-1], moved.shape[-1] // GROUP, GROUP)


def prune_2_4(values, axis):
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


def is_2_4_sparse(values, axis):
    """Whether every group of four consecutive values along ``axis`` holds at least two zeros."""
    groups = _grouped(np.asarray(values), axis)
    return bool(np.all(np.count_nonzero(groups == 0, axis=-1) >= 2))


class SparsityPruner:
    """
    Finds the weights of a model that TensorRT can run with 2:4 structured sparsity, and checks
    or prunes them (Polygraphy's ``polygraphy.tools.sparse.SparsityPruner``).
    """

    def __init__(self, model):
        """
        Args:
            model (onnx.ModelProto): The model; ``prune`` changes its initializers in place.
        """
        self.model = model
        self.initializers = {t.name: t for t in model.graph.initializer}
        self.producers = {name: node for node in model.graph.node for name in node.output}
        self.sparse_tensors = set()
        """Names of the checked weights found 2:4 sparse (filled by ``check``)."""
        self._candidates = {}

    def _track(self, name, axis):
        if name in self.initializers:
            self._candidates[name] = PruneInfo(name, axis)
            return
        producer = self.producers.get(name)
        if producer is None:
            return
        if producer.op_type in PASS_THROUGH_OPS:
            self._track(producer.input[0], axis)
        elif producer.op_type == "Transpose":
            perm = next((list(a.ints) for a in producer.attribute if a.name == "perm"), None)
            if perm is None or axis >= len(perm):
                G_LOGGER.warning(f"Transpose node {producer.name!r} has no usable 'perm'; not following it to a weight")
                return
            self._track(producer.input[0], perm.index(axis))
        elif producer.op_type not in STOP_OPS:
            G_LOGGER.verbose(f"({name}) is produced by {producer.name!r} of type {producer.op_type}, "
                             "which sparsity analysis does not follow")

    def _visit(self, node):
        inputs = list(node.input)
        if node.op_type == "Conv" and len(inputs) > 1:
            self._track(inputs[1], 1)
        elif node.op_type == "MatMul" and len(inputs) > 1:
            self._track(inputs[0], 1)
            self._track(inputs[1], 0)
        elif node.op_type == "Gemm" and len(inputs) > 1:
            attrs = {a.name: a.i for a in node.attribute}
            self._track(inputs[0], 0 if attrs.get("transA", 0) else 1)
            self._track(inputs[1], 1 if attrs.get("transB", 0) else 0)

    def candidates(self, weights_skip=()):
        """
        The weights eligible for 2:4 sparsity: float, float16 or bfloat16 initializers whose
        group axis has a length that is a multiple of 4, in the order the graph first uses them.

        Args:
            weights_skip (Iterable[str]): Names of initializers to leave out.

        Returns:
            List[PruneInfo]
        """
        self._candidates = {}
        for node in self.model.graph.node:
            self._visit(node)
        float_types = {getattr(onnx.TensorProto, t) for t in _FLOAT_TYPES}
        eligible = []
        for info in self._candidates.values():
            tensor = self.initializers[info.name]
            if info.name in weights_skip:
                G_LOGGER.verbose(f"Skipping tensor {info.name}: it was marked to skip pruning")
            elif tensor.data_type not in float_types:
                G_LOGGER.warning(f"Skipping tensor {info.name}: unsupported data type {type_name(tensor.data_type)}")
            elif info.axis >= len(tensor.dims):
                G_LOGGER.verbose(f"Skipping tensor {info.name}: it has no axis {info.axis} (dims {list(tensor.dims)})")
            elif tensor.dims[info.axis] % GROUP:
                G_LOGGER.verbose(f"Skipping tensor {info.name}: the length of axis {info.axis} "
                                 f"({tensor.dims[info.axis]} in {list(tensor.dims)}) is not a multiple of 4")
            else:
                eligible.append(info)
        G_LOGGER.info(f"Found: {len(eligible)} weight tensor(s) eligible for pruning.")
        return eligible

    def check(self):
        """Checks each eligible weight; the 2:4 sparse ones are added to ``sparse_tensors``."""
        for info in self.candidates():
            if is_2_4_sparse(read_values(self.initializers[info.name]), info.axis):
                G_LOGGER.info(f"Found sparse tensor: {info.name}")
                self.sparse_tensors.add(info.name)
            else:
                G_LOGGER.verbose(f"Found non-sparse tensor: {info.name}")

    def prune(self, weights_skip=()):
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

    def __init__(self, model, weights_skip=None, copy=None):
        """
        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    An ONNX model or a callable that returns one.
            weights_skip (Sequence[str]): Names of initializers to leave untouched.
            copy (bool): Whether to work on a copy of the model. Defaults to True.
        """
        super().__init__(model, copy)
        self.weights_skip = set(weights_skip or ())

    def call_impl(self):
        """
        Returns:
            onnx.ModelProto: The model with its eligible weights pruned.
        """
        return SparsityPruner(self.load()).prune(self.weights_skip)


prune_sparsity = funcify(PruneSparsity)
