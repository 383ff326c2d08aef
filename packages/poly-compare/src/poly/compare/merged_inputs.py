"""
``merge_inputs``: saved inputs and saved outputs merged into feed dicts, one per iteration
(what ``poly data to-input`` writes, and ``--load-inputs`` reads).

Each file holds either inputs (Polygraphy's ``--save-inputs`` JSON: a list of feed dicts or one
feed dict; poly's input ``.npz``) or inference results (a ``RunResults`` in JSON or ``.npz``).
Iteration ``i`` of the result is the union of iteration ``i`` of every file (every runner of a
``RunResults``), in the order given: a tensor present in several places takes the value of the
last one. Reading never runs code.
"""

from __future__ import annotations

import os
from collections import OrderedDict

import numpy as np

from poly.compare.io.npz_codec import is_npz_file, load_feed_dicts_npz, load_npz
from poly.compare.io.saved_inputs import iterate_input_file
from poly.compare.results import RunResults
from poly.core.exception import DataFormatError
from poly.core.json import load_json
from poly.core.logger import G_LOGGER

__all__ = ["merge_inputs", "iterations_of_file"]


def iterations_of_file(path) -> list[OrderedDict]:
    """
    The per-iteration tensors of one saved file: its feed dicts (input files) or, for inference
    results, the outputs of each iteration (several runners' iterations merged, later runners
    winning, with a warning).

    Raises:
        DataFormatError: When the file holds neither inputs nor inference results.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(2, "No such file", path)
    if is_npz_file(path):
        meta, arrays = load_npz(path)
        if meta is not None and meta.get("format") == "poly.RunResults":
            return _iterations_of_results(RunResults.from_npz_archive(meta, arrays, path), path)
        return load_feed_dicts_npz(path)
    data = load_json(path, description="input or output data")
    if isinstance(data, RunResults):
        return _iterations_of_results(data, path)
    return list(iterate_input_file(path))


def _iterations_of_results(results, path) -> list[OrderedDict]:
    runners = list(results.keys())
    if len(runners) > 1:
        G_LOGGER.warning(
            f"{path} holds the outputs of {len(runners)} runners ({', '.join(runners)}); where they share an "
            "output name, the last runner's value is kept. Save the outputs of a single runner to avoid this."
        )
    iterations: list[OrderedDict] = []
    for _, iteration_results in results.items():
        _pad(iterations, len(iteration_results))
        for merged, result in zip(iterations, iteration_results, strict=False):
            merged.update(result.items())
    return iterations


def _pad(iterations, count):
    # One new dict per iteration (never the same dict repeated).
    iterations.extend(OrderedDict() for _ in range(count - len(iterations)))


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def merge_inputs(paths) -> list[OrderedDict]:
    """
    Merges input and output files into feed dicts, one per iteration.

    Args:
        paths (Sequence[Union[str, os.PathLike]]): Files of inputs or inference results.

    Returns:
        List[OrderedDict[str, numpy.ndarray]]: One feed dict per iteration: every tensor of
        that iteration in any file (a name present in several files takes the last file's value).
    """
    paths = [os.fspath(path) for path in paths]
    if not paths:
        raise DataFormatError("No input or output files to merge")
    merged: list[OrderedDict] = []
    conflicts: dict[str, str] = {}
    for path in paths:
        iterations = iterations_of_file(path)
        if merged and len(iterations) != len(merged):
            G_LOGGER.warning(
                f"The files hold different numbers of iterations: {len(merged)} so far, {len(iterations)} in "
                f"{path}; some iterations will be missing some tensors."
            )
        _pad(merged, len(iterations))
        for feed_dict, new in zip(merged, iterations, strict=False):
            for name, value in new.items():
                if name in feed_dict and name not in conflicts and not _same(feed_dict[name], value):
                    conflicts[name] = path
                feed_dict[name] = value
    for name, path in conflicts.items():
        G_LOGGER.warning(f"Tensor {name!r} has different values in different files; the value from {path} is kept")
    return merged
