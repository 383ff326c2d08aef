"""``OnnxrtRunner``: runs inference with an ONNX-Runtime ``InferenceSession``."""

import ctypes
import time
from typing import Any

import numpy as np

from poly.core import G_LOGGER, BaseRunner, DataType, TensorMetadata
from poly.core.func import invoke_if_callable
from poly.core.optional_import import lazy_import
from poly.onnx.runners.session import ort_error_message, session_model_label

onnxrt = lazy_import("onnxruntime")
torch = lazy_import("torch")

__all__ = ["OnnxrtRunner"]

# ONNX-Runtime's Python binding converts neither way between NumPy and these types (NumPy has
# them only through ml_dtypes), so tensors of these types travel as OrtValues over raw bytes.
_RAW_TYPES = {
    "tensor(bfloat16)": DataType.BFLOAT16,  # type: ignore[attr-defined]
    "tensor(float8e4m3fn)": DataType.FLOAT8E4M3FN,  # type: ignore[attr-defined]
    "tensor(float8e4m3fnuz)": DataType.FLOAT8E4M3FNUZ,  # type: ignore[attr-defined]
    "tensor(float8e5m2)": DataType.FLOAT8E5M2,  # type: ignore[attr-defined]
    "tensor(float8e5m2fnuz)": DataType.FLOAT8E5M2FNUZ,  # type: ignore[attr-defined]
}
_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16}


def _dim(dim: Any) -> Any:
    # ONNX-Runtime reports a dimension with neither a value nor a name as None.
    return -1 if dim is None else dim


def _is_torch(value: Any) -> bool:
    return type(value).__module__.split(".")[0] == "torch"


def _torch_to_numpy(tensor: Any) -> Any:
    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(DataType.BFLOAT16.numpy())  # type: ignore[attr-defined]
    return tensor.numpy()


def _numpy_to_torch(array: Any) -> Any:
    if array.dtype == DataType.BFLOAT16.numpy():  # type: ignore[attr-defined]
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


class OnnxrtRunner(BaseRunner):
    """
    Runs inference using an ONNX-Runtime inference session.
    """

    thread_safe_infer = True
    """ONNX-Runtime sessions run from several threads at once; pipelines may infer side by side."""

    def __init__(self, sess: Any, name: Any = None) -> None:
        """
        Args:
            sess (Union[onnxruntime.InferenceSession, Callable() -> onnxruntime.InferenceSession]):
                    An ONNX-Runtime inference session or a callable that returns one, such as
                    ``SessionFromOnnx``; a callable is called at activation, and the session
                    it returns is released at deactivation.
            name (str):
                    The human-readable name of this runner. Defaults to
                    ``"onnxrt-runner-N<count>-<date>-<time>"``.
        """
        super().__init__(name=name, prefix="onnxrt-runner")
        self._sess = sess
        self.sess: Any = None
        """The ``onnxruntime.InferenceSession`` while the runner is active, else None."""

    def activate_impl(self) -> None:
        sess = invoke_if_callable(self._sess)
        if not (hasattr(sess, "run") and hasattr(sess, "get_inputs") and hasattr(sess, "get_outputs")):
            G_LOGGER.critical(
                f"{self.name:35} | Expected an onnxruntime.InferenceSession (or a callable returning "
                f"one), got: {type(sess).__name__}"
            )
        self.sess = sess
        self._model_label = session_model_label(sess)
        self._output_names = [out.name for out in sess.get_outputs()]
        self._raw_outputs = [_RAW_TYPES.get(out.type) for out in sess.get_outputs()]
        self._use_ort_values = any(self._raw_outputs) or any(
            inp.type in _RAW_TYPES for inp in sess.get_inputs()
        )

    def get_input_metadata_impl(self) -> Any:
        meta = TensorMetadata()
        for node in self.sess.get_inputs():
            if node.type.startswith("tensor("):
                dtype = DataType.from_dtype(node.type, "onnxruntime")
                shape = [_dim(dim) for dim in node.shape]
            else:
                # Sequences, maps and optionals: nothing poly's checks could compare.
                dtype, shape = None, None
            meta.add(node.name, dtype=dtype, shape=shape)
        return meta

    def infer_impl(self, feed_dict: Any) -> dict[Any, Any]:
        """
        Runs inference with ONNX-Runtime. Call ``infer()`` instead, which checks the inputs
        and forwards its other arguments here.

        Args:
            feed_dict (Mapping[str, Union[numpy.ndarray, torch.Tensor]]):
                    Input name -> array. Arrays of bfloat16 and float8 types are ml_dtypes
                    NumPy arrays. When PyTorch tensors are given, outputs are PyTorch tensors.

        Returns:
            Dict[str, Union[numpy.ndarray, torch.Tensor]]:
                    Output name -> array, in the session's output order.
        """
        use_torch = any(_is_torch(value) for value in feed_dict.values())
        feeds = {
            name: _torch_to_numpy(value) if _is_torch(value) else np.asarray(value)
            for name, value in feed_dict.items()
        }

        try:
            if self._use_ort_values:
                ort_feeds = {name: _to_ort_value(array) for name, array in feeds.items()}
                start = time.perf_counter()
                results = self.sess.run_with_ort_values(self._output_names, ort_feeds)
                self.inference_time = time.perf_counter() - start
                outputs = [
                    _raw_to_numpy(value, raw) if raw is not None else value.numpy()
                    for value, raw in zip(results, self._raw_outputs, strict=True)
                ]
            else:
                start = time.perf_counter()
                outputs = self.sess.run(self._output_names, feeds)
                self.inference_time = time.perf_counter() - start
        except Exception as err:
            if type(err).__module__.startswith("onnxruntime"):
                model = f" on {self._model_label}" if self._model_label else ""
                G_LOGGER.critical(f"{self.name:35} | ONNX-Runtime inference failed{model}: {ort_error_message(err)}")
            raise

        if use_torch:
            outputs = [_numpy_to_torch(np.asarray(out)) for out in outputs]
        return dict(zip(self._output_names, outputs, strict=True))

    def deactivate_impl(self) -> None:
        self.sess = None


def _to_ort_value(array: Any) -> Any:
    dtype = DataType.from_dtype(array.dtype)
    array = np.ascontiguousarray(array)
    if dtype in _RAW_TYPES.values():
        raw = array.view(_UINT_OF_SIZE[array.dtype.itemsize])
        return onnxrt.OrtValue.ortvalue_from_numpy_with_onnx_type(raw, onnx_element_type=dtype.onnx())
    return onnxrt.OrtValue.ortvalue_from_numpy(array)


def _raw_to_numpy(value: Any, dtype: Any) -> Any:
    shape = tuple(value.shape())
    np_dtype = dtype.numpy()
    nbytes = value.tensor_size_in_bytes()
    if nbytes == 0:
        return np.empty(shape, dtype=np_dtype)
    buffer = (ctypes.c_ubyte * nbytes).from_address(value.data_ptr())
    return np.frombuffer(buffer, dtype=np.uint8).copy().view(np_dtype).reshape(shape)
