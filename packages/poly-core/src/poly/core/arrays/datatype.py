"""
``DataType``: one vocabulary of tensor data types, converted to and from NumPy, ONNX,
TensorRT, PyTorch and ONNX-Runtime types.

Only NumPy is imported here. ONNX types are the ``TensorProto.DataType`` integers, so they
need no import; TensorRT, PyTorch and ml_dtypes (bfloat16 and float8 NumPy types) are the
``LazyModule`` attributes ``tensorrt``, ``torch`` and ``ml_dtypes`` of this module, imported by
the first conversion that needs them, with a clear error when they are missing. Foreign dtype
objects are recognised by their type's module and name, never by importing their library.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import numpy as np

from poly.core.logging.exception import DataTypeConversionException
from poly.core.logging.logger import G_LOGGER, LogMode
from poly.core.optional_import import MissingModuleError, lazy_import, tensorrt_candidates

__all__ = ["DataType", "DataTypeEntry"]


tensorrt = lazy_import(
    tensorrt_candidates,
    install="tensorrt (or tensorrt-rtx-cu13-bindings for TensorRT-RTX)",
    purpose="Converting to TensorRT data types",
)
"""The TensorRT module of ``to_dtype(..., "tensorrt")``: ``tensorrt``, else TensorRT-RTX."""
torch = lazy_import("torch", purpose="Converting to PyTorch data types")
"""PyTorch, for ``to_dtype(..., "torch")``."""
ml_dtypes = lazy_import("ml_dtypes", purpose="NumPy's bfloat16 and float8 types")
"""ml_dtypes, for the NumPy types of bfloat16, float8 and the other types NumPy lacks."""


class _Kind(enum.Enum):
    FLOATING_POINT = 0
    INTEGRAL = 1
    OTHER = 2


_F, _I, _O = _Kind.FLOATING_POINT, _Kind.INTEGRAL, _Kind.OTHER

# member: (name, itemsize, kind, numpy name, onnx (name, TensorProto value), tensorrt name, torch name)
# NumPy names that NumPy itself lacks come from ml_dtypes.
# fmt: off
_TABLE = {
    "FLOAT64":        ("float64",        8,   _F, "float64",         ("DOUBLE", 11),         None,    "float64"),
    "FLOAT32":        ("float32",        4,   _F, "float32",         ("FLOAT", 1),           "FLOAT", "float32"),
    "FLOAT16":        ("float16",        2,   _F, "float16",         ("FLOAT16", 10),        "HALF",  "float16"),
    "FLOAT4":         ("float4",         0.5, _F, "float4_e2m1fn",   ("FLOAT4E2M1", 23),     "FP4",   None),
    "INT16":          ("int16",          2,   _I, "int16",           ("INT16", 5),           None,    "int16"),
    "INT32":          ("int32",          4,   _I, "int32",           ("INT32", 6),           "INT32", "int32"),
    "INT64":          ("int64",          8,   _I, "int64",           ("INT64", 7),           "INT64", "int64"),
    "INT8":           ("int8",           1,   _I, "int8",            ("INT8", 3),            "INT8",  "int8"),
    "INT4":           ("int4",           0.5, _I, "int4",            ("INT4", 22),           "INT4",  None),
    "UINT16":         ("uint16",         2,   _I, "uint16",          ("UINT16", 4),          None,    "uint16"),
    "UINT32":         ("uint32",         4,   _I, "uint32",          ("UINT32", 12),         None,    "uint32"),
    "UINT64":         ("uint64",         8,   _I, "uint64",          ("UINT64", 13),         None,    "uint64"),
    "UINT8":          ("uint8",          1,   _I, "uint8",           ("UINT8", 2),           "UINT8", "uint8"),
    "BOOL":           ("bool",           1,   _O, "bool",            ("BOOL", 9),            "BOOL",  "bool"),
    "STRING":         ("string",         0,   _O, "str",             ("STRING", 8),          None,    None),
    "BFLOAT16":       ("bfloat16",       2,   _F, "bfloat16",        ("BFLOAT16", 16),       "BF16",  "bfloat16"),
    "FLOAT8E4M3FN":   ("float8e4m3fn",   1,   _F, "float8_e4m3fn",   ("FLOAT8E4M3FN", 17),   "FP8",   "float8_e4m3fn"),
    "FLOAT8E4M3FNUZ": ("float8e4m3fnuz", 1,   _F, "float8_e4m3fnuz", ("FLOAT8E4M3FNUZ", 18), None,    "float8_e4m3fnuz"),
    "FLOAT8E5M2":     ("float8e5m2",     1,   _F, "float8_e5m2",     ("FLOAT8E5M2", 19),     None,    "float8_e5m2"),
    "FLOAT8E5M2FNUZ": ("float8e5m2fnuz", 1,   _F, "float8_e5m2fnuz", ("FLOAT8E5M2FNUZ", 20), None,    "float8_e5m2fnuz"),
    "FLOAT8E8M0":     ("float8e8m0",     1,   _F, "float8_e8m0fnu",  ("FLOAT8E8M0", 24),     "E8M0",  "float8_e8m0fnu"),
}

_NUMPY_BUILTIN = {"float64", "float32", "float16", "int8", "int16", "int32", "int64",
                  "uint8", "uint16", "uint32", "uint64", "bool"}
# fmt: on


class DataTypeEntry:
    """
    One data type. Do not construct these; use the members of ``DataType``.

    Entries are singletons: copying or pickling one yields the same object.
    """

    def __init__(self, member: str, name: str, itemsize: float, kind: _Kind) -> None:
        self._member = member
        self.name = name
        """The human-readable name, e.g. ``"float32"``."""
        self.itemsize = itemsize
        """Bytes per element (0.5 for 4-bit types, 0 for strings)."""
        self._kind = kind

    @property
    def is_floating(self) -> bool:
        """Whether this is a floating-point type."""
        return self._kind is _Kind.FLOATING_POINT

    @property
    def is_integral(self) -> bool:
        """Whether this is an integer type (bool is neither floating nor integral)."""
        return self._kind is _Kind.INTEGRAL

    def numpy(self) -> np.dtype[Any]:
        """Returns the NumPy dtype (see ``DataType.to_dtype``)."""
        dtype: np.dtype[Any] = DataType.to_dtype(self, "numpy")
        return dtype

    def onnx(self) -> int:
        """Returns the ONNX ``TensorProto.DataType`` value (see ``DataType.to_dtype``)."""
        value: int = DataType.to_dtype(self, "onnx")
        return value

    def tensorrt(self) -> Any:
        """Returns the TensorRT ``DataType`` (see ``DataType.to_dtype``)."""
        return DataType.to_dtype(self, "tensorrt")

    def torch(self) -> Any:
        """Returns the PyTorch dtype (see ``DataType.to_dtype``)."""
        return DataType.to_dtype(self, "torch")

    def onnxruntime(self) -> str:
        """Returns the ONNX-Runtime type string, e.g. ``"tensor(float)"``."""
        name: str = DataType.to_dtype(self, "onnxruntime")
        return name

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"DataType.{self._member}"

    def __reduce__(self) -> tuple[Callable[[str], DataTypeEntry], tuple[str]]:
        return (_entry, (self._member,))

    def __copy__(self) -> DataTypeEntry:
        return self

    def __deepcopy__(self, memo: object) -> DataTypeEntry:
        return self


def _entry(member: str) -> DataTypeEntry:
    return DataType.__members__[member]


def _normalize(name: str) -> str:
    return name.strip().lower().replace("_", "").replace("-", "")


class DataType:
    """
    The data types poly knows, as class attributes holding ``DataTypeEntry`` objects:
    FLOAT64, FLOAT32, FLOAT16, BFLOAT16, FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2,
    FLOAT8E5M2FNUZ, FLOAT8E8M0, FLOAT4, INT64, INT32, INT16, INT8, INT4, UINT64, UINT32,
    UINT16, UINT8, BOOL, STRING.
    """

    __members__ = {member: DataTypeEntry(member, *row[:3]) for member, row in _TABLE.items()}

    # set from __members__ below the class
    FLOAT64: DataTypeEntry
    FLOAT32: DataTypeEntry
    FLOAT16: DataTypeEntry
    BFLOAT16: DataTypeEntry
    FLOAT8E4M3FN: DataTypeEntry
    FLOAT8E4M3FNUZ: DataTypeEntry
    FLOAT8E5M2: DataTypeEntry
    FLOAT8E5M2FNUZ: DataTypeEntry
    FLOAT8E8M0: DataTypeEntry
    FLOAT4: DataTypeEntry
    INT64: DataTypeEntry
    INT32: DataTypeEntry
    INT16: DataTypeEntry
    INT8: DataTypeEntry
    INT4: DataTypeEntry
    UINT64: DataTypeEntry
    UINT32: DataTypeEntry
    UINT16: DataTypeEntry
    UINT8: DataTypeEntry
    BOOL: DataTypeEntry
    STRING: DataTypeEntry

    SOURCES = ("numpy", "onnx", "tensorrt", "torch", "onnxruntime")
    """Library names accepted by ``from_dtype`` (as ``source_module``) and ``to_dtype``."""

    @staticmethod
    def from_dtype(dtype: object, source_module: str | None = None, *, source: str | None = None) -> DataTypeEntry | Any:
        """
        Converts a data type of another library to a ``DataTypeEntry``.

        Accepted without ``source_module``: ``DataTypeEntry`` objects; NumPy dtypes and scalar
        types, including ml_dtypes ones such as bfloat16 (recognised by name); names such as
        ``"float32"``, ``"FLOAT16"``, ``"bfloat16"`` or ``"float8_e4m3fn"``; ONNX
        ``TensorProto`` integers; ONNX-Runtime strings such as ``"tensor(float)"``; TensorRT
        and PyTorch dtype objects. With ``source_module`` (``"onnx"``, ``"tensorrt"``...) only
        that library's types, including their names (``"FLOAT"``, ``"HALF"``), are considered.

        Args:
            dtype (Any): The data type.
            source_module (str): The library the type comes from, if known.
            source (str): Alias of ``source_module``.

        Returns:
            DataTypeEntry: The data type. A type without counterpart is returned unchanged, with
            a warning, as Polygraphy does.

        Raises:
            PolyException: If ``dtype`` is None or ``source_module`` is unknown.
        """
        source_module = source_module or source
        if dtype is None:
            G_LOGGER.critical("Could not convert: None to a poly data type")
        if isinstance(dtype, DataTypeEntry):
            return dtype

        if source_module is not None:
            if source_module not in _IMPORTERS:
                G_LOGGER.critical(
                    f"Unknown source module: {source_module!r}; known modules are: {list(_IMPORTERS)}"
                )
            result = _IMPORTERS[source_module](dtype)
        else:
            result = _guess(dtype)

        if result is None:
            G_LOGGER.warning(
                f"Could not convert: {dtype} to a corresponding poly data type. "
                "Leaving this type in its source format.",
                mode=LogMode.ONCE,
            )
            return dtype
        return result

    @staticmethod
    def to_dtype(dtype: object, target_module: str = "numpy", *, target: str | None = None) -> Any:
        """
        Converts a ``DataTypeEntry`` to the corresponding type of another library.

        Args:
            dtype (DataTypeEntry): The data type; anything else is returned unchanged.
            target_module (str):
                    ``"numpy"`` (a ``np.dtype``; bfloat16 and float8 types need ml_dtypes),
                    ``"onnx"`` (a ``TensorProto.DataType`` int; needs no onnx import),
                    ``"tensorrt"`` (needs tensorrt or tensorrt_rtx), ``"torch"`` or
                    ``"onnxruntime"`` (a string such as ``"tensor(float)"``).
                    Defaults to ``"numpy"``.
            target (str): Alias of ``target_module``.

        Returns:
            Any: The converted type.

        Raises:
            DataTypeConversionException:
                    If the library has no such type or is not installed (naming the
                    ``pip install`` that brings it).
        """
        target_module = target or target_module
        if not isinstance(dtype, DataTypeEntry):
            return dtype
        if target_module not in _EXPORTERS:
            G_LOGGER.critical(
                f"Unknown target module: {target_module!r}; known modules are: {list(_EXPORTERS)}"
            )
        result = _EXPORTERS[target_module](dtype)
        if result is None:
            G_LOGGER.critical(
                f"Could not convert poly data type: {dtype} to a corresponding {target_module} data type",
                ExceptionType=DataTypeConversionException,
            )
        return result


for _member, _value in DataType.__members__.items():
    setattr(DataType, _member, _value)

_BY_NAME = {}
for _member, _row in _TABLE.items():
    _e = DataType.__members__[_member]
    for _alias in (_member, _row[0], _row[3]):
        _BY_NAME[_normalize(_alias)] = _e

_BY_NUMPY_NAME = {row[3]: DataType.__members__[m] for m, row in _TABLE.items() if row[3] != "str"}
_BY_ONNX_NAME = {row[4][0]: DataType.__members__[m] for m, row in _TABLE.items()}
_BY_ONNX_VALUE = {row[4][1]: DataType.__members__[m] for m, row in _TABLE.items()}
_BY_TRT_NAME = {row[5]: DataType.__members__[m] for m, row in _TABLE.items() if row[5]}
_BY_TORCH_NAME = {row[6]: DataType.__members__[m] for m, row in _TABLE.items() if row[6]}
_BY_TORCH_NAME.update({"double": DataType.FLOAT64, "float": DataType.FLOAT32, "half": DataType.FLOAT16})


def _onnxrt_string(member: Any) -> str:
    return f"tensor({_TABLE[member][4][0].lower()})"


_BY_ONNXRT = {_onnxrt_string(m): DataType.__members__[m] for m in _TABLE}


# -- importers: return a DataTypeEntry or None ----------------------------------------------


def _type_module(obj: Any) -> Any:
    return (getattr(type(obj), "__module__", None) or "").split(".")[0]


def _from_numpy(dtype: Any) -> Any:
    try:
        dtype = np.dtype(dtype)
    except (TypeError, ValueError):
        return None
    if dtype.kind == "U":
        return DataType.STRING
    return _BY_NUMPY_NAME.get(dtype.name)


def _from_onnx(dtype: Any) -> Any:
    if isinstance(dtype, bool):
        return None
    if isinstance(dtype, (int, np.integer)):
        return _BY_ONNX_VALUE.get(int(dtype))
    if isinstance(dtype, str):
        return _BY_ONNX_NAME.get(dtype.strip().upper())
    return None


def _trt_name(dtype: Any) -> Any:
    if isinstance(dtype, str):
        return dtype.strip().split(".")[-1].upper()
    name = getattr(dtype, "name", None)
    return name.upper() if isinstance(name, str) else None


def _from_tensorrt(dtype: Any) -> Any:
    if not isinstance(dtype, str) and not _type_module(dtype).startswith("tensorrt"):
        return None
    return _BY_TRT_NAME.get(_trt_name(dtype))


def _from_torch(dtype: Any) -> Any:
    text = str(dtype)
    if isinstance(dtype, str) or _type_module(dtype) == "torch":
        return _BY_TORCH_NAME.get(text.strip().removeprefix("torch."))
    return None


def _from_onnxruntime(dtype: Any) -> Any:
    return _BY_ONNXRT.get(dtype.strip()) if isinstance(dtype, str) else None


def _from_string(name: Any) -> Any:
    name = name.strip()
    if name.startswith("tensor("):
        return _from_onnxruntime(name)
    entry = _BY_NAME.get(_normalize(name))
    if entry is not None:
        return entry
    try:
        return _from_numpy(np.dtype(name))
    except (TypeError, ValueError):
        return None


def _guess(dtype: Any) -> Any:
    if isinstance(dtype, str):
        return _from_string(dtype)
    if isinstance(dtype, bool):
        return None
    if isinstance(dtype, (int, np.integer)):
        return _from_onnx(dtype)
    module = _type_module(dtype)
    if module.startswith("tensorrt"):
        return _from_tensorrt(dtype)
    if module == "torch":
        return _from_torch(dtype)
    return _from_numpy(dtype)


_IMPORTERS = {
    "numpy": _from_numpy,
    "onnx": _from_onnx,
    "tensorrt": _from_tensorrt,
    "torch": _from_torch,
    "onnxruntime": _from_onnxruntime,
}


# -- exporters: return the foreign type or None ------------------------------------------------


def _to_numpy(entry: Any) -> Any:
    name = _TABLE[entry._member][3]
    if name == "str":
        return np.dtype(np.str_)
    if name in _NUMPY_BUILTIN:
        return np.dtype(name)
    try:
        typ = getattr(ml_dtypes, name, None)
    except MissingModuleError:
        raise DataTypeConversionException(
            f"NumPy has no {entry.name} type without ml_dtypes: pip install ml-dtypes"
        ) from None
    return np.dtype(typ) if typ is not None else None


def _to_onnx(entry: Any) -> Any:
    return _TABLE[entry._member][4][1]


def _to_tensorrt(entry: Any) -> Any:
    name = _TABLE[entry._member][5]
    if name is None:
        return None
    try:
        trt_types = getattr(tensorrt, "DataType", None)
    except MissingModuleError:
        raise DataTypeConversionException(
            "TensorRT is not installed: pip install tensorrt (or tensorrt-rtx-cu13-bindings for TensorRT-RTX)"
        ) from None
    return getattr(trt_types, name, None)


def _to_torch(entry: Any) -> Any:
    name = _TABLE[entry._member][6]
    if name is None:
        return None
    try:
        return getattr(torch, name, None)
    except MissingModuleError:
        raise DataTypeConversionException("PyTorch is not installed: pip install torch") from None


def _to_onnxruntime(entry: Any) -> Any:
    return _onnxrt_string(entry._member)


_EXPORTERS = {
    "numpy": _to_numpy,
    "onnx": _to_onnx,
    "tensorrt": _to_tensorrt,
    "torch": _to_torch,
    "onnxruntime": _to_onnxruntime,
}
