"""
References (golden outputs) for validation: a directory of per-sample files matched by file
name (a local path, or a URI that pyarrow's file systems open), saved ``RunResults`` read one
iteration at a time, or a second runner run alongside. ``open_reference`` picks one, for every
engine.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tempfile
from collections import OrderedDict
from typing import Any

from poly.compare.dataset.work_items import is_uri, open_filesystem
from poly.compare.io.npz_codec import load_npz_file
from poly.compare.results import RunResults
from poly.core.optional_import import lazy_import

__all__ = ["Reference", "DirectoryReference", "UriGoldenReference", "StreamReference", "RunnerReference",
           "open_reference"]

pafs = lazy_import("pyarrow.fs", install="pyarrow (pip install poly-cli[ray])")


def _first_iteration(results: RunResults, k: int = 0) -> OrderedDict:  # type: ignore[type-arg]
    if not results.lst:
        raise ValueError("the reference holds no results")
    _, iterations = results.lst[0]
    if k >= len(iterations):
        raise ValueError(f"the reference holds {len(iterations)} iteration(s), sample #{k} has none")
    return OrderedDict(iterations[k].items())


class Reference:
    """Base class: ``outputs_for(sample)`` gives the reference outputs (name -> array) of a sample;
    ``skip(item)`` is called instead for a sample that could not be read."""

    runs_model = False  # True: outputs_for runs a model, so the pipeline calls it on the inference thread

    def outputs_for(self, sample: Any) -> OrderedDict:  # type: ignore[type-arg]
        raise NotImplementedError()

    def skip(self, item: Any) -> None:
        pass

    def describe(self) -> str:
        return type(self).__name__


class DirectoryReference(Reference):
    """
    A directory of golden outputs, one file per sample with the sample's file name (or its stem
    with ``.npz``/``.json``): a plain ``.npz`` of output name -> array, or saved ``RunResults``
    (JSON or ``.npz``; the first runner, and its k-th iteration for a dataset file's k-th sample).
    """

    def __init__(self, path: Any) -> None:
        self.path = os.fspath(path)

    def describe(self) -> Any:
        return self.path

    def outputs_for(self, sample: Any) -> Any:
        if sample.name is None:
            raise ValueError("samples without a file name cannot be matched to a golden directory")
        name, _, k = sample.name.partition("#")
        k = int(k) if k else 0
        stem = os.path.splitext(name)[0]
        # Each candidate is opened (and, for an .npz, read) once: no stat of it first, no second
        # open to tell an archive from JSON (a sample a few kilobytes large paid for both).
        for candidate in (name, stem + ".npz", stem + ".json"):
            path = os.path.join(self.path, candidate)
            try:
                loaded = load_npz_file(path)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                continue
            if loaded is None:
                return _first_iteration(RunResults.load(path), k)
            meta, arrays = loaded
            if meta is None:
                return OrderedDict(arrays.items())
            return _first_iteration(RunResults.from_npz_archive(meta, arrays, path), k)
        raise FileNotFoundError(f"no golden file for sample '{name}' in '{self.path}'")


class UriGoldenReference(Reference):
    """
    Golden outputs in a directory given as a URI (``file://``, ``s3://``, ``gs://``, ``hdfs://``:
    whatever pyarrow's file systems open), one file per sample named as the sample (or its stem
    with ``.npz``/``.json``), as a local golden directory is. A sample's golden file is copied to a
    temporary directory and read there exactly as a ``DirectoryReference`` reads it; loading never
    runs code.

    Args:
        uri (str): The directory of golden outputs, as a URI.
    """

    def __init__(self, uri: str) -> None:
        self.given = uri
        self.uri = uri.rstrip("/")
        self._fs: Any = None

    def describe(self) -> str:
        return self.given

    def _filesystem(self) -> Any:
        if self._fs is None:
            self._fs = open_filesystem(self.uri)
        return self._fs

    def outputs_for(self, sample: Any) -> Any:
        if sample.name is None:
            raise ValueError("samples without a file name cannot be matched to a golden directory")
        name = sample.name.partition("#")[0]
        fs, root = self._filesystem()
        stem = posixpath.splitext(name)[0]
        for candidate in dict.fromkeys((name, stem + ".npz", stem + ".json")):
            path = posixpath.join(root, candidate)
            if fs.get_file_info(path).type != pafs.FileType.File:
                continue
            with tempfile.TemporaryDirectory(prefix="poly_golden_") as tmp:
                with fs.open_input_stream(path) as src, open(os.path.join(tmp, candidate), "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
                return DirectoryReference(tmp).outputs_for(sample)
        raise FileNotFoundError(f"no golden file for sample '{name}' in '{self.uri}'")

    def __getstate__(self) -> dict[Any, Any]:  # the filesystem handle is opened again where the reference lands
        return {**self.__dict__, "_fs": None}


class StreamReference(Reference):
    """Saved ``RunResults`` (files or per-iteration directories), iteration i for sample i, read
    lazily (a per-iteration directory is never held in memory as a whole)."""

    def __init__(self, paths: Any) -> None:
        self.paths = paths
        self._iter: Any = None

    def describe(self) -> Any:
        return ", ".join(map(os.fspath, self.paths)) if isinstance(self.paths, (list, tuple)) else os.fspath(self.paths)

    def _next(self) -> Any:
        if self._iter is None:
            self._iter = iter(RunResults.load_streaming(self.paths))
        try:
            return next(self._iter)
        except StopIteration:
            raise ValueError(f"the reference results in {self.describe()} ran out before the dataset did") from None

    def outputs_for(self, sample: Any) -> Any:
        return _first_iteration(self._next())

    def skip(self, item: Any) -> None:
        try:
            self._next()
        except ValueError:
            pass


class RunnerReference(Reference):
    """A second runner, run on each sample alongside the runner under test."""

    runs_model = True

    def __init__(self, runner: Any) -> None:
        self.runner = runner

    def describe(self) -> Any:
        return self.runner.name

    def outputs_for(self, sample: Any) -> Any:
        return OrderedDict(self.runner.infer(sample.feed_dict).items())


def open_reference(paths: Any = None, by_name: bool = True, runner: Any = None) -> Reference:
    """
    The reference of a validation: a second ``runner`` run on each sample; else a golden
    directory matched by file name (one directory or URI and ``by_name``, i.e. the dataset's
    samples have file names), else saved ``RunResults`` (files or per-iteration directories) in
    order.
    """
    if runner is not None:
        return RunnerReference(runner)
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    if by_name and len(paths) == 1 and is_uri(paths[0]):
        return UriGoldenReference(paths[0])
    if by_name and len(paths) == 1 and os.path.isdir(paths[0]):
        return DirectoryReference(paths[0])
    return StreamReference(paths)
