"""
``ModelSource``: what the runners' loaders accept as "a model" (a path, serialized bytes, a
``ModelProto``, or a callable returning one of those), resolved once, with a label for error
messages and the two ways of consuming it: as ONNX-Runtime's input, or as a ``ModelProto``.
"""

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from poly.core import G_LOGGER
from poly.core.func import invoke_if_callable
from poly.core.optional_import import lazy_import
from poly.onnx.model.errors import ModelLoadError

onnx = lazy_import("onnx")

__all__ = ["ModelSource", "PROTOBUF_LIMIT"]

PROTOBUF_LIMIT = 2_000_000_000
"""Serialized size (bytes) from which a model goes through a file with external data:
protobuf cannot serialize a message of 2 GiB or more."""


def _is_model_proto(obj: Any) -> bool:
    # Checked by name first so that paths and bytes never import onnx.
    return type(obj).__name__ == "ModelProto" and isinstance(obj, onnx.ModelProto)


class ModelSource:
    """One model given as a path, bytes or a ``ModelProto``."""

    PATH = "path"
    BYTES = "bytes"
    PROTO = "proto"

    def __init__(self, kind: Any, value: Any, label: Any) -> None:
        self.kind = kind
        self.value = value
        self.label = label
        """How error messages name the model: the quoted path, or a description."""

    @property
    def subject(self) -> Any:
        """The label capitalized, to start a sentence with."""
        return self.label[:1].upper() + self.label[1:]

    @staticmethod
    def resolve(obj: Any, what: str = "model") -> Any:
        """
        Resolves ``obj`` (calling it first when it is callable) to a ``ModelSource``.

        Raises:
            ModelLoadError: For a path that does not exist or is a directory.
            PolyException: For an object of another type.
        """
        obj = invoke_if_callable(obj)
        # Loaders returning a tuple (e.g. a model and its path) are not expected here.
        if isinstance(obj, (str, os.PathLike)):
            path = os.fspath(obj)
            if not os.path.exists(path):
                G_LOGGER.critical(f"Model file not found: '{path}'", ModelLoadError)
            if os.path.isdir(path):
                G_LOGGER.critical(f"Expected an ONNX model file, but '{path}' is a directory", ModelLoadError)
            return ModelSource(ModelSource.PATH, path, f"'{path}'")
        if isinstance(obj, (bytes, bytearray, memoryview)):
            data = bytes(obj)
            return ModelSource(ModelSource.BYTES, data, f"the serialized ONNX model ({len(data)} bytes)")
        if _is_model_proto(obj):
            name = obj.graph.name or "<unnamed graph>"
            return ModelSource(ModelSource.PROTO, obj, f"the ONNX model (graph '{name}')")
        G_LOGGER.critical(
            f"Expected the {what} as a path, serialized bytes, an onnx.ModelProto, or a callable "
            f"returning one of those; got: {type(obj).__name__}"
        )

    @contextlib.contextmanager
    def ort_input(self) -> Iterator[Any]:
        """
        Yields what ``onnxruntime.InferenceSession`` takes for this model: the path, the bytes,
        or, for a ``ModelProto``, its bytes (through a temporary file with external data when
        it is too large to serialize).
        """
        if self.kind != ModelSource.PROTO:
            yield self.value
            return
        if self.value.ByteSize() < PROTOBUF_LIMIT:
            yield self.value.SerializeToString()
            return
        import tempfile  # only for a model over the protobuf limit: not a cost of every run

        with tempfile.TemporaryDirectory(prefix="poly-onnx-") as tmpdir:
            path = os.path.join(tmpdir, "model.onnx")
            G_LOGGER.verbose(f"{self.subject} exceeds the protobuf size limit; passing it through {path}")
            # Saving with external data would rewrite the caller's tensors in place.
            model = onnx.ModelProto()
            model.CopyFrom(self.value)
            onnx.save_model(model, path, save_as_external_data=True, location="model.onnx.data")
            yield path

    def load_proto(self) -> Any:
        """
        Returns the model as a ``ModelProto`` (external data loaded). A ``ModelProto`` source
        is returned as is, not copied.

        Raises:
            ModelLoadError: When the file or bytes are not a valid ONNX model, or external data
                    is missing.
        """
        if self.kind == ModelSource.PROTO:
            return self.value
        try:
            if self.kind == ModelSource.PATH:
                model = onnx.load_model(self.value)
            else:
                model = onnx.load_model_from_string(self.value)
        except FileNotFoundError as err:
            # Only external data can be missing here: the model file was checked in resolve().
            G_LOGGER.critical(
                f"Could not load {self.label}: an external data file is missing: {err}", ModelLoadError
            )
        except Exception as err:
            if type(err).__name__ == "DecodeError":
                G_LOGGER.critical(self.not_a_model_message(), ModelLoadError)
            G_LOGGER.critical(f"Could not load {self.label}: {type(err).__name__}: {err}", ModelLoadError)
        # Protobuf parses some garbage without complaint; a model always has a graph.
        if not model.HasField("graph"):
            G_LOGGER.critical(self.not_a_model_message(), ModelLoadError)
        return model

    def not_a_model_message(self) -> str:
        """The message for a file or bytes that do not parse as an ONNX model."""
        return (
            f"{self.subject} is not a valid ONNX model: it could not be parsed as one "
            "(the data may be truncated, corrupted, or not an ONNX model)"
        )
