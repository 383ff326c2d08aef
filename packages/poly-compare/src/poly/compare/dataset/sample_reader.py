"""
The one sample reader of every validation engine (threads, processes, Ray): what a sample is
(``Sample``, or ``SampleError`` for one that cannot be read) and how each format becomes feed
dicts. A listed work item (see ``work_items``) is a sample file (``.npz`` and ``.json`` feed
dicts; ``.npy``, one array for a model with one input) or the rows of a Parquet row group (one
column per input, an optional ``name`` column); input files given as such (Polygraphy's inputs
JSON, poly's ``.npz``) and data-loader scripts are read here too. Remote files are copied to a
temporary file first. No data file ever runs code (``allow_pickle=False``).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from poly.compare.dataset.work_items import WorkItem, is_uri, open_filesystem
from poly.compare.io.npz_codec import load_feed_dicts_npz
from poly.compare.io.saved_inputs import iterate_input_file
from poly.core import DataType, invoke_if_callable
from poly.core.optional_import import lazy_import

__all__ = ["Sample", "SampleError", "error_message", "local_copy", "read_feed_dicts", "read_samples",
           "read_input_files", "read_data_loader"]

pq = lazy_import("pyarrow.parquet", install="pyarrow (pip install poly-cli[ray])")


@dataclass
class Sample:
    """One sample of a dataset: its position, the file it came from (if any) and its feed dict."""

    index: int
    name: str | None
    feed_dict: dict = field(repr=False)  # type: ignore[type-arg]


@dataclass
class SampleError:
    """A sample that could not be read (or compared): reported and skipped."""

    index: int
    name: str | None
    message: str


def error_message(err: BaseException) -> str:
    """The first line of an error, as a sample's error is reported."""
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def _resolve(inputs: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None) -> Mapping[str, Any]:
    # A callable is called only for a format that needs the model's inputs (.npy, Parquet): the
    # in-process engine's runner is active only once its run has started.
    inputs = invoke_if_callable(inputs)
    return dict(inputs.items()) if inputs is not None else {}


@contextlib.contextmanager
def local_copy(path: Any) -> Iterator[Any]:
    """A local path holding the file ``path`` (itself when local; else a temporary copy)."""
    if not is_uri(path):
        yield path
        return
    fs, inner = open_filesystem(path)
    fd, tmp = tempfile.mkstemp(suffix=posixpath.splitext(inner)[1])
    try:
        with os.fdopen(fd, "wb") as out, fs.open_input_stream(inner) as src:
            shutil.copyfileobj(src, out, 1 << 20)
        yield tmp
    finally:
        os.unlink(tmp)


def read_feed_dicts(path: Any, inputs: Mapping | Callable[[], Mapping] | None = None) -> list[dict]:  # type: ignore[type-arg]
    """The feed dicts of one sample file, local or a URI: an ``.npz`` (read directly: no log line
    per sample, and a clear error for a corrupt archive), a ``.npy`` (the array of the model's
    only input, named by ``inputs``) or inputs JSON."""
    suffix = posixpath.splitext(os.fspath(path))[1].lower()
    with local_copy(path) as local:
        if suffix == ".npz":
            return load_feed_dicts_npz(local)  # type: ignore[return-value]
        if suffix == ".npy":
            names = list(_resolve(inputs))
            if len(names) != 1:
                raise ValueError(f"a .npy sample holds one array, and the model has {len(names)} inputs: use .npz")
            return [{names[0]: np.load(local, allow_pickle=False)}]
        return list(iterate_input_file(local))


def _numpy_dtype(dtype: Any) -> Any:
    if dtype is None:
        return None
    try:
        return DataType.to_dtype(dtype, "numpy")
    except Exception:  # noqa: BLE001 - a type NumPy lacks: keep the file's own
        return None


def _row_feed(table: Any, row: Any, inputs: Mapping) -> Any:  # type: ignore[type-arg]
    feed = {}
    for name, meta in inputs.items():
        if name not in table.column_names:
            raise ValueError(f"the Parquet file has no column for input '{name}' (columns: {table.column_names})")
        value = table.column(name)[row].as_py()
        feed[name] = np.asarray(value, dtype=_numpy_dtype(getattr(meta, "dtype", None)))
    return feed


def _parquet_samples(item: WorkItem, inputs: Mapping | Callable[[], Mapping] | None, base: str) -> list:  # type: ignore[type-arg]
    try:
        with local_copy(item.path) as local:
            parquet = pq.ParquetFile(local)
            first = sum(parquet.metadata.row_group(g).num_rows for g in range(item.row_group))
            table = parquet.read_row_group(item.row_group)
        inputs = _resolve(inputs)
    except Exception as err:  # noqa: BLE001 - a corrupt file is reported, not fatal
        return [SampleError(item.index, base, error_message(err))]
    names = table.column("name").to_pylist() if "name" in table.column_names else None
    samples = []
    for row in range(table.num_rows):
        name = names[row] if names else f"{base}#{first + row}"
        try:
            samples.append(Sample(item.index + row, name, _row_feed(table, row, inputs)))
        except Exception as err:  # noqa: BLE001
            samples.append(SampleError(item.index + row, name, error_message(err)))  # type: ignore[arg-type]
    return samples


def read_samples(item: WorkItem, inputs: Mapping | Callable[[], Mapping] | None = None, first_index: int | None = None) -> list:  # type: ignore[type-arg]
    """
    The samples (``Sample`` or ``SampleError``) of ``item``. ``inputs`` maps the model's input
    names to their metadata (``.dtype``), or is a function returning that map, called only when
    needed: a ``.npy`` array feeds the only input, and Parquet values are cast to the input's
    dtype. Samples are numbered from ``first_index`` (default: the item's own index).
    """
    index = item.index if first_index is None else first_index
    base = posixpath.basename(item.path)
    if item.row_group >= 0:
        return _parquet_samples(WorkItem(index, item.path, item.row_group, item.rows), inputs, base)
    try:
        feeds = read_feed_dicts(item.path, inputs)
    except Exception as err:  # noqa: BLE001 - a corrupt sample is reported, not fatal
        return [SampleError(index, base, error_message(err))]
    if len(feeds) == 1:
        return [Sample(index, base, feeds[0])]
    return [Sample(index + k, f"{base}#{k}", feed) for k, feed in enumerate(feeds)]


def read_input_files(paths: Any) -> Iterator[Sample | SampleError]:
    """The feed dicts of input files given as such (a JSON list, a JSON feed dict, an ``.npz``),
    numbered in order across the files and named ``FILE#INDEX``."""
    index = 0
    for path in paths:
        base = os.path.basename(path)
        try:
            for feed in iterate_input_file(path):
                yield Sample(index, f"{base}#{index}", feed)
                index += 1
        except Exception as err:  # noqa: BLE001
            yield SampleError(index, base, error_message(err))
            index += 1


def read_data_loader(iterable: Any, name: Any = None) -> Iterator[Sample | SampleError]:
    """The feed dicts of a data loader (e.g. a ``DataLoaderFromScript``), without file names. An
    error raised by the loader ends it and is reported as a ``SampleError`` named ``name``."""
    index = 0
    try:
        for feed in iterable:
            yield Sample(index, None, feed)
            index += 1
    except Exception as err:  # noqa: BLE001 - a generator cannot resume after raising
        yield SampleError(index, name, f"{error_message(err)} (the data loader stopped here)")
