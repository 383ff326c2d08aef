"""
Shared plumbing of the ONNX loaders: resolving "a model or a callable returning one", copying
a model, and the base class of loaders that may work on a copy.
"""

import os
from collections.abc import Iterator
from typing import Any

from poly.core import G_LOGGER, BaseLoader
from poly.core.func import invoke_if_callable
from poly.core.optional_import import lazy_import

onnx = lazy_import("onnx")

__all__ = [
    "PROTOBUF_THRESHOLD",
    "BaseLoadOnnxCopy",
    "load_model",
    "copy_model",
    "model_size",
    "tensor_size",
    "iter_graphs",
]

PROTOBUF_THRESHOLD = 2_000_000_000
"""Serialized size (bytes) above which a model is handled through a file with external data:
protobuf cannot serialize messages of 2 GiB or more, and this leaves some headroom."""


def load_model(model: Any, what: str = "model") -> Any:
    """
    Resolves a ``ModelProto`` or a callable that returns one.

    Args:
        model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]): The model or its loader.
        what (str): What is being loaded, for the error message.

    Returns:
        onnx.ModelProto
    """
    resolved = invoke_if_callable(model)
    if not isinstance(resolved, onnx.ModelProto):
        G_LOGGER.critical(
            f"Expected an ONNX ModelProto (or a loader returning one) as the {what}, "
            f"got: {type(resolved).__name__}"
        )
    return resolved


def copy_model(model: Any) -> Any:
    """Returns a deep copy of an ONNX ``ModelProto``."""
    new_model = onnx.ModelProto()
    new_model.CopyFrom(model)
    return new_model


def tensor_size(tensor: Any) -> Any:
    """Serialized size of a ``TensorProto`` in bytes, estimated from its shape past 2 GiB."""
    try:
        return tensor.ByteSize()
    except Exception:  # protobuf refuses to measure messages of 2 GiB or more
        count = 1
        for dim in tensor.dims:
            count *= dim
        return count * onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize


def model_size(model: Any) -> Any:
    """
    Serialized size of a ``ModelProto`` in bytes (tensors already in external files not counted).

    Protobuf's ``ByteSize()`` raises for models of 2 GiB or more; their size is then the sum of
    their initializers' sizes, which is what matters when comparing with that limit.
    """
    try:
        return model.ByteSize()
    except Exception:
        return sum(tensor_size(t) for graph in iter_graphs(model.graph) for t in graph.initializer)


def iter_graphs(graph: Any) -> Iterator[Any]:
    """Yields ``graph`` and, depth first, every subgraph of its nodes (If/Loop/Scan bodies)."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from iter_graphs(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for subgraph in attr.graphs:
                    yield from iter_graphs(subgraph)


def describe_source(path: Any) -> str:
    """A short, quoted description of a file for error messages."""
    return f"'{os.fspath(path)}'"


class BaseLoadOnnxCopy(BaseLoader):
    """
    Base class of loaders that modify an ONNX model and may first make a copy of it.
    """

    def __init__(self, model: Any, copy: Any = None) -> None:
        """
        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    An ONNX model or a callable that returns one.
            copy (bool):
                    Whether to work on a copy of the model, leaving the given one untouched.
                    With ``copy=False`` the model is modified in place and returned.
                    Defaults to True.
        """
        self._model = model
        self.copy = True if copy is None else bool(copy)

    def load(self) -> Any:
        """Returns the model to work on: the resolved model, or a copy of it."""
        model = load_model(self._model)
        return copy_model(model) if self.copy else model
