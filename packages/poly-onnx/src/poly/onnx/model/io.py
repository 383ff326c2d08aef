"""
Reading and writing ONNX models: ``OnnxFromPath`` (external data too), ``OnnxFromBytes``,
``BytesFromOnnx`` and ``SaveOnnx`` (external data with a size threshold, in one file or one
file per tensor). Every file is written to a temporary name and renamed into place.
"""

import os
import re
from collections.abc import Iterator
from typing import Any

from poly.core import G_LOGGER, BaseLoader, atomic_write, atomic_write_bytes
from poly.core.func import funcify, invoke_if_callable
from poly.core.optional_import import lazy_import
from poly.onnx.model.base import (
    PROTOBUF_THRESHOLD,
    describe_source,
    iter_graphs,
    load_model,
    model_size,
    tensor_size,
)
from poly.onnx.model.errors import (
    ModelLoadError,
    check_external_data,
    external_data_tensors,
    parse_model_bytes,
)

external_data_helper = lazy_import("onnx.external_data_helper")
onnx = lazy_import("onnx")

__all__ = [
    "OnnxFromPath",
    "onnx_from_path",
    "OnnxFromBytes",
    "onnx_from_bytes",
    "BytesFromOnnx",
    "bytes_from_onnx",
    "SaveOnnx",
    "save_onnx",
]

DEFAULT_EXTERNAL_DATA_SIZE_THRESHOLD = 1024
"""Tensors of at least this many bytes go to the external data file (as in onnx and Polygraphy)."""

_ALIGN_LARGE = 1 << 16
_LARGE_TENSOR = 1 << 20  # tensors this big start at 64 KiB offsets, so runtimes can map them


class OnnxFromPath(BaseLoader):
    """
    Functor that loads an ONNX model from a file, with its external data.
    """

    def __init__(self, path: Any, external_data_dir: Any = None, ignore_external_data: Any = None) -> None:
        """
        Loads an ONNX model from a file.

        Args:
            path (Union[str, os.PathLike]): The path from which to load the model.
            external_data_dir (str):
                    The directory where the model's external data is stored.
                    Defaults to the directory of the model file.
            ignore_external_data (bool):
                    Whether to load only the model structure, leaving externally stored tensors
                    unloaded. Such a model suits inspection or subgraph extraction, not running.
                    Defaults to False.
        """
        self.path = path
        self.external_data_dir = external_data_dir
        self.ignore_external_data = bool(ignore_external_data)

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The ONNX model.

        Raises:
            ModelLoadError: If the file is missing, truncated or not an ONNX model, or if an
                    external data file is missing or short.
        """
        path = os.fspath(self.path)
        source = describe_source(path)
        G_LOGGER.info(f"Loading model: {path}")
        if not os.path.exists(path):
            G_LOGGER.critical(f"Failed to load ONNX model {source}: the file does not exist", ModelLoadError)
        if os.path.isdir(path):
            G_LOGGER.critical(
                f"Failed to load ONNX model {source}: it is a directory, not a file", ModelLoadError
            )

        with open(path, "rb") as f:
            model = parse_model_bytes(f.read(), source)

        if not any(True for _ in external_data_tensors(model)):
            return model

        if self.ignore_external_data:
            G_LOGGER.verbose(f"Not loading the external data of {source}")
            return model

        base_dir = os.fspath(self.external_data_dir) if self.external_data_dir is not None else None
        base_dir = base_dir or os.path.dirname(os.path.abspath(path))
        G_LOGGER.verbose(f"Loading external data from: {base_dir}")
        check_external_data(model, base_dir, source)
        try:
            external_data_helper.load_external_data_for_model(model, base_dir)
        except Exception as err:
            G_LOGGER.critical(
                f"Failed to load the external data of ONNX model {source} from '{base_dir}': {err}",
                ModelLoadError,
            )
        return model


class OnnxFromBytes(BaseLoader):
    """
    Functor that deserializes an ONNX model.
    """

    def __init__(self, serialized_onnx: Any) -> None:
        """
        Deserializes an ONNX model.

        Args:
            serialized_onnx (Union[bytes, Callable() -> bytes]):
                    A serialized ONNX model or a callable that returns one.
        """
        self._serialized_onnx = serialized_onnx

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The ONNX model.

        Raises:
            ModelLoadError: If the bytes are not a complete ONNX model.
        """
        return parse_model_bytes(invoke_if_callable(self._serialized_onnx), "from bytes")


