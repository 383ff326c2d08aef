"""
``InsertNode``: inserts one node into an ONNX model between existing tensors. The new node
reads the given input tensors and produces the given output tensors, replacing whatever used to
produce them (nodes left without a use are removed). An output named like one of the inputs
gets a new tensor, so the node can be placed on an edge: consumers of the old tensor, and the
graph output of that name, read the new node's result instead.
"""

from typing import Any

from poly.core import G_LOGGER
from poly.core.func import funcify
from poly.core.optional_import import lazy_import
from poly.onnx.model.base import BaseLoadOnnxCopy
from poly.onnx.model.graph import export_graph

gs = lazy_import("onnx_graphsurgeon")

__all__ = ["InsertNode", "insert_node", "INSERTED_TENSOR_SUFFIX"]

INSERTED_TENSOR_SUFFIX = "_polygraphy_surgeon_insert_output"
"""Appended to a tensor's name when the inserted node reads it and writes its replacement
(Polygraphy's suffix, so that models edited by either tool get the same names)."""


def _replace(tensors: Any, old: Any, new: Any) -> None:
    for index, tensor in enumerate(tensors):
        if tensor is old:
            tensors[index] = new


class InsertNode(BaseLoadOnnxCopy):
    """
    Functor that inserts a node into an ONNX model.
    """

    def __init__(self, model: Any, op: Any, inputs: Any, outputs: Any, name: Any = None, attrs: Any = None, domain: Any = None, copy: Any = None) -> None:
        """
        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    An ONNX model or a callable that returns one.
            op (str): The operator of the new node.
            inputs (Sequence[str]): Names of existing tensors the node reads, in order.
            outputs (Sequence[str]): Names of the tensors the node produces, in order. An
                    existing tensor that is not also an input loses its old producer; a name
                    among ``inputs`` gets a new tensor that replaces the old one downstream.
            name (str): The node's name. Defaults to none.
            attrs (Dict[str, object]): The node's attributes (ints, floats, strings, lists).
            domain (str): The operator's domain. Defaults to the ONNX domain.
            copy (bool): Whether to work on a copy of the model. Defaults to True.
        """
        super().__init__(model, copy)
        self.op = op
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.name = name
        self.attrs = dict(attrs or {})
        self.domain = domain

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The model with the node inserted.
        """
        model = self.load()
        graph = gs.import_onnx(model)
        tensors = graph.tensors()

        def get_tensor(name: Any) -> Any:
            if name not in tensors:
                G_LOGGER.critical(f"Tensor: {name} does not exist in the model.")
            return tensors[name]

        input_tensors = [get_tensor(name) for name in self.inputs]
        output_tensors = []
        for name in self.outputs:
            if name in self.inputs:
                old = get_tensor(name)
                if old in graph.outputs:
                    # The graph output keeps its name (and type); the tensor read by the node is renamed.
                    old.name += INSERTED_TENSOR_SUFFIX
                    tensor = gs.Variable(name=name, dtype=old.dtype)
                else:
                    tensor = gs.Variable(name=name + INSERTED_TENSOR_SUFFIX)
                for consumer in list(old.outputs):
                    _replace(consumer.inputs, old, tensor)
                _replace(graph.outputs, old, tensor)
                G_LOGGER.verbose(f"Generating new tensor for output: {tensor}")
            else:
                tensor = get_tensor(name)
                if isinstance(tensor, gs.Constant):
                    G_LOGGER.critical(f"Tensor: {name} is a constant; a node cannot produce it.")
            tensor.inputs.clear()
            output_tensors.append(tensor)

        node = gs.Node(op=self.op, name=self.name, attrs=self.attrs, inputs=input_tensors,
                       outputs=output_tensors, domain=self.domain)
        G_LOGGER.verbose(f"Generated new node: {node}")
        # Right after the producer of its last input, so a sorted graph stays sorted.
        with graph.node_ids():
            index = max([producer.id + 1 for tensor in input_tensors for producer in tensor.inputs] + [0])
        graph.nodes.insert(index, node)
        return export_graph(graph.cleanup(), source_model=model)


insert_node = funcify(InsertNode)
