"""
Array operations that work the same on NumPy arrays and PyTorch tensors (Polygraphy's
``polygraphy.util.array``): the library of the first array decides, later arrays are converted
to it, and results stay in that library (reductions give Python scalars). PyTorch is imported
only when a tensor is seen, so NumPy-only code never needs it.

``is_device_view`` recognises poly's (and Polygraphy's) ``DeviceView``; ``nbytes``, ``size``,
``dtype`` and ``shape`` accept one as well.
"""

import builtins
import math
import numbers
from typing import Any

import numpy as np

from poly.core.arrays.datatype import DataType
from poly.core.logging.logger import G_LOGGER
from poly.core.optional_import import lazy_import

torch = lazy_import("torch", purpose="PyTorch tensors")

__all__ = [
    "is_torch", "is_numpy", "is_device_view", "to_torch", "to_numpy", "nbytes", "size", "data_ptr",
    "is_on_cpu", "is_on_gpu", "dtype", "shape", "is_contiguous", "make_contiguous", "cast", "any", "all",
    "equal", "subtract", "divide", "allclose", "max", "argmax", "min", "argmin", "mean", "std", "var",
    "median", "quantile", "abs", "isfinite", "isinf", "isnan", "ravel", "sum", "reshape", "transpose",
    "unravel_index", "topk", "view", "resize_or_reallocate", "histogram", "argwhere", "logical_not",
    "logical_xor", "logical_and", "greater", "where", "power", "sqrt", "multiply", "pad",
]


_TORCH_TYPES: dict[type, bool] = {}  # type -> whether it is torch.Tensor or derives from it


def is_torch(obj: Any) -> bool:
    """Whether ``obj`` is a ``torch.Tensor`` (found without importing PyTorch)."""
    kind = type(obj)
    if kind is np.ndarray:  # (the common case, without walking its type's bases)
        return False
    known = _TORCH_TYPES.get(kind)
    if known is None:  # (asked per output of every comparison: each type's bases walked once)
        if len(_TORCH_TYPES) >= 256:
            _TORCH_TYPES.clear()
        known = _TORCH_TYPES[kind] = builtins.any(
            cls.__module__.startswith("torch") and cls.__name__ == "Tensor" for cls in kind.__mro__)
    return known


def is_numpy(obj: Any) -> bool:
    """Whether ``obj`` is a NumPy array."""
    return isinstance(obj, np.ndarray)


def is_device_view(obj: Any) -> bool:
    """Whether ``obj`` is a ``DeviceView`` (device memory with a dtype and shape)."""
    return type(obj).__name__ in ("DeviceView", "DeviceArray") and hasattr(obj, "ptr")


def _kind(obj: Any, func_name: Any) -> str:
    if is_numpy(obj):
        return "numpy"
    if is_torch(obj):
        return "torch"
    if is_device_view(obj):
        return "device_view"
    if isinstance(obj, (numbers.Number, np.generic)):
        return "number"
    G_LOGGER.critical(f"Function: {func_name} is unsupported for objects of type: {type(obj).__name__}")


def to_torch(obj: Any) -> Any:
    """A ``torch.Tensor`` of ``obj`` (NumPy arrays share their memory)."""
    kind = _kind(obj, "to_torch")
    if kind == "torch":
        return obj
    if kind == "numpy":
        return torch.from_numpy(obj)
    if kind == "number":
        return torch.tensor(obj)
    G_LOGGER.critical(f"Function: to_torch is unsupported for objects of type: {type(obj).__name__}")


def to_numpy(obj: Any) -> Any:
    """A NumPy array of ``obj`` (tensors are copied to the host when needed)."""
    kind = _kind(obj, "to_numpy")
    if kind == "numpy":
        return obj
    if kind == "torch":
        return obj.numpy(force=True)
    if kind == "number":
        return np.array(obj)
    G_LOGGER.critical(f"Function: to_numpy is unsupported for objects of type: {type(obj).__name__}")


def _same_kind(first: Any, other: Any, func_name: Any) -> Any:
    kind = _kind(first, func_name)
    if kind == "torch":
        return to_torch(other) if not is_torch(other) else other
    return to_numpy(other) if not is_numpy(other) else other


def nbytes(obj: Any) -> Any:
    """Bytes taken by the array's elements."""
    if is_torch(obj):
        return obj.nelement() * obj.element_size()
    return int(obj.nbytes)


def size(obj: Any) -> Any:
    """The number of elements."""
    if is_torch(obj):
        return obj.nelement()
    if is_device_view(obj):
        return math.prod(obj.shape)
    return int(obj.size)


