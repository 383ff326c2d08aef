"""
The dataset listed once, for every validation engine: the work items of a ``--dataset`` (one per
sample file: ``.npz`` feed dicts, ``.npy`` arrays, ``.json`` inputs; one per row group of a
Parquet file, one row per sample), in file-name order. A dataset is a local directory or file, or
a URI that pyarrow's file systems open (``s3://``, ``gs://``, ``hdfs://``, ``file://``). Local
directories are listed with ``os`` (pyarrow is needed only for URIs and Parquet files). Sample
indices are fixed here, so every engine numbers the samples of a directory alike.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from typing import Any

from poly.core.optional_import import lazy_import

__all__ = ["WorkItem", "SAMPLE_SUFFIXES", "PARQUET_SUFFIXES", "is_uri", "open_filesystem", "list_work_items",
           "check_uri_directory", "items_per_batch", "count_samples"]

pafs = lazy_import("pyarrow.fs", install="pyarrow (pip install poly-cli[ray])")
pq = lazy_import("pyarrow.parquet", install="pyarrow (pip install poly-cli[ray])")

SAMPLE_SUFFIXES = (".npz", ".npy", ".json")
"""Sample files: one file, one sample (or several feed dicts, named ``FILE#k``)."""
PARQUET_SUFFIXES = (".parquet", ".pq")
"""Parquet files: one row per sample, one work item per row group."""


@dataclass
class WorkItem:
    """Samples read together: a sample file (``row_group`` -1), or one row group of a Parquet
    file, whose first row is sample ``index`` and which holds ``rows`` rows."""

    index: int
    path: str
    row_group: int = -1
    rows: int = 1

    def to_row(self) -> dict:  # type: ignore[type-arg]
        """The item as a dict of plain values (a row of a Ray Data block, a pickled batch)."""
        # (written out: dataclasses.asdict deep-copies each field, ~60 us an item that the
        # parent of 16 worker processes pays serially)
        return {"index": self.index, "path": self.path, "row_group": self.row_group, "rows": self.rows}


def is_uri(path: Any) -> bool:
    """Whether ``path`` is a URI (``scheme://...``) rather than a local path."""
    return "://" in os.fspath(path)


def open_filesystem(path: Any) -> Any:
    """``(filesystem, path within it)`` for a local path or a URI (pyarrow's file systems)."""
    path = os.fspath(path)
    if is_uri(path):
        return pafs.FileSystem.from_uri(path)
    return pafs.LocalFileSystem(), os.path.abspath(path)


def check_uri_directory(uri: str) -> None:
    """Raises ValueError (one line) unless ``uri`` is a directory pyarrow can open."""
    try:
        fs, inner = open_filesystem(uri)
        kind = fs.get_file_info(inner).type
    except Exception as err:  # noqa: BLE001 - any filesystem's own error, reported in one line
        raise ValueError(f"'{uri}': cannot be opened: {str(err).strip().splitlines()[0]}") from err
    if kind != pafs.FileType.Directory:
        raise ValueError(f"'{uri}': not a directory (golden outputs are one file per sample)")


def _suffix(path: Any) -> Any:
    return posixpath.splitext(os.fspath(path))[1].lower()


def items_per_batch(total: int, at_least: int, workers: int, batches_per_worker: int) -> int:
    """
    Work items handed to a worker at once: about 1/``batches_per_worker`` of a worker's share of
    the ``total``, at least ``at_least`` and at most 16 times it. Large batches pay the per-batch
    cost (a call, a pickled accumulator) fewer times on a large dataset; small ones keep retries,
    progress and the workers' finish fine-grained.
    """
    return max(at_least, min(16 * at_least, total // (batches_per_worker * max(1, workers))))


def count_samples(items: list[WorkItem]) -> int:
    """The samples of ``items`` as listed (a sample file counts once, a row group its rows)."""
    return sum(item.rows for item in items)


def _files(dataset: Any) -> tuple[list[str], object]:
    """The files of ``dataset`` sorted by name (itself when it is a file), and the pyarrow file
    system they are on (None: local, listed with ``os``)."""
    dataset = os.fspath(dataset)
    if not is_uri(dataset):
        if not os.path.exists(dataset):
            raise ValueError(f"--dataset '{dataset}' does not exist")
        root = os.path.abspath(dataset)  # a worker process may run in another directory
        if not os.path.isdir(root):
            return [root], None
        with os.scandir(root) as entries:  # (the entries' types come with the listing: no stat each)
            paths = sorted(entry.path for entry in entries if entry.is_file())
        return paths, None
    fs, root = open_filesystem(dataset)
    info = fs.get_file_info(root)
    if info.type == pafs.FileType.NotFound:
        raise ValueError(f"--dataset '{dataset}' does not exist")
    if info.type != pafs.FileType.Directory:
        return [root], fs
    entries = fs.get_file_info(pafs.FileSelector(root, recursive=False))
    paths = sorted((e.path for e in entries if e.type == pafs.FileType.File), key=posixpath.basename)
    return paths, fs


def list_work_items(dataset: Any) -> list[WorkItem]:
    """
    The work items of ``dataset`` (a directory or a file, local or a URI), in order. Raises
    ValueError for a dataset that does not exist, mixes Parquet and sample files, or holds no
    samples.
    """
    paths, fs = _files(dataset)
    suffixes = [_suffix(p) for p in paths]
    parquet = [p for p, suffix in zip(paths, suffixes, strict=True) if suffix in PARQUET_SUFFIXES]
    files = [p for p, suffix in zip(paths, suffixes, strict=True) if suffix in SAMPLE_SUFFIXES]
    if parquet and files:
        raise ValueError(f"--dataset '{dataset}' mixes Parquet and sample files: give one kind")
    # pyarrow gives a URI's paths without their scheme: the workers open them by URI again
    prefix = os.fspath(dataset).split("://", 1)[0] + "://" if fs is not None else ""
    if files:
        return [WorkItem(i, prefix + p) for i, p in enumerate(files)]
    items, index = [], 0
    for path in parquet:
        if fs is None:
            meta = pq.ParquetFile(path).metadata
        else:
            with fs.open_input_file(path) as f:  # type: ignore[attr-defined]
                meta = pq.ParquetFile(f).metadata
        for group in range(meta.num_row_groups):
            rows = meta.row_group(group).num_rows
            items.append(WorkItem(index, prefix + path, group, rows))
            index += rows
    if not items:
        raise ValueError(f"--dataset '{dataset}' holds no samples (.npz, .npy, .json or .parquet files)")
    return items
