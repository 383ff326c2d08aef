"""
``FoldConstants``: onnx-graphsurgeon constant folding and cleanup, repeated until nothing more
folds, with a per-tensor size cap so that folding cannot bloat the model.
"""

from typing import Any

from poly.core import G_LOGGER, PolyException
from poly.core.func import funcify
from poly.core.optional_import import lazy_import
from poly.onnx.model.base import BaseLoadOnnxCopy, iter_graphs, tensor_size
from poly.onnx.model.graph import export_graph

gs = lazy_import("onnx_graphsurgeon")
onnx = lazy_import("onnx")
onnxrt = lazy_import("onnxruntime")

_ORT_ERROR = 3
"""ONNX-Runtime's log severity of errors (0 verbose, 1 info, 2 warning, 3 error, 4 fatal)."""

__all__ = ["FoldConstants", "fold_constants", "count_nodes", "default_fold_size_threshold"]

MIN_AUTO_SIZE_THRESHOLD = 1 << 20
"""Folded tensors up to this size (1 MiB) are always allowed by the automatic size cap."""


def count_nodes(model: Any) -> Any:
    """Returns the number of nodes of ``model``, subgraphs included."""
    return sum(len(graph.node) for graph in iter_graphs(model.graph))


def _largest_constant(model: Any) -> Any:
    largest = 0
    for graph in iter_graphs(model.graph):
        for tensor in graph.initializer:
            largest = max(largest, tensor_size(tensor))
        for node in graph.node:
            if node.op_type == "Constant":
                for attr in node.attribute:
                    if attr.type == onnx.AttributeProto.TENSOR:
                        largest = max(largest, tensor_size(attr.t))
    return largest


def default_fold_size_threshold(model: Any) -> Any:
    """
    The automatic size cap of ``FoldConstants(size_threshold="auto")``: folding may create
    tensors of up to twice the size of the largest constant the model already holds, and always
    up to 1 MiB.

    Folding that transforms existing weights (Transpose, Reshape, a Cast to a wider type,
    scaling) stays under the cap; folding that materializes large tensors out of small ones
    (Expand, Tile, ConstantOfShape, Range) does not, and is left to the runtime.
    """
    return max(MIN_AUTO_SIZE_THRESHOLD, 2 * _largest_constant(model))


class FoldConstants(BaseLoadOnnxCopy):
    """
    Functor that folds constants in an ONNX model.
    """

    def __init__(
        self,
        model: Any,
        num_passes: Any = None,
        do_shape_inference: Any = None,
        partitioning: Any = None,
        fold_shapes: Any = None,
        copy: Any = None,
        error_ok: Any = None,
        size_threshold: Any = None,
        allow_onnxruntime_shape_inference: Any = None,
    ) -> None:
        """
        Folds constants in an ONNX model.

        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    An ONNX model or a callable that returns one.
            num_passes (int):
                    The most folding passes to run. By default, passes run until one folds nothing
                    (subgraphs that compute shapes often need several).
            do_shape_inference (bool):
                    Whether to infer shapes before and between passes, so that ``Shape`` nodes
                    of statically shaped tensors fold. Only with ``fold_shapes``. Defaults to True.
            partitioning (Union[str, None]):
                    How to isolate failures while evaluating: None (one failure folds nothing),
                    ``"basic"`` or ``"recursive"`` (see onnx-graphsurgeon). Defaults to None.
            fold_shapes (bool): Whether to fold ``Shape`` nodes. Defaults to True.
            copy (bool):
                    Whether to start from a copy of the model. Folding builds a new model, but
                    shape inference of a model over the protobuf size limit adds its results to
                    the model it is given; False saves the copy. Defaults to True.
            error_ok (bool):
                    Whether to return the model folded as far as possible, with a warning, when a
                    pass fails. With False, the error is raised. Defaults to True.
            size_threshold (Union[int, str]):
                    The largest tensor, in bytes, that folding may create; larger ones stay as
                    computations. ``"auto"`` uses ``default_fold_size_threshold(model)``: twice
                    the largest constant already in the model, at least 1 MiB, so that folding
                    cannot bloat the model. Defaults to None: no limit, as in Polygraphy.
            allow_onnxruntime_shape_inference (bool):
                    Whether shape inference may ask ONNX-Runtime about tensors ONNX cannot type.
                    Defaults to True.
        """
        super().__init__(model, copy)
        self.num_passes = num_passes
        self.do_shape_inference = True if do_shape_inference is None else bool(do_shape_inference)
        self.partitioning = partitioning
        self.fold_shapes = True if fold_shapes is None else bool(fold_shapes)
        self.error_ok = True if error_ok is None else bool(error_ok)
        self.size_threshold = size_threshold
        self.allow_onnxruntime_shape_inference = allow_onnxruntime_shape_inference

    def _infer(self, model: Any) -> Any:
        if not (self.fold_shapes and self.do_shape_inference):
            return model
        from poly.onnx.surgery.shapes import infer_shapes

        return infer_shapes(model, allow_onnxruntime=self.allow_onnxruntime_shape_inference)

    def _fold_pass(self, model: Any, size_threshold: Any) -> Any:
        # ONNX requires nodes in topological order, which folding relies on and keeps.
        graph = gs.import_onnx(model)
        if not G_LOGGER.is_enabled(G_LOGGER.VERBOSE) and onnxrt.is_available():
            # onnx-graphsurgeon's sessions log ONNX-Runtime warnings straight to stderr
            onnxrt.set_default_logger_severity(_ORT_ERROR)
        graph.fold_constants(
            fold_shapes=self.fold_shapes,
            partitioning=self.partitioning,
            error_ok=self.error_ok,
            size_threshold=size_threshold,
        )
        folded = export_graph(graph.cleanup(), model)
        del graph
        return self._infer(folded)

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: A new ONNX model with constants folded.
        """
        model = self.load()
        size_threshold = self.size_threshold
        if size_threshold == "auto":
            size_threshold = default_fold_size_threshold(model)
            G_LOGGER.verbose(f"Constant folding size cap: {size_threshold} bytes per tensor")

        try:
            model = self._infer(model)
        except PolyException:
            if not self.error_ok:
                raise

        index = 0
        while self.num_passes is None or index < self.num_passes:
            before = count_nodes(model)
            G_LOGGER.start(f"Folding Constants | Pass {index + 1}")
            try:
                model = self._fold_pass(model, size_threshold)
            except Exception as err:
                if not self.error_ok:
                    G_LOGGER.critical(f"Constant folding pass {index + 1} failed: {err}")
                G_LOGGER.warning(
                    f"Constant folding pass {index + 1} failed; stopping here. Note: error was: {err}"
                )
                break
            after = count_nodes(model)
            index += 1
            G_LOGGER.finish(
                f"    Total Nodes | Original: {before:5}, After Folding: {after:5} | {before - after:5} Nodes Folded"
            )
            if after == before:
                break
        return model


fold_constants = funcify(FoldConstants)
