"""
Datasets for validation: samples (index, file name, feed dict) read one at a time from a
directory of ``.npz`` feed dicts, input files (Polygraphy's inputs JSON, poly's ``.npz``) or a
data-loader script. A sample that cannot be read is yielded as a ``SampleError``, not raised.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from poly.compare.io.npz_codec import load_feed_dicts_npz
from poly.compare.io.saved_inputs import iterate_input_file

__all__ = ["Sample", "SampleError", "Dataset", "DirectoryDataset", "FileDataset", "IterableDataset",
           "open_dataset"]


@dataclass
class Sample:
    """One sample of a dataset: its position, the file it came from (if any) and its feed dict."""

    index: int
    name: str | None
    feed_dict: dict = field(repr=False)


@dataclass
class SampleError:
    """A sample that could not be read (or compared): reported and skipped."""

    index: int
    name: str | None
    message: str


class Dataset:
    """Base class: iterating yields ``Sample`` or ``SampleError`` objects, in order."""

    def __iter__(self) -> Iterator[Sample | SampleError]:
        raise NotImplementedError()


def _message(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


class DirectoryDataset(Dataset):
    """Every ``.npz`` (and ``.json``) feed-dict file of a directory, sorted by name, one sample each
    (a file holding several feed dicts gives several samples, named ``file#k``)."""

    def __init__(self, path):
        self.path = os.fspath(path)

    def files(self) -> list[str]:
        return sorted(f for f in os.listdir(self.path)
                      if f.lower().endswith((".npz", ".json")) and os.path.isfile(os.path.join(self.path, f)))

    def __iter__(self):
        index = 0
        for fname in self.files():
            try:
                path = os.path.join(self.path, fname)
                # .npz read directly: no log line per sample, and a clear error for a corrupt archive
                feeds = load_feed_dicts_npz(path) if fname.lower().endswith(".npz") else list(iterate_input_file(path))
            except Exception as err:  # noqa: BLE001 - a corrupt sample is skipped, not fatal
                yield SampleError(index, fname, _message(err))
                index += 1
                continue
            for k, feed in enumerate(feeds):
                yield Sample(index, fname if len(feeds) == 1 else f"{fname}#{k}", feed)
                index += 1


class FileDataset(Dataset):
    """The feed dicts of input files (a JSON list, a JSON feed dict, an ``.npz``), in order."""

    def __init__(self, paths):
        self.paths = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) else [os.fspath(p) for p in paths]

    def __iter__(self):
        index = 0
        for path in self.paths:
            base = os.path.basename(path)
            try:
                for feed in iterate_input_file(path):
                    yield Sample(index, f"{base}#{index}", feed)
                    index += 1
            except Exception as err:  # noqa: BLE001
                yield SampleError(index, base, _message(err))
                index += 1


class IterableDataset(Dataset):
    """Feed dicts from any iterable (e.g. a ``DataLoaderFromScript``); samples have no file name.
    An error raised by the iterable ends the dataset and is reported as a ``SampleError``."""

    def __init__(self, iterable, name=None):
        self.iterable = iterable
        self.name = name

    def __iter__(self):
        index = 0
        try:
            for feed in self.iterable:
                yield Sample(index, None, feed)
                index += 1
        except Exception as err:  # noqa: BLE001 - a generator cannot resume after raising
            yield SampleError(index, self.name, f"{_message(err)} (the data loader stopped here)")


def open_dataset(paths=None, data_loader_script=None) -> Dataset:
    """A dataset from paths (one directory, or input files) or a data-loader script ``FILE[:FUNC]``."""
    if data_loader_script:
        from poly.compare.io.data_loader_script import DataLoaderFromScript

        return IterableDataset(DataLoaderFromScript(data_loader_script), name=data_loader_script)
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(paths or [])
    if len(paths) == 1 and os.path.isdir(paths[0]):
        return DirectoryDataset(paths[0])
    for path in paths:
        if os.path.isdir(path):
            raise ValueError(f"'{path}' is a directory: give one dataset directory, or input files")
    return FileDataset(paths)
