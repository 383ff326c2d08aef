"""
Datasets for validation: the samples an engine iterates, in order, all read by
``sample_reader``. A listed dataset (a directory, a Parquet file or a URI: see ``work_items``),
input files given as such (Polygraphy's inputs JSON, poly's ``.npz``) or a data-loader script.
A sample that cannot be read is yielded as a ``SampleError``, not raised.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from poly.compare.dataset.sample_reader import (
    Sample,
    SampleError,
    read_data_loader,
    read_input_files,
    read_samples,
)
from poly.compare.dataset.work_items import PARQUET_SUFFIXES, WorkItem, count_samples, is_uri, list_work_items
from poly.core import invoke_if_callable

__all__ = ["Dataset", "ListedDataset", "FileDataset", "IterableDataset", "open_dataset"]


class Dataset:
    """Base class: iterating yields ``Sample`` or ``SampleError`` objects, in order."""

    def __iter__(self) -> Iterator[Sample | SampleError]:
        raise NotImplementedError()

    def size(self) -> int | None:
        """The number of samples, where it is known without reading them; else None."""
        return None


class ListedDataset(Dataset):
    """
    The work items of a dataset listed by ``list_work_items``, read one at a time. Iterated in
    one process, the samples are numbered in order (a file holding several feed dicts, named
    ``FILE#k``, shifts the numbers of the files after it).

    Args:
        items (list[WorkItem]): The items, in order.
        source (str): The dataset as given (a path or a URI).
        inputs (Mapping | Callable[[], Mapping]): The model's input metadata, or a function
                returning it (see ``read_samples``). Defaults to None: ``.npy`` and Parquet
                samples cannot be read.
    """

    def __init__(self, items: list[WorkItem], source: Any = None, inputs: Any = None) -> None:
        self.items = list(items)
        self.source = source
        self.inputs = inputs

    @classmethod
    def from_path(cls, path: Any, inputs: Any = None) -> ListedDataset:
        """The dataset at ``path`` (ValueError when it does not exist or holds no samples)."""
        return cls(list_work_items(path), source=os.fspath(path), inputs=inputs)

    def size(self) -> Any:
        return count_samples(self.items)

    def __iter__(self) -> Iterator[Any]:
        resolved: list[Any] = []

        def inputs() -> Any:  # asked for once, and only when a sample needs it
            if not resolved:
                resolved.append(invoke_if_callable(self.inputs))
            return resolved[0]

        index = 0
        for item in self.items:
            for sample in read_samples(item, inputs, first_index=index):
                yield sample
                index = sample.index + 1


class FileDataset(Dataset):
    """The feed dicts of input files (a JSON list, a JSON feed dict, an ``.npz``), in order."""

    def __init__(self, paths: Any) -> None:
        self.paths = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) else [os.fspath(p) for p in paths]

    def __iter__(self) -> Any:
        return read_input_files(self.paths)


class IterableDataset(Dataset):
    """Feed dicts from any iterable (e.g. a ``DataLoaderFromScript``); samples have no file name.
    An error raised by the iterable ends the dataset and is reported as a ``SampleError``."""

    def __init__(self, iterable: Any, name: Any = None) -> None:
        self.iterable = iterable
        self.name = name

    def __iter__(self) -> Any:
        return read_data_loader(self.iterable, self.name)


def open_dataset(paths: Any = None, data_loader_script: Any = None, inputs: Any = None, listed: bool = False) -> Dataset:
    """
    A dataset from paths or a data-loader script ``FILE[:FUNC]``. One directory, one URI or one
    Parquet file (with ``listed``, any one path) is listed as work items (a ``ListedDataset``
    reading ``inputs``, see there); other paths are input files. Raises ValueError for a listed
    dataset that holds no samples, or a directory among several paths.
    """
    if data_loader_script:
        from poly.compare.io.data_loader_script import DataLoaderFromScript

        return IterableDataset(DataLoaderFromScript(data_loader_script), name=data_loader_script)
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths or []]
    if len(paths) == 1 and (listed or is_uri(paths[0]) or os.path.isdir(paths[0])
                            or os.path.splitext(paths[0])[1].lower() in PARQUET_SUFFIXES):
        return ListedDataset.from_path(paths[0], inputs=inputs)
    for path in paths:
        if os.path.isdir(path):
            raise ValueError(f"'{path}' is a directory: give one dataset directory, or input files")
    return FileDataset(paths)
