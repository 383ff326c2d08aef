"""
``host_array``: a NumPy array of any array-like a runner or a user may hand over, copied to the
host where it lives on a GPU. One place for every kind, so that comparisons, postprocessing and
serialization accept them all:

- NumPy arrays, as they are;
- PyTorch tensors on any device (``.detach().cpu()``), bfloat16 ones as ml_dtypes' bfloat16;
- CuPy arrays (``.get()``);
- objects exposing ``__cuda_array_interface__`` (poly's and Polygraphy's ``DeviceView``, Numba...),
  copied through poly's CUDA driver wrapper;
- objects exposing ``__dlpack__`` on the CPU (``numpy.from_dlpack``);
- anything else NumPy converts (lists, scalars, ``__array__``/``__array_interface__`` objects).

Neither PyTorch nor CuPy is imported: they are recognised by the module of the object's type.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from poly.core.arrays.ops import is_torch
from poly.core.cuda.device_arrays import DeviceView
from poly.core.logging.exception import PolyException
from poly.core.optional_import import lazy_import

__all__ = ["host_array", "is_cupy", "is_device_array"]

ml_dtypes = lazy_import("ml_dtypes", purpose="bfloat16 tensors as NumPy arrays")

_DLPACK_CPU = 1  # kDLCPU in DLPack's device type enumeration


def is_cupy(obj: Any) -> bool:
    """Whether ``obj`` is a CuPy array (found without importing CuPy)."""
    return type(obj).__module__.split(".")[0] == "cupy" and hasattr(obj, "get")


def is_device_array(obj: Any) -> Any:
    """Whether ``obj`` lives in GPU memory (a CUDA tensor, a CuPy array or any object with
    ``__cuda_array_interface__``), i.e. whether ``host_array`` copies it."""
    if type(obj) is np.ndarray:  # (the common case, answered in 0.1 us instead of 3: asked per output)
        return False
    if is_torch(obj):
        is_cpu = getattr(obj, "is_cpu", None)  # (a property of recent tensors: no device object built)
        return not is_cpu if isinstance(is_cpu, bool) else obj.device.type != "cpu"
    return is_cupy(obj) or _is_device_view(obj) or hasattr(obj, "__cuda_array_interface__")


def _torch_to_numpy(tensor: Any) -> Any:
    tensor = tensor.detach()
    if tensor.device.type != "cpu":
        tensor = tensor.cpu()
    if str(tensor.dtype) == "torch.bfloat16":
        # NumPy has no bfloat16: the 16-bit patterns are reinterpreted as ml_dtypes' bfloat16
        bits = tensor.contiguous().view(_torch_int16_dtype(tensor)).numpy()
        return bits.view(_bfloat16())
    return tensor.numpy()


def _torch_int16_dtype(tensor: Any) -> Any:
    # torch.int16 from the tensor's own module, so that this module never imports torch itself
    import sys

    return sys.modules[type(tensor).__module__.split(".")[0]].int16


def _bfloat16() -> Any:
    return np.dtype(ml_dtypes.bfloat16)  # a clear MissingModuleError where ml_dtypes is not installed


def _is_device_view(obj: Any) -> bool:
    # poly's DeviceView/DeviceArray, or Polygraphy's (same names and interface)
    return isinstance(obj, DeviceView) or (
        type(obj).__name__ in ("DeviceView", "DeviceArray") and hasattr(obj, "ptr") and hasattr(obj, "numpy"))


def _device_copy(obj: Any, copy: Any) -> Any:
    try:
        return copy()
    except PolyException:
        raise
    except Exception as err:  # noqa: BLE001 - the driver's errors (no CUDA, bad pointer) in one line
        first_line = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise PolyException(f"Cannot copy a {type(obj).__name__} from the GPU to the host: {first_line}") from None


def _from_cuda_array_interface(obj: Any) -> np.ndarray:
    interface = obj.__cuda_array_interface__
    shape = tuple(int(dim) for dim in interface["shape"])
    dtype = np.dtype(interface["typestr"])
    strides = interface.get("strides")
    if strides is not None and tuple(strides) != _c_strides(shape, dtype.itemsize):
        raise PolyException(f"Cannot copy a non-contiguous {type(obj).__name__} (strides {tuple(strides)}) to the "
                            "host; make it contiguous first")
    ptr = interface["data"][0]
    if ptr is None or 0 in shape:
        return np.empty(shape, dtype)
    return _device_copy(obj, DeviceView(ptr, shape, dtype).numpy)  # type: ignore[no-any-return]


def _c_strides(shape: Any, itemsize: Any) -> tuple[Any, ...]:
    strides, step = [], itemsize
    for dim in reversed(shape):
        strides.append(step)
        step *= dim
    return tuple(reversed(strides))


def host_array(obj: Any) -> Any:
    """
    ``obj`` as a NumPy array in host memory (see the module's description for the kinds
    accepted); NumPy arrays are returned as they are, CPU tensors share their memory.

    Raises:
        PolyException: for a GPU object that cannot be copied (non-contiguous, no CUDA) or a
            bfloat16 tensor without ml_dtypes installed.
    """
    if isinstance(obj, np.ndarray):
        return obj
    if is_torch(obj):
        return _torch_to_numpy(obj)
    if is_cupy(obj):
        return obj.get()
    if _is_device_view(obj):
        return _device_copy(obj, obj.numpy)
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_cuda_array_interface(obj)
    if hasattr(obj, "__dlpack__") and not hasattr(obj, "__array_interface__") and not hasattr(obj, "__array__"):
        device = obj.__dlpack_device__()[0] if hasattr(obj, "__dlpack_device__") else _DLPACK_CPU
        if device != _DLPACK_CPU:
            raise PolyException(f"Cannot copy a {type(obj).__name__} on DLPack device type {device} to the host: "
                                "it exposes neither __cuda_array_interface__ nor a host copy")
        return np.from_dlpack(obj)
    return np.asarray(obj)
