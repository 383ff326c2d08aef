"""
Saved inputs: feed dicts read from JSON (Polygraphy's ``--save-inputs`` format: a list of feed
dicts, or one feed dict) or ``.npz`` files, or directories of per-iteration files; several paths
are concatenated in order. Reading never runs code (``allow_pickle=False`` throughout).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from poly.compare.io.iteration_files import iterate_from_files
from poly.compare.io.npz_codec import is_npz_file, load_feed_dicts_npz, save_feed_dicts_npz
from poly.core import G_LOGGER, DataFormatError
from poly.core.json import load_json, save_json

__all__ = ["StreamingDataLoader", "load_inputs", "save_inputs", "iterate_input_file"]


def _check_feed_dict(obj: Any, path: Any, index: Any) -> Any:
    where = f"iteration {index}" if index is not None else "the file"
    if not isinstance(obj, Mapping) or not all(isinstance(name, str) for name in obj.keys()):
        raise DataFormatError(
            f"Could not load inputs from '{path}': expected a feed dict (input name -> array) or a list of them, "
            f"found a {type(obj).__name__} in {where}"
        )
    for name, value in obj.items():
        if not isinstance(value, np.ndarray):
            raise DataFormatError(
                f"Could not load inputs from '{path}': input {name!r} of {where} is a {type(value).__name__}, "
                "not an array"
            )
    return OrderedDict(obj.items())


def iterate_input_file(path: Any) -> Iterator[Any]:
    """Yields the feed dicts of one file: every element of a JSON list, a single JSON feed dict, or an ``.npz``."""
    if not os.path.exists(path):
        G_LOGGER.critical(f"Could not load inputs: '{path}' does not exist")
    if is_npz_file(path):
        G_LOGGER.info(f"Loading input data from {path}")
        yield from load_feed_dicts_npz(path)
        return
    obj = load_json(path, description="input data")
    if isinstance(obj, list):
        for index, item in enumerate(obj):
            yield _check_feed_dict(item, path, index)
    else:
        yield _check_feed_dict(obj, path, None)


class StreamingDataLoader:
    """
    Yields saved inputs one iteration at a time, from one or more files or per-iteration
    directories (chained in order); usable wherever a data loader is.
    """

    def __init__(self, paths: Any, allow_dirs: bool = True) -> None:
        """
        Args:
            paths (Union[str, os.PathLike, Sequence]): Files (JSON list, JSON feed dict, ``.npz``)
                    or directories of per-iteration files.
            allow_dirs (bool): Accept directories. Defaults to True.
        """
        self.paths = paths
        self.allow_dirs = allow_dirs

    def __repr__(self) -> str:
        return f"StreamingDataLoader({self.paths!r}, allow_dirs={self.allow_dirs!r})"

    def __iter__(self) -> Iterator[Any]:
        yield from iterate_from_files(self.paths, iterate_input_file, allow_dirs=self.allow_dirs)


def load_inputs(paths: Any) -> list[OrderedDict]:  # type: ignore[type-arg]
    """
    Loads saved inputs from one or more paths, concatenated in order.

    Returns:
        List[OrderedDict[str, numpy.ndarray]]: One feed dict per iteration.
    """
    return list(StreamingDataLoader(paths))


def save_inputs(feed_dicts: Any, dest: Any, description: str = "inference input data") -> None:
    """
    Saves feed dicts (one per iteration): ``.npz`` when ``dest`` ends in ``.npz``, else a JSON
    list in Polygraphy's format. Written atomically.
    """
    feed_dicts = list(feed_dicts)
    if isinstance(dest, (str, os.PathLike)) and os.fspath(dest).lower().endswith(".npz"):
        G_LOGGER.info(f"Saving {description} to {dest}")
        save_feed_dicts_npz(feed_dicts, dest)
        return
    save_json(feed_dicts, dest, description=description)
