"""
Conversions between ONNX models and onnx-graphsurgeon graphs: ``gs_from_onnx`` and
``onnx_from_gs`` (with their lazy loaders ``GsFromOnnx`` and ``OnnxFromGs``).
"""

from typing import Any

from poly.core import G_LOGGER, BaseLoader
from poly.core.func import funcify, invoke_if_callable
from poly.core.optional_import import lazy_import
from poly.onnx.model.base import load_model

gs = lazy_import("onnx_graphsurgeon")
onnx = lazy_import("onnx")

__all__ = ["GsFromOnnx", "gs_from_onnx", "OnnxFromGs", "onnx_from_gs", "copy_model_metadata", "export_graph"]

_MODEL_FIELDS = ("producer_name", "producer_version", "domain", "model_version", "doc_string")


def copy_model_metadata(src: Any, dst: Any) -> Any:
    """
    Copies the model-level fields that a round trip through onnx-graphsurgeon drops
    (producer, domain, model version, doc string, metadata properties) from ``src`` to ``dst``.
    """
    for field in _MODEL_FIELDS:
        if src.HasField(field) and not dst.HasField(field):
            setattr(dst, field, getattr(src, field))
    if src.metadata_props and not dst.metadata_props:
        dst.metadata_props.extend(src.metadata_props)
    return dst


def export_graph(graph: Any, source_model: Any = None, do_type_check: bool = False, **export_kwargs: Any) -> Any:
    """
    Exports an onnx-graphsurgeon graph, keeping what the export alone would lose: the
    model-level fields of ``source_model``, and validity for IR versions before 4, where every
    initializer had to be a graph input (the IR version is raised to 4 when that no longer holds).
    """
    model = gs.export_onnx(graph, do_type_check=do_type_check, **export_kwargs)
    if not model.ir_version:
        model.ir_version = onnx.IR_VERSION
    if source_model is not None:
        copy_model_metadata(source_model, model)
    if model.ir_version < 4:
        input_names = {i.name for i in model.graph.input}
        if any(t.name not in input_names for t in model.graph.initializer):
            model.ir_version = 4
    return model


class GsFromOnnx(BaseLoader):
    """
    Functor that creates an onnx-graphsurgeon graph from an ONNX ModelProto.
    """

    def __init__(self, model: Any) -> None:
        """
        Creates an onnx-graphsurgeon graph from an ONNX ModelProto.

        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    An ONNX model or a callable that returns one.
        """
        self._model = model

    def call_impl(self) -> Any:
        """
        Returns:
            onnx_graphsurgeon.Graph: The onnx-graphsurgeon representation of the model.
        """
        return gs.import_onnx(load_model(self._model))


class OnnxFromGs(BaseLoader):
    """
    Functor that exports an onnx-graphsurgeon graph to an ONNX ModelProto.
    """

    def __init__(self, graph: Any, do_type_check: Any = None, **export_kwargs: Any) -> None:
        """
        Exports an onnx-graphsurgeon graph to ONNX.

        Args:
            graph (Union[onnx_graphsurgeon.Graph, Callable() -> onnx_graphsurgeon.Graph]):
                    A graph or a callable that returns one.
            do_type_check (bool):
                    Whether onnx-graphsurgeon should insist that every tensor has a data type.
                    Defaults to False: untyped intermediate tensors are common and valid.
            export_kwargs: Passed on to ``onnx.helper.make_model`` (e.g. ``producer_name``).
        """
        self._graph = graph
        self.do_type_check = bool(do_type_check)
        self.export_kwargs = export_kwargs

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The exported model.
        """
        graph = invoke_if_callable(self._graph)
        if not isinstance(graph, gs.Graph):
            G_LOGGER.critical(f"Expected an onnx-graphsurgeon Graph, got: {type(graph).__name__}")
        return export_graph(graph, do_type_check=self.do_type_check, **self.export_kwargs)


gs_from_onnx = funcify(GsFromOnnx)
onnx_from_gs = funcify(OnnxFromGs)
