"""
Loaders of raw bytes: ``BytesFromPath`` reads a file, ``SaveBytes`` writes bytes (or a loader's
bytes) to a file. Both are lazy loaders with immediately evaluated twins (``bytes_from_path``,
``save_bytes``); Polygraphy's ``polygraphy.backend.common`` names.
"""

import os
from typing import Any

from poly.core.backend.loader import BaseLoader
from poly.core.files.read_write import load_file, save_file
from poly.core.func import funcify, invoke_if_callable
from poly.core.logging.logger import G_LOGGER

__all__ = ["BytesFromPath", "bytes_from_path", "SaveBytes", "save_bytes"]


class BytesFromPath(BaseLoader):
    """Loader that reads a file's bytes."""

    def __init__(self, path: Any) -> None:
        """
        Args:
            path (Union[str, os.PathLike, Callable() -> str]): The file, or a loader of its path.
        """
        self.path = path

    def call_impl(self) -> Any:
        """
        Returns:
            bytes: The file's contents.
        """
        path = os.fspath(invoke_if_callable(self.path))
        try:
            return load_file(path, description="bytes")
        except OSError as err:
            G_LOGGER.critical(f"Cannot read '{path}': {err.strerror or err}")


class SaveBytes(BaseLoader):
    """Loader that writes bytes to a file (atomically) and returns them."""

    def __init__(self, obj: Any, path: Any) -> None:
        """
        Args:
            obj (Union[bytes, Callable() -> bytes]): The bytes, or a loader of them.
            path (Union[str, os.PathLike]): The file; missing parent directories are created.
        """
        self.obj = obj
        self.path = path

    def call_impl(self) -> Any:
        """
        Returns:
            bytes: The bytes saved.
        """
        data = invoke_if_callable(self.obj)
        path = os.fspath(self.path)
        try:
            save_file(data, path, description="bytes")
        except OSError as err:
            G_LOGGER.critical(f"Cannot write '{path}': {err.strerror or err}")
        return data


bytes_from_path = funcify(BytesFromPath)
save_bytes = funcify(SaveBytes)
