"""``OnnxRefRunner``: runs inference with ONNX's reference evaluator (``onnx.reference``)."""

import time
from typing import Any

import numpy as np

from poly.core import G_LOGGER, BaseRunner, DataType, TensorMetadata
from poly.core.optional_import import lazy_import
from poly.onnx.model.errors import UnsupportedModelError
from poly.onnx.runners.model_source import ModelSource
from poly.onnx.runners.ref_ops import corrected_ops

reference = lazy_import("onnx.reference")

__all__ = ["OnnxRefRunner"]


def _shape(value_info: Any) -> Any:
    tensor_type = value_info.type.tensor_type
    if not tensor_type.HasField("shape"):
        return None  # rank unknown: nothing to check
    return [
        dim.dim_param if dim.HasField("dim_param") else dim.dim_value if dim.HasField("dim_value") else -1
        for dim in tensor_type.shape.dim
    ]


class OnnxRefRunner(BaseRunner):
    """
    Runs inference with the ONNX reference evaluator, ``onnx.reference.ReferenceEvaluator``:
    a slow, NumPy-based implementation of the ONNX specification, useful as an independent
    reference for ONNX-Runtime and TensorRT.

    Operators that onnx.reference implements against the specification for some opsets
    (LRN; Softmax, LogSoftmax and Hardmax before opset 13; BatchNormalization in inference
    mode in opsets 7 to 13) are replaced with conforming implementations (see ``poly.onnx.runners.ref_ops``).
    """

    def __init__(self, model: Any, name: Any = None) -> None:
        """
        Args:
            model (Union[onnx.ModelProto, str, os.PathLike, bytes, Callable() -> Union[onnx.ModelProto, str, bytes]]):
                    An ONNX model, a path to one, its serialized bytes, or a callable (such as a
                    loader) that returns one of those; a callable is called at activation.
            name (str):
                    The human-readable name of this runner. Defaults to
                    ``"onnx-ref-runner-N<count>-<date>-<time>"``.
        """
        super().__init__(name=name, prefix="onnx-ref-runner")
        self._model = model
        self.model: Any = None
        """The ``onnx.ModelProto`` while the runner is active, else None."""
        self.evaluator: Any = None
        """The ``onnx.reference.ReferenceEvaluator`` while the runner is active, else None."""

    def activate_impl(self) -> None:
        source = ModelSource.resolve(self._model, what="model for the reference runner")
        model = source.load_proto()
        try:
            evaluator = reference.ReferenceEvaluator(model, new_ops=corrected_ops(model))
        except Exception as err:
            G_LOGGER.critical(
                f"{self.name:35} | The ONNX reference evaluator cannot run {source.label}: "
                f"{type(err).__name__}: {_first_line(err)}",
                UnsupportedModelError,
            )
        self.model = model
        self.evaluator = evaluator
        self._output_names = list(evaluator.output_names)

    def get_input_metadata_impl(self) -> Any:
        graph = self.model.graph
        initializers = {init.name for init in graph.initializer}
        meta = TensorMetadata()
        for inp in graph.input:
            # Models of IR version < 4 list their initializers as graph inputs too.
            if inp.name in initializers:
                continue
            if inp.type.HasField("tensor_type"):
                dtype = DataType.from_dtype(inp.type.tensor_type.elem_type, "onnx")
                meta.add(inp.name, dtype=dtype, shape=_shape(inp))
            else:
                meta.add(inp.name, dtype=None, shape=None)
        return meta

    def infer_impl(self, feed_dict: Any) -> dict[Any, Any]:
        """
        Runs the reference evaluator. Call ``infer()`` instead, which checks the inputs and
        forwards its other arguments here.

        Args:
            feed_dict (Mapping[str, numpy.ndarray]): Input name -> array.

        Returns:
            Dict[str, numpy.ndarray]: Output name -> array, in the model's output order.
        """
        feeds = {name: np.asarray(value) for name, value in feed_dict.items()}
        start = time.perf_counter()
        try:
            outputs = self.evaluator.run(None, feeds)
        except Exception as err:
            G_LOGGER.critical(
                f"{self.name:35} | The ONNX reference evaluator failed: {type(err).__name__}: {_first_line(err)}"
            )
        self.inference_time = time.perf_counter() - start
        return {name: np.asarray(out) for name, out in zip(self._output_names, outputs, strict=True)}

    def deactivate_impl(self) -> None:
        self.evaluator = None
        self.model = None


def _first_line(err: Any) -> Any:
    text = str(err).strip()
    return text.splitlines()[0] if text else repr(err)