class BytesFromOnnx(BaseLoader):
    """
    Functor that serializes an ONNX model.
    """

    def __init__(self, model: Any) -> None:
        """
        Serializes an ONNX model.

        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    An ONNX model or a callable that returns one.
        """
        self._model = model

    def call_impl(self) -> Any:
        """
        Returns:
            bytes: The serialized model.
        """
        model = load_model(self._model)
        size = model_size(model)
        if size >= 2**31:
            G_LOGGER.critical(
                f"Cannot serialize an ONNX model of {size / 1024**3:.2f} GiB to bytes: protobuf is limited "
                "to 2 GiB. Save it with external data instead: SaveOnnx(model, path, external_data_path='')"
            )
        return model.SerializeToString()


def _initializers(model: Any) -> Iterator[Any]:
    for graph in iter_graphs(model.graph):
        yield from graph.initializer


def _check_location(location: Any, model_dir: Any) -> Any:
    # External data must live under the model's directory: runtimes refuse paths that leave it.
    if os.path.isabs(location):
        rel = os.path.relpath(location, model_dir)
    else:
        rel = os.path.normpath(location)
    if rel.startswith(os.pardir) or os.path.isabs(rel):
        G_LOGGER.critical(
            f"External data path '{location}' must be inside the model's directory '{model_dir}'"
        )
    return rel


def _file_name_for(tensor_name: Any, used: Any) -> Any:
    base = re.sub(r"[^A-Za-z0-9._-]", "_", tensor_name).lstrip(".") or "tensor"
    name, index = base, 1
    while name in used:
        name = f"{base}_{index}"
        index += 1
    used.add(name)
    return name


def _is_repeated(field: Any) -> Any:
    is_repeated = getattr(field, "is_repeated", None)  # protobuf >= 6; older ones have label
    return is_repeated if is_repeated is not None else field.label == field.LABEL_REPEATED


def _copy_fields(src: Any, dst: Any, skip: Any = ()) -> None:
    for field, value in src.ListFields():
        if field.name in skip:
            continue
        if _is_repeated(field):
            getattr(dst, field.name).extend(value)
        elif field.message_type is not None:
            getattr(dst, field.name).CopyFrom(value)
        else:
            setattr(dst, field.name, value)


def _external_tensor(tensor: Any, location: Any, offset: Any, length: Any) -> Any:
    # The tensor's description without its bytes.
    ref = onnx.TensorProto()
    _copy_fields(tensor, ref, skip=("raw_data", "data_location", "external_data"))
    ref.data_location = onnx.TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = ref.external_data.add()
        entry.key, entry.value = key, value
    return ref


def _skeleton(model: Any, placed: Any) -> Any:
    """
    A copy of ``model`` whose externalized initializers refer to their files. Only the small
    parts are copied; the caller's model is neither modified nor duplicated.
    """
    by_name = {tensor.name: (location, offset, length) for tensor, _, location, offset, length in placed}
    skeleton = onnx.ModelProto()
    _copy_fields(model, skeleton, skip=("graph",))
    _copy_fields(model.graph, skeleton.graph, skip=("initializer",))
    for tensor in model.graph.initializer:
        if tensor.name in by_name:
            skeleton.graph.initializer.append(_external_tensor(tensor, *by_name[tensor.name]))
        else:
            skeleton.graph.initializer.add().CopyFrom(tensor)
    return skeleton


def _write_external(tensors: Any, model_dir: Any, location: Any, one_file: Any, reserved: Any) -> Any:
    """Writes the tensors' bytes; returns (tensor, path, location, offset, length) for each."""
    placed = []
    if one_file:
        data_path = os.path.join(model_dir, location)
        with atomic_write(data_path, "wb") as f:
            offset = 0
            for tensor in tensors:
                data = tensor.raw_data
                if len(data) >= _LARGE_TENSOR and offset % _ALIGN_LARGE:
                    pad = _ALIGN_LARGE - offset % _ALIGN_LARGE
                    f.write(b"\0" * pad)
                    offset += pad
                f.write(data)
                placed.append((tensor, data_path, location, offset, len(data)))
                offset += len(data)
        return placed

    subdir = os.path.dirname(location)
    used = set(reserved)
    for tensor in tensors:
        tensor_location = os.path.join(subdir, _file_name_for(tensor.name, used))
        data_path = os.path.join(model_dir, tensor_location)
        data = tensor.raw_data
        atomic_write_bytes(data_path, data)
        placed.append((tensor, data_path, tensor_location, 0, len(data)))
    return placed


