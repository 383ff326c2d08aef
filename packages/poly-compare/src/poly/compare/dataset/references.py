"""
References (golden outputs) for validation: a directory of per-sample files matched by file
name, saved ``RunResults`` read one iteration at a time, or a second runner run alongside.
"""

from __future__ import annotations

import os
from collections import OrderedDict

from poly.compare.io.npz_codec import is_npz_file, load_npz
from poly.compare.results import RunResults

__all__ = ["Reference", "DirectoryReference", "StreamReference", "RunnerReference", "open_reference"]


def _first_iteration(results: RunResults, k: int = 0) -> OrderedDict:
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

    def outputs_for(self, sample) -> OrderedDict:
        raise NotImplementedError()

    def skip(self, item) -> None:
        pass

    def describe(self) -> str:
        return type(self).__name__


class DirectoryReference(Reference):
    """
    A directory of golden outputs, one file per sample with the sample's file name (or its stem
    with ``.npz``/``.json``): a plain ``.npz`` of output name -> array, or saved ``RunResults``
    (JSON or ``.npz``; the first runner, and its k-th iteration for a dataset file's k-th sample).
    """

    def __init__(self, path):
        self.path = os.fspath(path)

    def describe(self):
        return self.path

    def _find(self, name):
        stem = os.path.splitext(name)[0]
        for candidate in (name, stem + ".npz", stem + ".json"):
            full = os.path.join(self.path, candidate)
            if os.path.isfile(full):
                return full
        raise FileNotFoundError(f"no golden file for sample '{name}' in '{self.path}'")

    def outputs_for(self, sample):
        if sample.name is None:
            raise ValueError("samples without a file name cannot be matched to a golden directory")
        name, _, k = sample.name.partition("#")
        path = self._find(name)
        k = int(k) if k else 0
        if is_npz_file(path):
            meta, arrays = load_npz(path)
            if meta is None:
                return OrderedDict(arrays.items())
            return _first_iteration(RunResults.from_npz_archive(meta, arrays, path), k)
        return _first_iteration(RunResults.load(path), k)


class StreamReference(Reference):
    """Saved ``RunResults`` (files or per-iteration directories), iteration i for sample i, read
    lazily (a per-iteration directory is never held in memory as a whole)."""

    def __init__(self, paths):
        self.paths = paths
        self._iter = None

    def describe(self):
        return ", ".join(map(os.fspath, self.paths)) if isinstance(self.paths, (list, tuple)) else os.fspath(self.paths)

    def _next(self):
        if self._iter is None:
            self._iter = iter(RunResults.load_streaming(self.paths))
        try:
            return next(self._iter)
        except StopIteration:
            raise ValueError(f"the reference results in {self.describe()} ran out before the dataset did") from None

    def outputs_for(self, sample):
        return _first_iteration(self._next())

    def skip(self, item):
        try:
            self._next()
        except ValueError:
            pass


class RunnerReference(Reference):
    """A second runner, run on each sample alongside the runner under test."""

    runs_model = True

    def __init__(self, runner):
        self.runner = runner

    def describe(self):
        return self.runner.name

    def outputs_for(self, sample):
        return OrderedDict(self.runner.infer(sample.feed_dict).items())


def open_reference(paths, by_name=True) -> Reference:
    """
    A golden directory matched by file name (one directory and ``by_name``, i.e. the dataset is a
    directory too), else saved ``RunResults`` (files or per-iteration directories) in order.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    if by_name and len(paths) == 1 and os.path.isdir(paths[0]):
        return DirectoryReference(paths[0])
    return StreamReference(paths)
