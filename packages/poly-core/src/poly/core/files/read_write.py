"""
Crash-safe file writing.

Every file poly writes goes to a temporary name in the destination's directory and is then
renamed over the destination, so a reader never sees a half-written file and an error
mid-write leaves the previous file untouched.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import threading
from collections.abc import Iterator
from typing import IO, Any, TypeGuard, cast

StrPath = str | os.PathLike[str]
"""A path: ``str`` or ``os.PathLike``."""
BytesLike = bytes | bytearray | memoryview
"""The bytes-like objects poly writes."""

__all__ = ["atomic_write", "atomic_write_bytes", "atomic_write_text", "save_file", "load_file", "mapped_file"]

_UMASK: int | None = None
_UMASK_LOCK = threading.Lock()


def _umask() -> int:
    # os.umask can only be read by setting it; do it once, under a lock.
    global _UMASK
    with _UMASK_LOCK:
        if _UMASK is None:
            _UMASK = os.umask(0o022)
            os.umask(_UMASK)
        return _UMASK


def _final_permissions(path: StrPath) -> int:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _fsync_dir(dir_path: StrPath) -> None:
    # Makes the rename itself durable; not every platform lets a directory be opened.
    try:
        fd = os.open(dir_path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(path: StrPath, mode: str = "wb", encoding: str | None = None, newline: str | None = None,
                 durable: bool = True) -> Iterator[IO[Any]]:
    """
    Context manager that yields a file object whose contents replace ``path`` on success.

    The data is written to a temporary file next to ``path`` (created along with any missing
    parent directories), flushed to disk and renamed over ``path`` when the block exits
    normally. If the block raises, the temporary file is removed, ``path`` keeps its previous
    contents (or stays absent) and the exception propagates.

    Args:
        path (Union[str, os.PathLike]): The destination.
        mode (str): ``"wb"`` (default) or ``"w"``; only whole-file write modes are accepted.
        encoding (str): Text encoding in text mode. Defaults to UTF-8.
        newline (str): Passed to ``open`` in text mode.
        durable (bool): Whether to flush the data and the rename to disk (fsync) before returning.
                False keeps the write atomic for readers and against a crash of the process, not
                against a power loss: for files rewritten often and cheap to lose (a debug
                session's replay, written after every iteration).

    Yields:
        file: The open temporary file.
    """
    if mode not in ("w", "wt", "wb"):
        raise ValueError(f"atomic_write supports modes 'w', 'wt' and 'wb', not {mode!r}")
    path = os.fspath(path)
    dir_path = os.path.dirname(os.path.abspath(path))
    os.makedirs(dir_path, exist_ok=True)
    permissions = _final_permissions(path)

    import tempfile  # here: with shutil and random it costs every start-up, and only writes need it

    try:
        fd, tmp_path = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=dir_path)
    except OSError as err:  # named by the file asked for, not by the temporary one (".x.onnx.k3j2.tmp")
        raise type(err)(err.errno, err.strerror, path) from None
    try:
        f: IO[Any]
        if "b" in mode:
            f = os.fdopen(fd, "wb")
        else:
            f = os.fdopen(fd, "w", encoding=encoding or "utf-8", newline=newline)
        with f:
            yield f
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.chmod(tmp_path, permissions)
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp_path)
        raise
    if durable:
        _fsync_dir(dir_path)


def atomic_write_bytes(path: StrPath, data: BytesLike, durable: bool = True) -> None:
    """
    Atomically replaces ``path`` with ``data``.

    Args:
        path (Union[str, os.PathLike]): The destination.
        data (bytes-like): The contents.
        durable (bool): Whether the write is flushed to disk (see ``atomic_write``).
    """
    with atomic_write(path, "wb", durable=durable) as f:
        f.write(data)


def atomic_write_text(path: StrPath, text: str, encoding: str = "utf-8") -> None:
    """
    Atomically replaces ``path`` with ``text``.

    Args:
        path (Union[str, os.PathLike]): The destination.
        text (str): The contents.
        encoding (str): The text encoding. Defaults to UTF-8.
    """
    with atomic_write(path, "w", encoding=encoding) as f:
        f.write(text)


def _is_file_like(obj: object) -> TypeGuard[IO[Any]]:
    return hasattr(obj, "write") or hasattr(obj, "read")


def save_file(contents: str | BytesLike, dest: StrPath | IO[Any], mode: str = "wb", description: str | None = None,
              durable: bool = True) -> StrPath | IO[Any]:
    """
    Writes ``contents`` to a path (atomically) or to a file-like object.

    Args:
        contents (Union[str, bytes-like]): The data to write.
        dest (Union[str, os.PathLike, file-like]): The destination.
        mode (str): ``"wb"`` or ``"w"``; used for paths only.
        description (str): What is being saved; when given, an info message is logged.
        durable (bool): For paths: whether the write is flushed to disk (see ``atomic_write``).

    Returns:
        The destination.
    """
    if description is not None:
        from poly.core.logging.logger import G_LOGGER

        G_LOGGER.info(f"Saving {description} to {dest}")

    if _is_file_like(dest):
        dest.write(contents)
        dest.flush()
        return dest

    with atomic_write(cast("StrPath", dest), mode, durable=durable) as f:
        f.write(contents)
    return dest


def load_file(src: StrPath | IO[Any], mode: str = "rb", description: str | None = None) -> Any:
    """
    Reads the whole of a path or file-like object.

    A file-like object is read from its start and its position is restored afterwards.

    Args:
        src (Union[str, os.PathLike, file-like]): The source.
        mode (str): ``"rb"`` or ``"r"``; used for paths only.
        description (str): What is being loaded; when given, an info message is logged.

    Returns:
        Union[bytes, str]: The contents.
    """
    _log_loading(src, description)
    if _is_file_like(src):
        seekable = getattr(src, "seekable", lambda: False)()
        position = src.tell() if seekable else None
        if seekable:
            src.seek(0)
        contents = src.read()
        if seekable:
            src.seek(cast(int, position))
        return contents

    encoding = None if "b" in mode else "utf-8"
    with open(cast("StrPath", src), mode, encoding=encoding) as f:
        return f.read()


def _log_loading(src: object, description: str | None) -> None:
    if description is not None:
        from poly.core.logging.logger import G_LOGGER

        G_LOGGER.info(f"Loading {description} from {src}")


@contextlib.contextmanager
def mapped_file(path: StrPath, description: str | None = None) -> Iterator[mmap.mmap | bytes]:
    """
    The whole of the file at ``path``, mapped read-only into memory for the ``with`` block (its
    pages are read as they are touched, with no copy into a buffer of the process: a 472 MB
    results file is read 0.3 s sooner than by ``load_file``). An empty file, or one that cannot
    be mapped, is read as ``load_file`` reads it. Nothing made from the mapping may outlive the
    block (copy what is kept); a file truncated by another process while it is mapped ends this
    one, so map only what poly writes (written whole and renamed into place, never in place).

    Args:
        path (Union[str, os.PathLike]): The file.
        description (str): What is being loaded; when given, an info message is logged.
    """
    _log_loading(path, description)
    with open(path, "rb") as f:
        try:
            mapping = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):  # (empty, or a file mmap refuses: a pipe, some filesystems)
            mapping = None
        if mapping is None:
            yield f.read()
            return
        try:
            yield mapping
        finally:
            with contextlib.suppress(BufferError):  # (a view still held, by a traceback say: the GC closes it)
                mapping.close()
