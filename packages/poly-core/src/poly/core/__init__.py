"""poly.core: the logger, JSON, constants, data types, metadata and base classes shared by poly."""

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
from poly.core.logging.exception import DataFormatError, DataTypeConversionException, PolyException
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
