"""
``TensorInfo``: what ``reduce`` needs to know about every tensor of a model to cut it
anywhere: data types and shapes (from ONNX shape inference, else from running the model in
ONNX-Runtime), and the values of tensors that do not depend on the model's inputs (folded
constants), so that cutting the graph at such a tensor freezes it instead of turning it into
an input fed with random data.
"""

from typing import Any

from poly.core import G_LOGGER, lazy_import

onnx = lazy_import("onnx")
numpy_helper = lazy_import("onnx.numpy_helper")
onnxrt = lazy_import("onnxruntime")

__all__ = ["TensorInfo", "MIN_FREEZE_SIZE"]

MIN_FREEZE_SIZE = 64 << 20
"""Input-independent tensors up to this size (64 MiB) are always kept to be frozen."""

_NONDETERMINISTIC = {
    "RandomNormal",
    "RandomNormalLike",
    "RandomUniform",
    "RandomUniformLike",
    "Multinomial",
    "Bernoulli",
}


def _typed(value_info: Any) -> Any:
    """Whether a ValueInfoProto has an element type and a shape."""
    kind = value_info.type.WhichOneof("value")
    if kind != "tensor_type":
        return kind is not None
    tensor_type = value_info.type.tensor_type
    return tensor_type.elem_type != 0 and tensor_type.HasField("shape")


def _has_dynamic_dims(value_info: Any) -> bool:
    if value_info.type.WhichOneof("value") != "tensor_type":
        return False
    tensor_type = value_info.type.tensor_type
    if not tensor_type.HasField("shape"):
        return True
    return any(not dim.HasField("dim_value") for dim in tensor_type.shape.dim)


