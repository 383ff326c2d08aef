"""``NamedTemporaryFile``: a temporary file that can be opened again by name on every platform."""

import os
import tempfile
import weakref
from typing import Any

__all__ = ["NamedTemporaryFile"]


def _remove_quietly(path: Any) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


class NamedTemporaryFile:
    """
    A temporary file, created empty at construction under ``tempfile.gettempdir()``.

    ``with NamedTemporaryFile("w+") as f:`` opens it (default mode ``"wb+"``) and, on exit,
    flushes, syncs and closes it; unlike ``tempfile.NamedTemporaryFile`` the file may be opened
    again by its ``name`` meanwhile (also on Windows), and it stays on disk after the block: it is
    removed when this object is garbage-collected.
    """

    def __init__(self, mode: Any = None, prefix: Any = None, suffix: Any = None) -> None:
        """
        Args:
            mode (str): The mode ``__enter__`` opens the file with. Defaults to ``"wb+"``.
            prefix (str): The start of the file name.
            suffix (str): The end of the file name (``".onnx"``).
        """
        self.mode = "wb+" if mode is None else mode
        fd, self.name = tempfile.mkstemp(prefix=prefix or "", suffix=suffix or "")
        os.close(fd)
        self._handle: Any = None
        self._finalizer = weakref.finalize(self, _remove_quietly, self.name)

    def __enter__(self) -> Any:
        self._handle = open(self.name, self.mode)
        return self._handle

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
