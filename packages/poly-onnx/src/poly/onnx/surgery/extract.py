"""
``ExtractSubgraph``: cut a model down to the part between chosen tensors, which become the
new inputs (with the data types and shapes given, or inferred) and outputs.
"""

from collections.abc import Mapping
from typing import Any

from poly.core import G_LOGGER, BaseLoader, DataType, MetadataTuple
from poly.core.func import funcify, invoke_if_callable
from poly.core.optional_import import lazy_import
from poly.onnx.model.graph import export_graph

gs = lazy_import("onnx_graphsurgeon")
onnx = lazy_import("onnx")

__all__ = ["ExtractSubgraph", "extract_subgraph"]


def _normalize_meta(meta: Any, what: Any) -> Any:
    """Returns [(name, dtype or None, shape or None)] from TensorMetadata, a dict or a list of names."""
    if meta is None:
        return None
    if isinstance(meta, str):
        meta = [meta]
    entries = []
    if isinstance(meta, Mapping):
        for name, value in meta.items():
            if value is None:
                dtype, shape = None, None
            elif isinstance(value, MetadataTuple):
                dtype, shape = value.dtype, value.shape
            else:
                dtype, shape = value
            entries.append((name, dtype, shape))
    else:
        try:
            entries = [(name, None, None) for name in meta]
        except TypeError:
            G_LOGGER.critical(
                f"{what} metadata must be a TensorMetadata, a dict or a list of names, not {meta!r}"
            )
    return entries


def _onnx_dtype(dtype: Any) -> Any:
    if dtype is None:
        return None
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        return dtype  # already a TensorProto.DataType
    return DataType.from_dtype(dtype).onnx()


def _gs_shape(shape: Any) -> Any:
    if shape is None:
        return None
    # Negative or None dimensions are dynamic; strings name them.
    return [None if dim is None or (isinstance(dim, int) and dim < 0) else dim for dim in shape]


class ExtractSubgraph(BaseLoader):
    """
    Functor that extracts a subgraph from an ONNX model.
    """

    def __init__(self, model: Any, input_metadata: Any = None, output_metadata: Any = None, check_meta: Any = None) -> None:
        """
        Extracts a subgraph from an ONNX model.

        Args:
            model (Union[onnx.ModelProto, onnx_graphsurgeon.Graph, Callable() -> either]):
                    An ONNX model or onnx-graphsurgeon graph, or a callable that returns one.
            input_metadata (Union[TensorMetadata, Dict[str, Tuple[dtype, shape]], Sequence[str]]):
                    The tensors that become the subgraph's inputs, with their data types and
                    shapes. Where a data type or shape is not given (None, or only a name is
                    given), the one the model records or shape inference finds is used.
                    None keeps the model's inputs.
            output_metadata (Union[TensorMetadata, Dict[str, Tuple[dtype, shape]], Sequence[str]]):
                    The tensors that become the subgraph's outputs, in the same forms.
                    None keeps the model's outputs.
            check_meta (bool):
                    Whether to warn about inputs without a shape or data type, and outputs without
                    a data type, after filling in what is known. Defaults to True.
        """
        self._model = model
        self.input_metadata = input_metadata
        self.output_metadata = output_metadata
        self.check_meta = True if check_meta is None else bool(check_meta)

    def _graph(self, model: Any, inputs: Any, outputs: Any) -> Any:
        graph = gs.import_onnx(model)
        wanted = [entry for entry in (inputs or []) + (outputs or []) if entry[1] is None or entry[2] is None]
        tensors = graph.tensors()
        lacking = [
            name
            for name, _, _ in wanted
            if name in tensors
            and isinstance(tensors[name], gs.Variable)
            and (tensors[name].dtype is None or tensors[name].shape is None)
        ]
        if lacking:
            from poly.onnx.surgery.shapes import infer_shapes

            G_LOGGER.verbose(f"Inferring shapes to fill in the metadata of: {lacking}")
            graph = gs.import_onnx(infer_shapes(model))
        return graph

    def call_impl(self) -> Any:
        """
        Returns:
            Union[onnx.ModelProto, onnx_graphsurgeon.Graph]: The subgraph, of the kind given.
        """
        model = invoke_if_callable(self._model)
        inputs = _normalize_meta(self.input_metadata, "Input")
        outputs = _normalize_meta(self.output_metadata, "Output")

        if isinstance(model, gs.Graph):
            graph, source_model = model.copy(), None
        elif isinstance(model, onnx.ModelProto):
            graph, source_model = self._graph(model, inputs, outputs), model
        else:
            G_LOGGER.critical(
                f"Expected an ONNX ModelProto or onnx-graphsurgeon Graph (or a loader returning one), "
                f"got: {type(model).__name__}"
            )

        tensor_map = graph.tensors()

        def get_tensor(name: Any) -> Any:
            if name not in tensor_map:
                G_LOGGER.critical(f"Cannot extract a subgraph: tensor '{name}' does not exist in the model")
            return tensor_map[name]

        def update(name: Any, dtype: Any, shape: Any, kind: Any, needs_shape: Any) -> Any:
            tensor = get_tensor(name)
            if isinstance(tensor, gs.Variable):
                if dtype is not None:
                    tensor.dtype = _onnx_dtype(dtype)
                if shape is not None:
                    tensor.shape = _gs_shape(shape)
                if self.check_meta:
                    if needs_shape and tensor.shape is None:
                        G_LOGGER.warning(
                            f"{kind} metadata should include a shape, but none is known for tensor: {name}"
                        )
                    if tensor.dtype is None:
                        G_LOGGER.warning(
                            f"{kind} metadata should include a data type, but none is known for tensor: {name}"
                        )
            return tensor

        if inputs is not None:
            graph.inputs.clear()
            for name, dtype, shape in inputs:
                tensor = update(name, dtype, shape, "Input", needs_shape=True)
                if isinstance(tensor, gs.Variable):
                    tensor.inputs.clear()
                graph.inputs.append(tensor)

        if outputs is not None:
            graph.outputs.clear()
            for name, dtype, shape in outputs:
                graph.outputs.append(update(name, dtype, shape, "Output", needs_shape=False))

        graph.cleanup()

        input_ids = {id(t) for t in graph.inputs}
        dangling = [
            (tensor.name, [f"{node.name or '<unnamed>'} ({node.op})" for node in tensor.outputs])
            for tensor in graph.tensors().values()
            if isinstance(tensor, gs.Variable)
            and not tensor.inputs
            and id(tensor) not in input_ids
            and tensor.outputs
        ]
        if dangling:
            name, consumers = dangling[0]
            more = f" ({len(dangling) - 1} more such tensor(s))" if len(dangling) > 1 else ""
            G_LOGGER.critical(
                f"Cannot extract a subgraph: tensor '{name}' is consumed by {consumers} but is neither produced "
                f"by a node of the subgraph nor one of its inputs{more}. Add it to the inputs"
            )

        if source_model is None:
            return graph
        return export_graph(graph, source_model)


extract_subgraph = funcify(ExtractSubgraph)
