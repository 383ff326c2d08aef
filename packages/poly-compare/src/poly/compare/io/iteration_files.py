"""
Saving and reading sequences of per-iteration objects (feed dicts, single-iteration run results):
a path with an extension is one file; a path without one is a directory of zero-padded
``<index>.json`` files, read back in index order (Polygraphy 0.53's layout).
"""

from __future__ import annotations

import copy
import glob
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from poly.core import G_LOGGER
from poly.core.json import save_json

__all__ = [
    "ITERATION_FILE_INDEX_WIDTH",
    "is_single_file",
    "list_iteration_files",
    "iterate_from_files",
    "IterationWriter",
]

ITERATION_FILE_INDEX_WIDTH = 10
"""Digits of the per-iteration file names (``0000000000.json``), so lexical order is index order."""


def is_single_file(path: Any) -> bool:
    """Whether ``path`` names one file (it has an extension) rather than a per-iteration directory."""
    return path is not None and os.path.splitext(os.fspath(path))[1] != ""


def list_iteration_files(dir_path: Any) -> list[str]:
    """The ``*.json`` and ``*.npz`` files of a directory, in lexical (= index) order."""
    dir_path = os.fspath(dir_path)
    files = glob.glob(os.path.join(glob.escape(dir_path), "*.json"))
    files += glob.glob(os.path.join(glob.escape(dir_path), "*.npz"))
    return sorted(files)


def iterate_from_files(paths: Any, load_file: Callable[[str], Iterable], allow_dirs: bool = True) -> Iterator:  # type: ignore[type-arg]
    """
    Yields the iterations of one or more paths, lazily: a directory's files in index order, and
    whatever ``load_file(path)`` yields for a file.

    Args:
        paths (Union[str, os.PathLike, Sequence]): A path or several, chained in order.
        load_file (Callable[[str], Iterable]): Yields the iterations of one file.
        allow_dirs (bool): Accept directories. Defaults to True.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    for path in paths:
        if os.path.isdir(path):
            if not allow_dirs:
                G_LOGGER.critical(
                    f"Could not load '{path}': it is a directory, but a file was expected. To read "
                    f"a directory of per-iteration files, use the streaming reader (e.g. "
                    f"--load-inputs/--load-outputs, or StreamingDataLoader/RunResults.load_streaming)."
                )
            files = list_iteration_files(path)
            if not files:
                G_LOGGER.critical(
                    f"Could not load '{path}': the directory holds no per-iteration .json or .npz files"
                )
            for file_path in files:
                yield from load_file(file_path)
        else:
            yield from load_file(os.fspath(path))


def _default_save(obj: Any, path: Any, description: Any) -> None:
    save_json(obj, path, description=description)


class IterationWriter:
    """
    Writes per-iteration objects to one file (accumulated, written on ``flush``) or to a directory
    of per-iteration JSON files (each written at once, so memory stays constant). A directory must
    be new or empty: nothing is ever overwritten there.
    """

    def __init__(self, path: Any, combine: Any = None, copy_on_accumulate: bool = False, description: Any = None, save: Any = None) -> None:
        """
        Args:
            path (str): The file or directory; None disables writing.
            combine (Callable[[list], Any]): Makes the one object of a single file from the list of
                    iterations. Defaults to the list itself.
            copy_on_accumulate (bool): Deep-copy what is kept for a single file (for buffers that
                    the producer reuses). Defaults to False.
            description (str): What is saved, for log messages.
            save (Callable[[Any, str, str], None]): Writes one object to a path (with the
                    description); defaults to JSON. A single file goes through it too, so it can
                    pick ``.npz`` by extension.
        """
        self.path = None if path is None else os.fspath(path)
        self.single_file = is_single_file(self.path)
        self._combine = combine or (lambda items: items)
        self._copy = copy_on_accumulate
        self._description = description
        self._save = save or _default_save
        self._accumulated: list[Any] = []
        self._index = 0
        self._flushed = False
        if self.path is None:
            return
        desc = description or "data"
        if self.single_file:  # the save function logs the one file when it writes it
            return
        G_LOGGER.info(f"Saving {desc} to a directory of per-iteration files: {self.path}")
        if os.path.exists(self.path):
            if not os.path.isdir(self.path):
                G_LOGGER.critical(
                    f"Cannot save {desc} to '{self.path}': a file already exists there, but an "
                    f"extensionless path is a directory of per-iteration files. Use a path "
                    f"with a file extension to save a single file, or a different directory."
                )
            if os.listdir(self.path):
                G_LOGGER.critical(
                    f"Cannot save {desc} to '{self.path}': the directory is not empty. "
                    f"Per-iteration files require an empty or new directory (so nothing is "
                    f"overwritten). Use a different path, or remove its contents first."
                )
        os.makedirs(self.path, exist_ok=True)

    def append(self, item: Any) -> None:
        """Adds one iteration."""
        if self.path is None:
            return
        if self.single_file:
            self._accumulated.append(copy.deepcopy(item) if self._copy else item)
            return
        name = f"{self._index:0{ITERATION_FILE_INDEX_WIDTH}d}.json"
        _default_save(item, os.path.join(self.path, name), self._description)
        self._index += 1

    def flush(self) -> None:
        """Writes the single file (once); nothing to do for a directory."""
        if self.single_file and not self._flushed:
            self._save(self._combine(self._accumulated), self.path, self._description)
            self._flushed = True

    def __enter__(self) -> Any:
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        if exc_type is None:
            self.flush()
