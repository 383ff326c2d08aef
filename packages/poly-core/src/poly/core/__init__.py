"""poly.core: the logger, JSON, constants, data types, metadata and base classes shared by poly.

Its names are imported on first use (``poly.core.optional_import.lazy_exports``): ``import
poly.core``, and ``from poly import constants``, import neither NumPy nor any submodule they do not
read. The imports under ``TYPE_CHECKING`` are the same names, for type checkers."""

from typing import TYPE_CHECKING

from poly.core.optional_import import lazy_exports

if TYPE_CHECKING:
    from poly.core import constants
    from poly.core.arrays.datatype import DataType, DataTypeEntry
    from poly.core.arrays.introspect import array_dtype, array_shape
    from poly.core.backend.loader import BaseLoader
    from poly.core.backend.runner import BaseRunner
    from poly.core.constants import MARK_ALL
    from poly.core.files.read_write import (
        atomic_write,
        atomic_write_bytes,
        atomic_write_text,
        load_file,
        save_file,
    )
    from poly.core.func import extend, funcify, invoke_if_callable
    from poly.core.json import Decoder, Encoder, add_json_methods, from_json, load_json, save_json, to_json
    from poly.core.logging.exception import (
        DataFormatError,
        DataTypeConversionException,
        PolyException,
        PolyUsageError,
    )
    from poly.core.logging.logger import G_LOGGER, Logger, LogMode
    from poly.core.optional_import import LazyModule, MissingModuleError, has_module, lazy_import
    from poly.core.tensors.metadata import MetadataTuple, TensorMetadata
    from poly.core.tensors.shape import BoundedShape

__all__ = [
    "constants",
    "MARK_ALL",
    "array_dtype",
    "array_shape",
    "DataType",
    "DataTypeEntry",
    "PolyException",
    "PolyUsageError",
    "DataFormatError",
    "DataTypeConversionException",
    "atomic_write",
    "atomic_write_bytes",
    "atomic_write_text",
    "save_file",
    "load_file",
    "extend",
    "funcify",
    "invoke_if_callable",
    "Encoder",
    "Decoder",
    "add_json_methods",
    "to_json",
    "from_json",
    "save_json",
    "load_json",
    "BaseLoader",
    "G_LOGGER",
    "Logger",
    "LogMode",
    "MetadataTuple",
    "TensorMetadata",
    "LazyModule",
    "MissingModuleError",
    "lazy_import",
    "has_module",
    "BaseRunner",
    "BoundedShape",
]

__getattr__, __dir__ = lazy_exports(__name__, {
    "constants": "poly.core.constants",
    "DataType": "poly.core.arrays.datatype",
    "DataTypeEntry": "poly.core.arrays.datatype",
    "array_dtype": "poly.core.arrays.introspect",
    "array_shape": "poly.core.arrays.introspect",
    "BaseLoader": "poly.core.backend.loader",
    "BaseRunner": "poly.core.backend.runner",
    "MARK_ALL": "poly.core.constants",
    "atomic_write": "poly.core.files.read_write",
    "atomic_write_bytes": "poly.core.files.read_write",
    "atomic_write_text": "poly.core.files.read_write",
    "load_file": "poly.core.files.read_write",
    "save_file": "poly.core.files.read_write",
    "extend": "poly.core.func",
    "funcify": "poly.core.func",
    "invoke_if_callable": "poly.core.func",
    "Decoder": "poly.core.json",
    "Encoder": "poly.core.json",
    "add_json_methods": "poly.core.json",
    "from_json": "poly.core.json",
    "load_json": "poly.core.json",
    "save_json": "poly.core.json",
    "to_json": "poly.core.json",
    "DataFormatError": "poly.core.logging.exception",
    "DataTypeConversionException": "poly.core.logging.exception",
    "PolyException": "poly.core.logging.exception",
    "PolyUsageError": "poly.core.logging.exception",
    "G_LOGGER": "poly.core.logging.logger",
    "Logger": "poly.core.logging.logger",
    "LogMode": "poly.core.logging.logger",
    "LazyModule": "poly.core.optional_import",
    "MissingModuleError": "poly.core.optional_import",
    "has_module": "poly.core.optional_import",
    "lazy_import": "poly.core.optional_import",
    "MetadataTuple": "poly.core.tensors.metadata",
    "TensorMetadata": "poly.core.tensors.metadata",
    "BoundedShape": "poly.core.tensors.shape",
})