class SaveOnnx(BaseLoader):
    """
    Functor that saves an ONNX model to the specified path.
    """

    def __init__(
        self,
        model: Any,
        path: Any,
        external_data_path: Any = None,
        size_threshold: Any = None,
        all_tensors_to_one_file: Any = None,
        durable: bool = True,
    ) -> None:
        """
        Saves an ONNX model to the specified path.

        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    An ONNX model or a callable that returns one.
            path (Union[str, os.PathLike]): Path at which to write the ONNX model.
            external_data_path (str):
                    Where to write tensor data outside the model file, relative to the model's
                    directory (and inside it). An empty string means ``<model file name>.data``.
                    None disables external data, unless the model is too large for one protobuf
                    (about 2 GB), in which case the default location is used with a warning.
                    With ``all_tensors_to_one_file=False``, tensors are written to one file each,
                    named after the tensor, in the directory part of this path.
            size_threshold (int):
                    Tensors of at least this many bytes are written to external data; smaller
                    ones stay in the model file. Defaults to 1024.
            all_tensors_to_one_file (bool):
                    Whether all external tensors share one file. Defaults to True.
            durable (bool):
                    Whether the model file is flushed to disk before returning (it is written
                    atomically either way). False suits short-lived files, like the candidate
                    models of ``debug reduce``. Defaults to True.
        """
        self._model = model
        self.path = path
        self.external_data_path = external_data_path
        self.size_threshold = size_threshold
        self.all_tensors_to_one_file = all_tensors_to_one_file
        self.durable = durable

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The model, unchanged: tensors written to external data stay in memory too.
        """
        model = load_model(self._model)
        path = os.fspath(self.path)
        G_LOGGER.info(f"Saving ONNX model to: {path}")

        external_data_path = self.external_data_path
        size = model_size(model)
        if external_data_path is None and size >= PROTOBUF_THRESHOLD:
            external_data_path = ""
            G_LOGGER.warning(
                f"Model size ({size / 1024**2:.1f} MiB) exceeds the protobuf limit; writing tensor "
                "data to an external file. Use external_data_path to choose its location."
            )

        if external_data_path is None:
            for name in ("size_threshold", "all_tensors_to_one_file"):
                if getattr(self, name) is not None:
                    G_LOGGER.warning(
                        f"{name} is set, but external_data_path is not: no external data is written"
                    )
            atomic_write_bytes(path, model.SerializeToString(), durable=self.durable)
            return model

        self._save_with_external_data(model, path, external_data_path)
        return model

    def _save_with_external_data(self, model: Any, path: Any, external_data_path: Any) -> None:
        model_dir = os.path.dirname(os.path.abspath(path))
        location = external_data_path or f"{os.path.basename(path)}.data"
        location = _check_location(location, model_dir)
        threshold = (
            DEFAULT_EXTERNAL_DATA_SIZE_THRESHOLD if self.size_threshold is None else self.size_threshold
        )
        one_file = True if self.all_tensors_to_one_file is None else bool(self.all_tensors_to_one_file)
        G_LOGGER.verbose(f"Saving external data for ONNX model to: {os.path.join(model_dir, location)}")

        # Top-level initializers are externalized (those of If/Loop bodies stay inline); they are
        # measured without copying their bytes out of protobuf.
        tensors = [
            t
            for t in model.graph.initializer
            if t.data_location != onnx.TensorProto.EXTERNAL
            and t.HasField("raw_data")
            and tensor_size(t) >= threshold
        ]
        if any(t.data_location == onnx.TensorProto.EXTERNAL for t in _initializers(model)):
            G_LOGGER.warning(
                "Some tensors of this model were never loaded from their external data; "
                "the saved model keeps referring to their original files"
            )
        os.makedirs(model_dir, exist_ok=True)
        placed = _write_external(tensors, model_dir, location, one_file, reserved={os.path.basename(path)})
        serialized = _skeleton(model, placed).SerializeToString()
        atomic_write_bytes(path, serialized)


onnx_from_path = funcify(OnnxFromPath)
onnx_from_bytes = funcify(OnnxFromBytes)
bytes_from_onnx = funcify(BytesFromOnnx)
save_onnx = funcify(SaveOnnx)