def data_ptr(obj: Any) -> Any:
    """The address of the first element."""
    if is_torch(obj):
        return obj.data_ptr()
    if is_device_view(obj):
        return obj.ptr
    return obj.ctypes.data


def is_on_cpu(obj: Any) -> Any:
    """Whether the data is in host memory."""
    if is_torch(obj):
        return obj.device.type == "cpu"
    return not is_device_view(obj)


def is_on_gpu(obj: Any) -> Any:
    """Whether the data is in device memory."""
    if is_torch(obj):
        return obj.device.type == "cuda"
    return is_device_view(obj)


def dtype(obj: Any) -> Any:
    """The ``DataTypeEntry`` of the array."""
    return DataType.from_dtype(obj.dtype)


def shape(obj: Any) -> tuple[Any, ...]:
    """The shape as a tuple of ints."""
    return tuple(int(dim) for dim in obj.shape)


def is_contiguous(obj: Any) -> Any:
    """Whether the elements are stored contiguously in row-major order."""
    if is_torch(obj):
        return obj.is_contiguous()
    return bool(obj.flags["C_CONTIGUOUS"])


def make_contiguous(obj: Any) -> Any:
    """The array itself when contiguous, else a contiguous copy."""
    if is_torch(obj):
        return obj.contiguous()
    return np.ascontiguousarray(obj)


def cast(obj: Any, data_type: Any) -> Any:
    """The array converted to ``data_type`` (anything ``DataType.from_dtype`` accepts)."""
    entry = DataType.from_dtype(data_type)
    if is_torch(obj):
        return obj.to(DataType.to_dtype(entry, "torch"))
    return obj.astype(DataType.to_dtype(entry, "numpy"))


def _reduce(obj: Any, numpy_func: Any, torch_func: Any, func_name: Any) -> Any:
    kind = _kind(obj, func_name)
    if kind == "torch":
        return torch_func(obj).item()
    return numpy_func(np.asarray(obj)).item()


def any(obj: Any) -> Any:  # noqa: A001 (Polygraphy's name)
    """Whether any element is true."""
    return builtins.bool(_reduce(obj, np.any, lambda t: torch.any(t), "any"))


def all(obj: Any) -> Any:  # noqa: A001 (Polygraphy's name)
    """Whether every element is true."""
    return builtins.bool(_reduce(obj, np.all, lambda t: torch.all(t), "all"))


def equal(lhs: Any, rhs: Any) -> Any:
    """Whether both arrays have the same shape and elements."""
    rhs = _same_kind(lhs, rhs, "equal")
    if is_torch(lhs):
        return builtins.bool(torch.equal(lhs, rhs))
    return builtins.bool(np.array_equal(lhs, rhs))


def _elementwise(lhs: Any, rhs: Any, numpy_func: Any, torch_func: Any, func_name: Any) -> Any:
    rhs = _same_kind(lhs, rhs, func_name)
    return torch_func(lhs, rhs) if is_torch(lhs) else numpy_func(lhs, rhs)


def subtract(lhs: Any, rhs: Any) -> Any:
    """``lhs - rhs``."""
    return _elementwise(lhs, rhs, np.subtract, lambda a, b: torch.subtract(a, b), "subtract")


def divide(lhs: Any, rhs: Any) -> Any:
    """``lhs / rhs``."""
    return _elementwise(lhs, rhs, np.divide, lambda a, b: torch.divide(a, b), "divide")


def allclose(lhs: Any, rhs: Any, rtol: float = 1e-5, atol: float = 1e-8) -> Any:
    """Whether ``|lhs - rhs| <= atol + rtol * |rhs|`` everywhere."""
    rhs = _same_kind(lhs, rhs, "allclose")
    if is_torch(lhs):
        return builtins.bool(torch.allclose(lhs, rhs, rtol=rtol, atol=atol))
    return builtins.bool(np.allclose(lhs, rhs, rtol=rtol, atol=atol))


def max(obj: Any) -> Any:  # noqa: A001
    """The largest element."""
    return _reduce(obj, np.amax, lambda t: torch.max(t), "max")


def min(obj: Any) -> Any:  # noqa: A001
    """The smallest element."""
    return _reduce(obj, np.amin, lambda t: torch.min(t), "min")


def argmax(obj: Any) -> Any:
    """The flat index of the largest element."""
    return _reduce(obj, np.argmax, lambda t: torch.argmax(t), "argmax")


