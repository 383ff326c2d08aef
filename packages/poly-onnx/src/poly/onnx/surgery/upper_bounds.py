"""
Upper bounds for data-dependent shapes: ``SetUpperBound`` caps the runtime values that decide
the size of an operator's output (the ``limit`` of a Range, the ``repeats`` of a Tile...) with a
``Min`` node, so that TensorRT can allocate those outputs. ``unbounded_dds_tensors`` finds the
values that need one.
"""

from typing import Any

import numpy as np

from poly.core import G_LOGGER
from poly.core.func import funcify
from poly.core.optional_import import lazy_import
from poly.onnx.model.base import BaseLoadOnnxCopy
from poly.onnx.model.graph import export_graph

gs = lazy_import("onnx_graphsurgeon")

__all__ = ["SIZE_INPUTS", "unbounded_dds_tensors", "SetUpperBound", "set_upper_bound"]

SIZE_INPUTS = {"Range": 1, "Pad": 1, "Resize": 3, "Tile": 1, "Expand": 1}
"""Operator -> index of the input whose runtime value decides the size of the output."""


def _constant_names(graph: Any) -> Any:
    names = {name for name, tensor in graph.tensors().items() if isinstance(tensor, gs.Constant)}
    for node in graph.nodes:
        if node.op == "Constant":
            names.update(t.name for t in node.outputs)
    return names


def unbounded_dds_tensors(graph: Any) -> list[Any]:
    """
    The tensors whose runtime values decide the size of an output that has no upper bound:
    the size input (``SIZE_INPUTS``) of a node whose output introduces a new symbolic dimension
    (or has no inferred shape), when that input is computed at runtime (not a constant) and not
    already capped by a ``Min``. In topological order, without repeats.

    Args:
        graph (onnx_graphsurgeon.Graph): The graph (sorted topologically in place).

    Returns:
        List[onnx_graphsurgeon.Variable]
    """
    graph.toposort()
    known_dims = {dim for tensor in graph.inputs for dim in (tensor.shape or []) if isinstance(dim, str)}
    constants = _constant_names(graph)
    found: dict[Any, Any] = {}
    for node in graph.nodes:
        introduces = False
        for out in node.outputs:
            if out.shape is None:
                introduces = True
                continue
            for dim in out.shape:
                if isinstance(dim, str) and dim not in known_dims:
                    known_dims.add(dim)
                    introduces = True
        index = SIZE_INPUTS.get(node.op)
        if not introduces or index is None or index >= len(node.inputs):
            continue
        size_input = node.inputs[index]
        if (size_input.name not in constants and size_input.inputs
                and size_input.inputs[0].op != "Min"):
            found.setdefault(size_input.name, size_input)
    return list(found.values())


def _bound_for(upper_bounds: Any, name: Any) -> Any:
    if isinstance(upper_bounds, dict):
        return upper_bounds.get(name, upper_bounds.get(""))
    return upper_bounds


class SetUpperBound(BaseLoadOnnxCopy):
    """
    Functor that caps the tensors that decide data-dependent output sizes (see
    ``unbounded_dds_tensors``) with ``Min(tensor, bound)``. Run constant folding and shape
    inference first so that only the truly data-dependent ones are found.
    """

    def __init__(self, model: Any, upper_bounds: Any, copy: Any = None) -> None:
        """
        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    An ONNX model or a callable that returns one.
            upper_bounds (Union[int, Dict[str, int]]):
                    The bound of every such tensor, or per tensor name with ``""`` as the
                    default. A tensor named in the dictionary is capped even when it was not
                    found unbounded (with a warning); a name the model lacks is an error.
            copy (bool): Whether to work on a copy of the model. Defaults to True.
        """
        super().__init__(model, copy)
        self.upper_bounds = upper_bounds

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The model with ``Min`` nodes inserted.
        """
        model = self.load()
        graph = gs.import_onnx(model)
        targets = {t.name: t for t in unbounded_dds_tensors(graph)}
        tensors = graph.tensors()
        if isinstance(self.upper_bounds, dict):
            named = [name for name in self.upper_bounds if name != ""]
            missing = [name for name in named if name not in tensors]
            if missing:
                G_LOGGER.critical(f"The upper bounds dictionary names tensors the model does not have: {missing}")
            bounded = [name for name in named if name not in targets]
            if bounded:
                G_LOGGER.warning(f"The upper bounds dictionary names tensors without an unbounded data-dependent "
                                 f"shape: {bounded}; they are capped anyway")
            for name in named:
                targets.setdefault(name, tensors[name])

        applied = {}
        for name, tensor in targets.items():
            bound = _bound_for(self.upper_bounds, name)
            if bound is None:
                continue
            if len(tensor.inputs) != 1:
                G_LOGGER.critical(f"Cannot set an upper bound on tensor {name}: it is not produced by one node")
            producer = tensor.inputs[0]
            dtype = tensor.dtype if tensor.dtype is not None else np.int64
            rank = len(tensor.shape) if tensor.shape is not None else 0
            values = np.array([bound] * rank if rank else bound, dtype=dtype)
            uncapped = gs.Variable(f"{name}_copy", dtype=tensor.dtype, shape=tensor.shape)
            producer.outputs[producer.outputs.index(tensor)] = uncapped
            cap = gs.Constant(f"{name}_upper_bound", values=values)
            tensor.inputs.clear()
            graph.nodes.append(gs.Node(op="Min", inputs=[uncapped, cap], outputs=[tensor]))
            applied[name] = bound
        G_LOGGER.info(f"Set tensor upper bounds: {applied}")
        graph.cleanup().toposort()
        return export_graph(graph, source_model=model)


set_upper_bound = funcify(SetUpperBound)
