"""
``TensorInfo``: what ``reduce`` needs to know about every tensor of a model to cut it
anywhere: data types and shapes (from ONNX shape inference, else from running the model in
ONNX-Runtime), and the values of tensors that do not depend on the model's inputs (folded
constants), so that cutting the graph at such a tensor freezes it instead of turning it into
an input fed with random data.
"""

from poly.core.logger import G_LOGGER

__all__ = ["TensorInfo", "MIN_FREEZE_SIZE"]

MIN_FREEZE_SIZE = 64 << 20
"""Input-independent tensors up to this size (64 MiB) are always folded to be frozen."""


def _typed(value_info):
    """Whether a ValueInfoProto has an element type and a shape."""
    kind = value_info.type.WhichOneof("value")
    if kind != "tensor_type":
        return kind is not None
    tensor_type = value_info.type.tensor_type
    return tensor_type.elem_type != 0 and tensor_type.HasField("shape")


def _has_dynamic_dims(value_info):
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
        self, model, shape_inference=True, allow_onnxruntime=True, force_fallback=False, freeze_constants=True
    ):
        """
        Args:
            model (onnx.ModelProto): The model, topologically sorted, inputs with final shapes.
            shape_inference (bool): Run ONNX shape inference (``--no-shape-inference`` turns it off).
            allow_onnxruntime (bool): Let shape inference ask ONNX-Runtime about what ONNX cannot
                    infer (``--no-onnxruntime-shape-inference`` turns it off).
            force_fallback (bool): Take every tensor's type and shape from a run of the model in
                    ONNX-Runtime (``--force-fallback-shape-inference``); shapes become static.
            freeze_constants (bool): Fold input-independent tensors so cuts can freeze them.
        """
        from poly.onnx._lazy import onnx

        self._model = model
        self._allow_onnxruntime = allow_onnxruntime
        self._fallback_done = False
        self.value_infos = {}
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

    def _learn(self, value_info, replace=False):
        name = value_info.name
        if not name:
            return
        known = self.value_infos.get(name)
        if known is None or replace or (not _typed(known) and _typed(value_info)):
            self.value_infos[name] = value_info

    def _fold(self, model):
        from poly.onnx import fold_constants
        from poly.onnx._lazy import onnx
        from poly.onnx.base import copy_model
        from poly.onnx.fold import default_fold_size_threshold

        probe = copy_model(model)
        present = {o.name for o in probe.graph.output}
        for node in probe.graph.node:
            for name in node.output:
                if name and name not in present:
                    present.add(name)
                    probe.graph.output.append(
                        self.value_infos.get(name) or onnx.helper.make_empty_tensor_value_info(name)
                    )
        threshold = max(default_fold_size_threshold(model), MIN_FREEZE_SIZE)
        G_LOGGER.verbose("Folding input-independent tensors, so that cuts can freeze them")
        with _quiet():
            folded = fold_constants(
                probe,
                error_ok=True,
                partitioning="basic",
                size_threshold=threshold,
                copy=False,
                allow_onnxruntime_shape_inference=self._allow_onnxruntime,
            )
        for tensor in folded.graph.initializer:
            if tensor.name not in self.constants:
                self.constants[tensor.name] = tensor
                self._learn(
                    onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type, tensor.dims),
                    replace=True,
                )
        G_LOGGER.verbose(
            f"{len(self.constants)} tensor(s) are input-independent and will be frozen where cut"
        )

    def fallback(self, names):
        """
        Runs the model in ONNX-Runtime (once) to learn the types and shapes of ``names`` (None:
        of every tensor). Failures are warnings: reduction goes on with what is known.
        """
        if self._fallback_done:
            return
        self._fallback_done = True
        from poly.compare import DataLoader
        from poly.core.constants import MARK_ALL
        from poly.onnx import ModifyOutputs, OnnxrtRunner, SessionFromOnnx
        from poly.onnx._lazy import onnx

        G_LOGGER.info(
            "Running inference with ONNX-Runtime to determine metadata for intermediate tensors; "
            "shapes of intermediate models become static"
        )
        try:
            with G_LOGGER.indent(), _quiet():
                marked = ModifyOutputs(self._model, outputs=MARK_ALL)()
                with OnnxrtRunner(SessionFromOnnx(marked.SerializeToString())) as runner:
                    loader = DataLoader()
                    loader.input_metadata = runner.get_input_metadata()
                    outputs = runner.infer(next(iter(loader)))
        except Exception as err:
            G_LOGGER.warning(
                f"Fallback shape inference with ONNX-Runtime failed; continuing with what shape "
                f"inference found. Note: {str(err).strip().splitlines()[0] if str(err).strip() else err}"
            )
            return
        from poly.core.datatype import DataType

        for name, array in outputs.items():
            elem_type = DataType.from_dtype(array.dtype).onnx()
            self._learn(onnx.helper.make_tensor_value_info(name, elem_type, list(array.shape)), replace=True)

    def value_info(self, name, need_shape=True):
        """
        The ValueInfoProto of ``name``, running the fallback when the type (or, with
        ``need_shape``, a static shape) is unknown. A bare ValueInfoProto when nothing is known.
        """
        from poly.onnx._lazy import onnx

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


def _quiet():
    """Silences the helpers' own messages (failures are reported here, once) unless -v was given."""
    import contextlib

    if G_LOGGER.is_enabled(G_LOGGER.VERBOSE):
        return contextlib.nullcontext()
    return G_LOGGER.verbosity(G_LOGGER.CRITICAL + 10)


def _once():
    from poly.core.logger import LogMode

    return LogMode.ONCE