def argmin(obj: Any) -> Any:
    """The flat index of the smallest element."""
    return _reduce(obj, np.argmin, lambda t: torch.argmin(t), "argmin")


def _float_tensor(t: Any) -> Any:
    return t if t.is_floating_point() else t.to(torch.float64)


def mean(obj: Any) -> Any:
    """The mean of the elements."""
    return _reduce(obj, np.mean, lambda t: torch.mean(_float_tensor(t)), "mean")


def std(obj: Any) -> Any:
    """The population standard deviation of the elements."""
    return _reduce(obj, np.std, lambda t: torch.std(_float_tensor(t), correction=0), "std")


def var(obj: Any) -> Any:
    """The population variance of the elements."""
    return _reduce(obj, np.var, lambda t: torch.var(_float_tensor(t), correction=0), "var")


def median(obj: Any) -> Any:
    """The median (the mean of the two middle elements for an even count)."""
    return _reduce(obj, np.median, lambda t: torch.quantile(_float_tensor(t).flatten(), 0.5), "median")


def quantile(obj: Any, q: Any) -> Any:
    """The ``q``-th quantile (linear interpolation)."""
    return _reduce(obj, lambda a: np.quantile(a, q), lambda t: torch.quantile(_float_tensor(t).flatten(), q),
                   "quantile")


def _unary(obj: Any, numpy_func: Any, torch_name: Any, func_name: Any) -> Any:
    kind = _kind(obj, func_name)
    if kind == "torch":
        return getattr(torch, torch_name)(obj)
    return numpy_func(obj)


def abs(obj: Any) -> Any:  # noqa: A001
    """Element-wise absolute value."""
    return _unary(obj, np.abs, "abs", "abs")


def isfinite(obj: Any) -> Any:
    """Element-wise: finite?"""
    return _unary(obj, np.isfinite, "isfinite", "isfinite")


def isinf(obj: Any) -> Any:
    """Element-wise: infinite?"""
    return _unary(obj, np.isinf, "isinf", "isinf")


def isnan(obj: Any) -> Any:
    """Element-wise: NaN?"""
    return _unary(obj, np.isnan, "isnan", "isnan")


def ravel(obj: Any) -> Any:
    """The elements as a 1-D array."""
    return _unary(obj, np.ravel, "ravel", "ravel")


def sum(obj: Any, axis: Any = None, keepdim: bool = False) -> Any:  # noqa: A001
    """The sum of the elements (along ``axis`` when given)."""
    if is_torch(obj):
        return torch.sum(obj) if axis is None else torch.sum(obj, dim=axis, keepdim=keepdim)
    return np.sum(obj, axis=axis, keepdims=keepdim)


def reshape(obj: Any, new_shape: Any) -> Any:
    """The array with ``new_shape``."""
    return obj.reshape(tuple(new_shape))


def transpose(obj: Any, dim0: Any, dim1: Any) -> Any:
    """The array with dimensions ``dim0`` and ``dim1`` swapped."""
    if is_torch(obj):
        return torch.transpose(obj, dim0, dim1)
    return np.swapaxes(obj, dim0, dim1)


def unravel_index(index: Any, shape: Any) -> tuple[Any, ...]:
    """The multi-dimensional index of flat ``index`` in an array of ``shape``."""
    return tuple(int(i) for i in np.unravel_index(index, shape))


def topk(obj: Any, k: Any, axis: Any) -> tuple[Any, ...]:
    """
    The ``k`` largest values along ``axis`` and their indices, largest first, as a tuple
    ``(values, indices)`` of the input's library.
    """
    if is_torch(obj):
        k = builtins.min(k, obj.shape[axis])
        result = torch.topk(obj, k, dim=axis)
        return result.values, result.indices
    k = builtins.min(k, obj.shape[axis])
    indices = np.flip(np.argsort(obj, axis=axis, kind="stable"), axis=axis).take(range(k), axis=axis)
    return np.take_along_axis(obj, indices, axis=axis), indices


def view(obj: Any, dtype: Any, shape: Any) -> Any:
    """The contiguous array's memory seen with another data type and shape (no copy)."""
    if is_device_view(obj):
        return obj.view(shape=shape, dtype=dtype)
    if not is_contiguous(obj):
        G_LOGGER.critical("Input array to view() must be contiguous in memory")
    target = DataType.to_dtype(DataType.from_dtype(dtype), "torch" if is_torch(obj) else "numpy")
    return obj.reshape(-1).view(target).reshape(tuple(shape))


