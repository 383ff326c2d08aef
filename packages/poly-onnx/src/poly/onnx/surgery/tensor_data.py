"""
Reading and writing the values of an initializer (``onnx.TensorProto``) in place, for the weight
edits: bfloat16 as float32 values (NumPy has no bfloat16; rounded to nearest even when written),
types NumPy has as raw little-endian bytes, other types (float8, 4-bit) through ONNX's own
conversion.
"""

from typing import Any

import numpy as np

from poly.core import G_LOGGER
from poly.core.optional_import import lazy_import

onnx = lazy_import("onnx")
numpy_helper = lazy_import("onnx.numpy_helper")

__all__ = ["TENSOR_DATA_FIELDS", "type_name", "clear_data", "copy_data", "read_values", "write_values"]

TENSOR_DATA_FIELDS = ("raw_data", "float_data", "int32_data", "string_data", "int64_data", "double_data",
                      "uint64_data")
"""The fields of a ``TensorProto`` that may hold its values."""

_NUMPY_TYPES = {"FLOAT": "float32", "FLOAT16": "float16", "DOUBLE": "float64", "INT8": "int8", "INT16": "int16",
                "INT32": "int32", "INT64": "int64", "UINT8": "uint8", "UINT16": "uint16", "UINT32": "uint32",
                "UINT64": "uint64", "BOOL": "bool"}
"""ONNX data types whose raw data is the little-endian bytes of a NumPy array of this type."""


def type_name(data_type: Any) -> Any:
    """The name of an ONNX data type (``1`` -> ``"FLOAT"``)."""
    return onnx.TensorProto.DataType.Name(data_type)


def clear_data(tensor: Any) -> None:
    """Removes the values of ``tensor``, keeping its name, data type, dimensions and doc string."""
    for field in TENSOR_DATA_FIELDS:
        tensor.ClearField(field)


def copy_data(src: Any, dst: Any) -> None:
    """Replaces the values of ``dst`` with those of ``src`` (tensors of one type and shape)."""
    clear_data(dst)
    dst.raw_data = src.raw_data
    for field in TENSOR_DATA_FIELDS[1:]:
        getattr(dst, field).extend(getattr(src, field))


def read_values(tensor: Any) -> Any:
    """The values of ``tensor`` as a NumPy array of its shape (bfloat16 as float32)."""
    if tensor.data_type == onnx.TensorProto.BFLOAT16:
        if tensor.raw_data:
            bits = np.frombuffer(tensor.raw_data, dtype="<u2")
        else:  # one bfloat16 in the low 16 bits of each int32
            bits = np.array(tensor.int32_data, dtype=np.uint32).astype(np.uint16)
        return (bits.astype(np.uint32) << 16).view(np.float32).reshape(tuple(tensor.dims))
    return numpy_helper.to_array(tensor)


def write_values(tensor: Any, values: Any) -> None:
    """Stores ``values`` (numbers of the tensor's shape) in ``tensor`` as its own data type, in place."""
    name = type_name(tensor.data_type)
    if name == "BFLOAT16":
        bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # to nearest even
        clear_data(tensor)
        tensor.raw_data = rounded.astype("<u2").tobytes()
    elif name in _NUMPY_TYPES:
        clear_data(tensor)
        dtype = np.dtype(_NUMPY_TYPES[name]).newbyteorder("<")
        tensor.raw_data = np.ascontiguousarray(values).astype(dtype).tobytes()
    else:
        try:
            made = onnx.helper.make_tensor(tensor.name, tensor.data_type, list(tensor.dims),
                                           np.asarray(values, dtype=np.float32).ravel().tolist())
        except Exception as err:
            G_LOGGER.critical(f"Cannot write values of data type {name} to initializer {tensor.name}: {err}")
        copy_data(made, tensor)
