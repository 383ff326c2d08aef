"""
``ReconstructWeights``: fills the initializers of a weightless model (see ``StripWeights``)
with stand-in values of their recorded shapes and data types: normally distributed random
numbers, pruned to 2:4 sparsity where the initializer was recorded as sparse, or values the
caller gives (the original model's weights, for example). The weightless markers are removed.
"""

from typing import Any

import numpy as np

from poly.core import G_LOGGER
from poly.core.func import funcify
from poly.core.optional_import import lazy_import
from poly.onnx.model.base import BaseLoadOnnxCopy
from poly.onnx.surgery.sparsity import SparsityPruner
from poly.onnx.surgery.strip_weights import SPARSE_MARKER, WEIGHTLESS_MARKER, is_weightless
from poly.onnx.surgery.tensor_data import copy_data, type_name, write_values

onnx = lazy_import("onnx")

__all__ = ["ReconstructWeights", "reconstruct_weights", "random_tensor"]


def random_tensor(tensor: Any, rng: Any) -> None:
    """Fills ``tensor`` (an ``onnx.TensorProto``) in place with standard-normal values of its type."""
    write_values(tensor, rng.standard_normal(tuple(tensor.dims)))


def _given(tensor: Any, value: Any) -> None:
    """Fills ``tensor`` with a given NumPy array or ``TensorProto`` of the same shape (and type)."""
    if isinstance(value, onnx.TensorProto):
        if value.data_type != tensor.data_type or list(value.dims) != list(tensor.dims):
            G_LOGGER.critical(f"The given value of initializer {tensor.name} is {type_name(value.data_type)} "
                              f"{list(value.dims)}, but the model records {type_name(tensor.data_type)} "
                              f"{list(tensor.dims)}")
        if value.data_location == onnx.TensorProto.EXTERNAL:
            G_LOGGER.critical(f"The given value of initializer {tensor.name} is in an external file that was "
                              "not loaded")
        copy_data(value, tensor)
        return
    array = np.asarray(value)
    if list(array.shape) != list(tensor.dims):
        G_LOGGER.critical(f"The given value of initializer {tensor.name} has shape {list(array.shape)}, "
                          f"but the model records {list(tensor.dims)}")
    write_values(tensor, array)


class ReconstructWeights(BaseLoadOnnxCopy):
    """
    Functor that gives the stripped (``TRT_WEIGHTLESS``) initializers of an ONNX model values
    again: given ones, or random ones of their recorded shapes and data types.
    """

    def __init__(self, model: Any, values: Any = None, seed: Any = None, copy: Any = None) -> None:
        """
        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    A weightless ONNX model or a callable that returns one.
            values (Dict[str, Union[numpy.ndarray, onnx.TensorProto]]):
                    Values of stripped initializers, by name; the rest get random values.
                    Arrays are converted to the recorded data type; tensors must match it.
            seed (int): Seed of the random values. Defaults to an unpredictable one.
            copy (bool): Whether to work on a copy of the model. Defaults to True.
        """
        super().__init__(model, copy)
        self.values = dict(values or {})
        self.seed = seed

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The model with every stripped initializer filled.
        """
        model = self.load()
        rng = np.random.default_rng(self.seed)
        keep_dense = set()
        rebuilt, given = 0, 0
        for tensor in model.graph.initializer:
            if not is_weightless(tensor):
                keep_dense.add(tensor.name)
                continue
            sparsity = tensor.doc_string.partition("/")[2]
            if tensor.name in self.values:
                _given(tensor, self.values[tensor.name])
                keep_dense.add(tensor.name)
                given += 1
            else:
                G_LOGGER.verbose(f"Reconstructing weights for the {tensor.name} initializer")
                random_tensor(tensor, rng)
                if sparsity != SPARSE_MARKER:
                    keep_dense.add(tensor.name)
            tensor.ClearField("doc_string")
            rebuilt += 1
        unused = sorted(set(self.values) - {t.name for t in model.graph.initializer})
        if unused:
            G_LOGGER.warning(f"Values were given for tensors that are not initializers of the model: {unused}")
        SparsityPruner(model).prune(weights_skip=keep_dense)
        parts = [part for part in model.doc_string.split("-") if part != WEIGHTLESS_MARKER]
        model.doc_string = "-".join(parts)
        G_LOGGER.info(f"Finished reconstructing {rebuilt} weights ({given} from given values)")
        return model


reconstruct_weights = funcify(ReconstructWeights)
