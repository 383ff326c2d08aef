"""
The work items a dataset is sharded into for a Ray run: one per sample file (``.npz`` feed dict,
``.npy`` array, ``.json`` inputs), one per row group of a Parquet file (one row per sample). A
dataset is a local directory or file, or a URI that pyarrow's file systems open (``s3://``,
``gs://``, ``hdfs://``, ``file://``). Sample indices are fixed here, in file-name order, so a Ray
run numbers samples as a local run over the same directory does.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import asdict, dataclass

from poly.core.optional_import import lazy_import

__all__ = ["items_per_batch", "WorkItem", "SAMPLE_SUFFIXES", "is_uri", "open_filesystem", "list_work_items", "check_uri_directory"]

pafs = lazy_import("pyarrow.fs", install="poly-cli[ray]")
pq = lazy_import("pyarrow.parquet", install="poly-cli[ray]")

SAMPLE_SUFFIXES = (".npz", ".npy", ".json")
PARQUET_SUFFIXES = (".parquet", ".pq")


@dataclass
class WorkItem:
    """Samples read by a worker: a sample file (``row_group`` -1), or one row group of a Parquet
    file whose first row is sample ``index``."""

    index: int
    path: str
    row_group: int = -1

    def to_row(self) -> dict:
        return asdict(self)


def is_uri(path) -> bool:
    """Whether ``path`` is a URI (``scheme://...``) rather than a local path."""
    return "://" in os.fspath(path)


def open_filesystem(path):
    """``(filesystem, path within it)`` for a local path or a URI."""
    path = os.fspath(path)
    if is_uri(path):
        return pafs.FileSystem.from_uri(path)
    return pafs.LocalFileSystem(), os.path.abspath(path)


def check_uri_directory(flag: str, uri: str) -> None:
    """Ends with one line naming ``flag`` unless ``uri`` is a directory pyarrow can open."""
    import click

    try:
        fs, inner = open_filesystem(uri)
        kind = fs.get_file_info(inner).type
    except Exception as err:  # noqa: BLE001 - any filesystem's own error, reported in one line
        raise click.UsageError(f"{flag} '{uri}': cannot be opened: {str(err).strip().splitlines()[0]}") from err
    if kind != pafs.FileType.Directory:
        raise click.UsageError(f"{flag} '{uri}': not a directory (golden outputs are one file per sample)")


def _suffix(path) -> str:
    return posixpath.splitext(path)[1].lower()


def items_per_batch(total: int, at_least: int, workers: int, batches_per_worker: int) -> int:
    """
    Work items handed to a worker at once: about 1/``batches_per_worker`` of a worker's share of
    the ``total``, at least ``at_least`` and at most 16 times it. Large batches pay the per-batch
    cost (a call, a pickled accumulator) fewer times on a large dataset; small ones keep retries,
    progress and the workers' finish fine-grained.
    """
    return max(at_least, min(16 * at_least, total // (batches_per_worker * max(1, workers))))


def list_work_items(dataset) -> list[WorkItem]:
    """
    The work items of ``dataset`` (a directory or a file, local or a URI), in order. Raises
    ValueError for a dataset that does not exist or holds no sample files.
    """
    fs, root = open_filesystem(dataset)
    info = fs.get_file_info(root)
    if info.type == pafs.FileType.NotFound:
        raise ValueError(f"--dataset '{dataset}' does not exist")
    if info.type == pafs.FileType.Directory:
        entries = fs.get_file_info(pafs.FileSelector(root, recursive=False))
        paths = sorted((e.path for e in entries if e.type == pafs.FileType.File),
                       key=lambda p: posixpath.basename(p))
    else:
        paths = [root]
    parquet = [p for p in paths if _suffix(p) in PARQUET_SUFFIXES]
    files = [p for p in paths if _suffix(p) in SAMPLE_SUFFIXES]
    if parquet and files:
        raise ValueError(f"--dataset '{dataset}' mixes Parquet and sample files: give one kind")
    prefix = "" if not is_uri(dataset) else os.fspath(dataset).split("://", 1)[0] + "://"
    if files:
        return [WorkItem(i, prefix + p) for i, p in enumerate(files)]
    items, index = [], 0
    for path in parquet:
        with fs.open_input_file(path) as f:
            meta = pq.ParquetFile(f).metadata
        for group in range(meta.num_row_groups):
            items.append(WorkItem(index, prefix + path, group))
            index += meta.row_group(group).num_rows
    if not items:
        raise ValueError(f"--dataset '{dataset}' holds no samples (.npz, .npy, .json or .parquet files)")
    return items