def resize_or_reallocate(obj: Any, shape: Any) -> Any:
    """
    The buffer with ``shape``: resized in place when it can be, else a new buffer of the same
    data type (NumPy arrays that other arrays share cannot be resized in place).
    """
    shape = tuple(shape)
    if tuple(obj.shape) == shape:
        return obj
    if is_torch(obj):
        return obj.resize_(shape)
    if is_device_view(obj):
        return obj.resize(shape)
    try:
        obj.resize(shape, refcheck=False)
    except ValueError as err:
        G_LOGGER.warning(f"Could not resize NumPy array to shape: {shape}. Allocating a new array instead.\n"
                         f"Note: Error was: {err}")
        obj = np.empty(shape, dtype=obj.dtype)
    return obj


def histogram(obj: Any, range: Any = None) -> Any:  # noqa: A002 (Polygraphy's name)
    """Ten-bin histogram: ``(counts, bin edges)``; tensors are binned in float32 and the results
    given back in the tensor's data type."""
    if is_torch(obj):
        counts, edges = torch.histogram(obj.to(torch.float32), bins=10, range=range)
        return counts.to(obj.dtype), edges.to(obj.dtype)
    return np.histogram(obj, bins=10, range=range)


def argwhere(obj: Any) -> Any:
    """The indices of the non-zero elements, one row per element."""
    return _unary(obj, np.argwhere, "argwhere", "argwhere")


def logical_not(obj: Any) -> Any:
    """Element-wise NOT."""
    return _unary(obj, np.logical_not, "logical_not", "logical_not")


def logical_xor(lhs: Any, rhs: Any) -> Any:
    """Element-wise XOR."""
    return _elementwise(lhs, rhs, np.logical_xor, lambda a, b: torch.logical_xor(a, b), "logical_xor")


def logical_and(lhs: Any, rhs: Any) -> Any:
    """Element-wise AND."""
    return _elementwise(lhs, rhs, np.logical_and, lambda a, b: torch.logical_and(a, b), "logical_and")


def greater(lhs: Any, rhs: Any) -> Any:
    """Element-wise ``lhs > rhs``."""
    return _elementwise(lhs, rhs, np.greater, lambda a, b: torch.gt(a, b), "greater")


def where(cond: Any, lhs: Any, rhs: Any) -> Any:
    """Element-wise ``lhs`` where ``cond`` holds, else ``rhs`` (in ``cond``'s library)."""
    lhs, rhs = _same_kind(cond, lhs, "where"), _same_kind(cond, rhs, "where")
    return torch.where(cond, lhs, rhs) if is_torch(cond) else np.where(cond, lhs, rhs)


def power(obj: Any, exponent: Any) -> Any:
    """Element-wise ``obj ** exponent``."""
    if is_torch(obj):
        return torch.pow(obj, exponent)
    return np.power(obj, exponent)


def sqrt(obj: Any) -> Any:
    """Element-wise square root."""
    return _unary(obj, np.sqrt, "sqrt", "sqrt")


def multiply(lhs: Any, rhs: Any) -> Any:
    """Element-wise ``lhs * rhs``."""
    return _elementwise(lhs, rhs, np.multiply, lambda a, b: torch.mul(a, b), "multiply")


def pad(obj: Any, pads: Any, axes: Any = None, mode: str = "constant", constant_val: int = 0) -> Any:
    """
    The array padded: ``pads`` holds a ``(before, after)`` pair per axis, or per axis of ``axes``
    when given (other axes are not padded). ``mode`` is NumPy's (``"constant"`` fills with
    ``constant_val``).
    """
    rank = len(obj.shape)
    if axes is None:
        if len(pads) != rank:
            raise ValueError(f"Number of padding tuples ({len(pads)}) must match number of dimensions ({rank})")
        per_axis = [tuple(p) for p in pads]
    else:
        if len(axes) != len(pads):
            raise ValueError("Number of padding tuples and axes must be the same!")
        per_axis = [(0, 0)] * rank
        for axis, pair in zip(axes, pads, strict=True):
            per_axis[axis] = tuple(pair)
    if is_torch(obj):
        # torch's pad lists the last axis first: (last_before, last_after, previous_before, ...)
        flat = [amount for pair in reversed(per_axis) for amount in pair]
        return torch.nn.functional.pad(obj, flat, mode, constant_val)
    if mode == "constant":
        return np.pad(obj, per_axis, mode, constant_values=constant_val)  # type: ignore[call-overload]
    return np.pad(obj, per_axis, mode)  # type: ignore[call-overload]
