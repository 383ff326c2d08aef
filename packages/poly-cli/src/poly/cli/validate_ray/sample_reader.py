"""
Reading a work item's samples on a worker: a sample file as a local run reads it (``.npz`` and
``.json`` feed dicts; ``.npy``, one array for a model with one input), or the rows of a Parquet
row group (one column per input, an optional ``name`` column). Remote files are copied to a
temporary file first. No data file ever runs code (``allow_pickle=False``). A sample that cannot
be read becomes a ``SampleError``.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import tempfile

import numpy as np

from poly.cli.validate_ray.work_items import WorkItem, is_uri, open_filesystem
from poly.compare.dataset import Sample, SampleError
from poly.compare.io.npz_codec import load_feed_dicts_npz
from poly.compare.io.saved_inputs import iterate_input_file
from poly.core.datatype import DataType
from poly.core.optional_import import lazy_import

__all__ = ["local_copy", "read_samples"]

pq = lazy_import("pyarrow.parquet", install="poly-cli[ray]")


@contextlib.contextmanager
def local_copy(path):
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


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def _feeds_of_file(path, local, inputs):
    suffix = posixpath.splitext(path)[1].lower()
    if suffix == ".npz":
        return load_feed_dicts_npz(local)
    if suffix == ".npy":
        if len(inputs) != 1:
            raise ValueError(f"a .npy sample holds one array, and the model has {len(inputs)} inputs: use .npz")
        return [{next(iter(inputs)): np.load(local, allow_pickle=False)}]
    return list(iterate_input_file(local))


def _row_feed(table, row, inputs):
    feed = {}
    for name, meta in inputs.items():
        if name not in table.column_names:
            raise ValueError(f"the Parquet file has no column for input '{name}' (columns: {table.column_names})")
        value = table.column(name)[row].as_py()
        feed[name] = np.asarray(value, dtype=_numpy_dtype(getattr(meta, "dtype", None)))
    return feed


def _numpy_dtype(dtype):
    if dtype is None:
        return None
    try:
        return DataType.to_dtype(dtype, "numpy")
    except Exception:  # noqa: BLE001 - a type NumPy lacks: keep the file's own
        return None


def read_samples(item: WorkItem, inputs: dict) -> list:
    """
    The samples (``Sample`` or ``SampleError``) of ``item``. ``inputs`` maps the model's input
    names to their metadata (``.dtype``): a ``.npy`` array feeds the only input, and Parquet
    values are cast to the input's dtype.
    """
    base = posixpath.basename(item.path)
    if item.row_group < 0:
        try:
            with local_copy(item.path) as local:
                feeds = _feeds_of_file(item.path, local, inputs)
        except Exception as err:  # noqa: BLE001 - a corrupt sample is reported, not fatal
            return [SampleError(item.index, base, _first_line(err))]
        if len(feeds) == 1:
            return [Sample(item.index, base, feeds[0])]
        return [Sample(item.index + k, f"{base}#{k}", feed) for k, feed in enumerate(feeds)]
    try:
        with local_copy(item.path) as local:
            parquet = pq.ParquetFile(local)
            first = sum(parquet.metadata.row_group(g).num_rows for g in range(item.row_group))
            table = parquet.read_row_group(item.row_group)
    except Exception as err:  # noqa: BLE001
        return [SampleError(item.index, base, _first_line(err))]
    names = table.column("name").to_pylist() if "name" in table.column_names else None
    samples = []
    for row in range(table.num_rows):
        name = names[row] if names else f"{base}#{first + row}"
        try:
            samples.append(Sample(item.index + row, name, _row_feed(table, row, inputs)))
        except Exception as err:  # noqa: BLE001
            samples.append(SampleError(item.index + row, name, _first_line(err)))
    return samples
