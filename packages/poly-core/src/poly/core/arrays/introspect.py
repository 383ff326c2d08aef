"""Duck-typed access to the dtype and shape of arrays from any library (NumPy, CuPy, PyTorch...)."""

from __future__ import annotations

import numpy as np

from poly.core.arrays.datatype import DataType, DataTypeEntry

__all__ = ["array_dtype", "array_shape"]


def array_dtype(arr: object) -> DataTypeEntry:
    """
    Returns the ``DataTypeEntry`` of an array-like: anything with a ``dtype`` attribute, or an
    object exposing ``__cuda_array_interface__`` / ``__array_interface__``.
    """
    dtype = getattr(arr, "dtype", None)
    if dtype is None:
        interface = getattr(arr, "__cuda_array_interface__", None) or getattr(
            arr, "__array_interface__", None
        )
        if interface is None:
            raise TypeError(f"Cannot determine the data type of an object of type {type(arr).__name__}")
        dtype = np.dtype(interface["typestr"])
    return DataType.from_dtype(dtype)


def array_shape(arr: object) -> tuple[int, ...]:
    """Returns the shape of an array-like as a tuple of ints."""
    shape = getattr(arr, "shape", None)
    if shape is None:
        interface = getattr(arr, "__cuda_array_interface__", None) or getattr(
            arr, "__array_interface__", None
        )
        if interface is None:
            raise TypeError(f"Cannot determine the shape of an object of type {type(arr).__name__}")
        shape = interface["shape"]
    return tuple(int(dim) for dim in shape)