class TensorInfo:
    """
    Types, shapes and frozen values of the tensors of one ONNX model.
    """

    def __init__(
        self,
        model: Any,
        shape_inference: bool = True,
        allow_onnxruntime: bool = True,
        force_fallback: bool = False,
        freeze_constants: bool = True,
        data_loader: Any = None,
    ) -> None:
        """
        Args:
            model (onnx.ModelProto): The model, topologically sorted, inputs with final shapes.
            shape_inference (bool): Run ONNX shape inference (``--no-shape-inference`` turns it off).
            allow_onnxruntime (bool): Let shape inference ask ONNX-Runtime about what ONNX cannot
                    infer (``--no-onnxruntime-shape-inference`` turns it off).
            force_fallback (bool): Take every tensor's type and shape from a run of the model in
                    ONNX-Runtime (``--force-fallback-shape-inference``); shapes become static.
            freeze_constants (bool): Fold input-independent tensors so cuts can freeze them.
            data_loader (Iterable[Mapping[str, numpy.ndarray]]): The inputs of the fallback run
                    (its first feed dict; tensors that are not model inputs are ignored). A
                    ``poly.compare.DataLoader`` without input metadata is given the model's.
                    Defaults to a ``DataLoader()``.
        """
        self._model = model
        self._data_loader = data_loader
        self._allow_onnxruntime = allow_onnxruntime
        self._fallback_done = False
        self.value_infos: dict[Any, Any] = {}
        """name -> ValueInfoProto with whatever is known."""
        self.constants = {}
        """name -> TensorProto of input-independent tensors (initializers and folded values)."""

        for tensor in model.graph.initializer:
            self.constants[tensor.name] = tensor
        if shape_inference:
            from poly.onnx import infer_shapes

            G_LOGGER.info("Inferring shapes of intermediate tensors")
            model = infer_shapes(model, error_ok=True, allow_onnxruntime=allow_onnxruntime)
        graph = model.graph
        for value_info in (*graph.value_info, *graph.input, *graph.output):
            self._learn(value_info)
        for tensor in graph.initializer:
            self._learn(onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type, tensor.dims))
        if force_fallback:
            G_LOGGER.info(
                "Freezing tensor shapes with the values of a run in ONNX-Runtime (fallback shape inference)"
            )
            self.fallback(None)
        if freeze_constants:
            self._fold(model)

    def _learn(self, value_info: Any, replace: bool = False) -> None:
        name = value_info.name
        if not name:
            return
        known = self.value_infos.get(name)
        if known is None or replace or (not _typed(known) and _typed(value_info)):
            self.value_infos[name] = value_info

    def _static_shape(self, name: Any) -> Any:
        value_info = self.value_infos.get(name)
        if value_info is None or not _typed(value_info) or _has_dynamic_dims(value_info):
            return None
        return [dim.dim_value for dim in value_info.type.tensor_type.shape.dim]

    def _constant_nodes(self, model: Any) -> tuple[Any, ...]:
        """
        The nodes whose outputs do not depend on the model's inputs, in order, and the values
        of Shape/Size nodes of statically shaped tensors (those read no data).
        """
        import numpy as np

        from poly.debug.subgraph import node_reads

        known = set(self.constants)
        nodes, shape_values = [], {}
        for node in model.graph.node:
            if node.op_type in _NONDETERMINISTIC or node.domain not in ("", "ai.onnx"):
                continue
            reads = [name for name in node_reads(node) if name]
            if node.op_type in ("Shape", "Size") and reads:
                dims = self._static_shape(reads[0])
                if dims is None:
                    continue
                if node.op_type == "Size":
                    value = np.array(int(np.prod(dims)), np.int64)
                else:
                    attrs = {a.name: a.i for a in node.attribute}
                    value = np.array(
                        dims[attrs.get("start", 0) : attrs.get("end", len(dims)) or None], np.int64
                    )
                    if "end" in attrs and attrs["end"] == 0:
                        value = np.array([], np.int64)
                shape_values[node.output[0]] = value
                known.add(node.output[0])
                continue
            if all(name in known for name in reads):
                nodes.append(node)
                known.update(name for name in node.output if name)
        return nodes, shape_values

    def _fold(self, model: Any) -> None:
        """Evaluates every input-independent tensor in one ONNX-Runtime run."""
        from poly.onnx import default_fold_size_threshold, onnxruntime_max_ir_version

        nodes, shape_values = self._constant_nodes(model)
        values = dict(shape_values)
        if nodes:
            initializers = [self.constants[name] for name in self.constants]
            initializers += [numpy_helper.from_array(value, name) for name, value in shape_values.items()]
            outputs = [
                onnx.helper.make_empty_tensor_value_info(n) for node in nodes for n in node.output if n
            ]
            graph = onnx.helper.make_graph(nodes, "constants", [], outputs, initializer=initializers)
            probe = onnx.helper.make_model(
                graph, opset_imports=model.opset_import, ir_version=max(model.ir_version, 4)
            )
            probe.functions.extend(model.functions)
            probe.ir_version = min(probe.ir_version, onnxruntime_max_ir_version())
            options = onnxrt.SessionOptions()
            options.graph_optimization_level = onnxrt.GraphOptimizationLevel.ORT_DISABLE_ALL
            options.log_severity_level = 3
            try:
                session = onnxrt.InferenceSession(
                    probe.SerializeToString(), options, providers=["CPUExecutionProvider"]
                )
                names = [o.name for o in session.get_outputs()]
                values.update(zip(names, session.run(names, {}), strict=True))
            except Exception as err:
                G_LOGGER.warning(
                    "Could not evaluate the model's input-independent tensors; where a cut meets one, it "
                    f"becomes an input instead of a constant. Note: {str(err).strip().splitlines()[0]}"
                )
        threshold = max(default_fold_size_threshold(model), MIN_FREEZE_SIZE)
        for name, value in values.items():
            if getattr(value, "nbytes", threshold + 1) <= threshold and name not in self.constants:
                tensor = numpy_helper.from_array(value, name)
                self.constants[name] = tensor
                self._learn(
                    onnx.helper.make_tensor_value_info(name, tensor.data_type, tensor.dims), replace=True
                )
        G_LOGGER.verbose(
            f"{len(self.constants)} tensor(s) are input-independent and will be frozen where cut"
        )

    def fallback(self, names: Any) -> None:
        """
        Runs the model in ONNX-Runtime (once) to learn the types and shapes of ``names`` (None:
        of every tensor). Failures are warnings: reduction goes on with what is known.
        """
        if self._fallback_done:
            return
        self._fallback_done = True
        from poly.compare import DataLoader
        from poly.core import MARK_ALL
        from poly.onnx import ModifyOutputs, OnnxrtRunner, SessionFromOnnx

        G_LOGGER.info(
            "Running inference with ONNX-Runtime to determine metadata for intermediate tensors; "
            "shapes of intermediate models become static"
        )
        try:
            with G_LOGGER.indent(), _quiet():
                marked = ModifyOutputs(self._model, outputs=MARK_ALL)()
                with OnnxrtRunner(SessionFromOnnx(marked.SerializeToString())) as runner:
                    metadata = runner.get_input_metadata(use_numpy_dtypes=False)
                    loader = DataLoader() if self._data_loader is None else self._data_loader
                    if getattr(loader, "input_metadata", "absent") is None:
                        loader.input_metadata = metadata
                    feed_dict = next(iter(loader))
                    outputs = runner.infer({name: feed_dict[name] for name in metadata.keys() if name in feed_dict})
        except Exception as err:
            G_LOGGER.warning(
                f"Fallback shape inference with ONNX-Runtime failed; continuing with what shape "
                f"inference found. Note: {str(err).strip().splitlines()[0] if str(err).strip() else err}"
            )
            return
        from poly.core import DataType

        for name, array in outputs.items():
            elem_type = DataType.from_dtype(array.dtype).onnx()
            self._learn(onnx.helper.make_tensor_value_info(name, elem_type, list(array.shape)), replace=True)

    def value_info(self, name: Any, need_shape: bool = True) -> Any:
        """
        The ValueInfoProto of ``name``, running the fallback when the type (or, with
        ``need_shape``, a static shape) is unknown. A bare ValueInfoProto when nothing is known.
        """
        known = self.value_infos.get(name)
        lacking = known is None or not _typed(known) or (need_shape and _has_dynamic_dims(known))
        if lacking and not self._fallback_done:
            self.fallback([name])
            known = self.value_infos.get(name)
        if known is None:
            G_LOGGER.warning(f"No data type or shape is known for tensor {name!r}", mode=_once())
            return onnx.helper.make_empty_tensor_value_info(name)
        result = onnx.ValueInfoProto()
        result.CopyFrom(known)
        return result


def _quiet() -> Any:
    """Silences the helpers' own messages (failures are reported here, once) unless -v was given."""
    import contextlib

    if G_LOGGER.is_enabled(G_LOGGER.VERBOSE):
        return contextlib.nullcontext()
    return G_LOGGER.verbosity(G_LOGGER.CRITICAL + 10)


def _once() -> Any:
    from poly.core import LogMode

    return LogMode.ONCE
