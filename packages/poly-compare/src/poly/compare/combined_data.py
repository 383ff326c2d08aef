"""
Saved data files combined into one: ``merge_inputs`` merges inputs and outputs into feed dicts,
one per iteration (``poly data to-input`` / ``data merge``, read back by ``--load-inputs``);
``concat_data`` puts the iterations of several files of one kind one after the other
(``poly data concat``).

Each file holds either inputs (Polygraphy's ``--save-inputs`` JSON: a list of feed dicts or one
feed dict; poly's input ``.npz``) or inference results (a ``RunResults`` in JSON or ``.npz``).
In ``merge_inputs``, iteration ``i`` of the result is the union of iteration ``i`` of every file
(every runner of a ``RunResults``), in the order given: a tensor present in several places
takes the value of the last one. Reading never runs code.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any

import numpy as np

from poly.compare.io.npz_codec import is_npz_file, load_feed_dicts_npz, load_npz
from poly.compare.io.saved_inputs import iterate_input_file
from poly.compare.results import RunResults
from poly.core import G_LOGGER, DataFormatError
from poly.core.json import load_json

__all__ = ["merge_inputs", "concat_data", "iterations_of_file", "load_data_file"]


def iterations_of_file(path: Any) -> Any:
    """
    The per-iteration tensors of one saved file: its feed dicts (input files) or, for inference
    results, the outputs of each iteration (several runners' iterations merged, later runners
    winning, with a warning).

    Raises:
        DataFormatError: When the file holds neither inputs nor inference results.
    """
    data = load_data_file(path)
    if isinstance(data, RunResults):
        return _iterations_of_results(data, os.fspath(path))
    return data


def load_data_file(path: Any) -> Any:
    """
    Loads a saved data file: a ``RunResults`` for inference results, else the list of its feed
    dicts (one per iteration).

    Raises:
        DataFormatError: When the file holds neither inputs nor inference results.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(2, "No such file", path)
    if is_npz_file(path):
        meta, arrays = load_npz(path)
        if meta is not None and meta.get("format") == "poly.RunResults":
            return RunResults.from_npz_archive(meta, arrays, path)
        return load_feed_dicts_npz(path)
    data = load_json(path)
    if isinstance(data, RunResults):
        G_LOGGER.info(f"Loaded inference results from {path}")
        return data
    return list(iterate_input_file(path))  # checks (and logs) them as inputs


def _iterations_of_results(results: Any, path: Any) -> list[OrderedDict]:  # type: ignore[type-arg]
    runners = list(results.keys())
    if len(runners) > 1:
        G_LOGGER.warning(
            f"{path} holds the outputs of {len(runners)} runners ({', '.join(runners)}); where they share an "
            "output name, the last runner's value is kept. Save the outputs of a single runner to avoid this."
        )
    iterations: list[OrderedDict] = []  # type: ignore[type-arg]
    for _, iteration_results in results.items():
        _pad(iterations, len(iteration_results))
        for merged, result in zip(iterations, iteration_results, strict=False):
            merged.update(result.items())
    return iterations


def _pad(iterations: Any, count: Any) -> None:
    # One new dict per iteration (never the same dict repeated).
    iterations.extend(OrderedDict() for _ in range(count - len(iterations)))


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def merge_inputs(paths: Any) -> list[OrderedDict]:  # type: ignore[type-arg]
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
    merged: list[OrderedDict] = []  # type: ignore[type-arg]
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
        G_LOGGER.warning(
            f"Tensor {name!r} has different values in different files; the value from {path} is kept. "
            "To put iterations one after the other instead, use `poly data concat`."
        )
    return merged


def concat_data(paths: Any) -> Any:
    """
    Concatenates the iterations of several files, all inputs or all inference results.

    Args:
        paths (Sequence[Union[str, os.PathLike]]): Files of inputs, or files of inference results.

    Returns:
        Union[List[OrderedDict[str, numpy.ndarray]], RunResults]: The feed dicts of every input
        file in order, or the results of every file (a runner's iterations joined by name).

    Raises:
        DataFormatError: When inputs and inference results are mixed.
    """
    paths = [os.fspath(path) for path in paths]
    if not paths:
        raise DataFormatError("No input or output files to concatenate")
    loaded = [(path, load_data_file(path)) for path in paths]
    kinds = {isinstance(data, RunResults) for _, data in loaded}
    if len(kinds) > 1:
        inputs = [path for path, data in loaded if not isinstance(data, RunResults)]
        outputs = [path for path, data in loaded if isinstance(data, RunResults)]
        raise DataFormatError(
            f"Cannot concatenate inputs ({', '.join(inputs)}) with inference results ({', '.join(outputs)}): "
            "give files of one kind"
        )
    names_seen: dict[str, list] = {}  # type: ignore[type-arg]

    def check_names(stream: Any, names: Any, path: Any, index: Any) -> None:
        expected = names_seen.setdefault(stream, names)
        if names != expected:
            G_LOGGER.warning(
                f"Iteration {index} of {path} holds other tensors than earlier iterations: {names} "
                f"instead of {expected}"
            )

    if kinds == {True}:
        for path, results in loaded:
            for runner_name, iterations in results.items():
                for index, result in enumerate(iterations):
                    check_names(f"runner:{runner_name}", list(result.keys()), path, index)
        return RunResults.concat([results for _, results in loaded])
    feed_dicts = []
    for path, iterations in loaded:
        for index, feed_dict in enumerate(iterations):
            check_names("inputs", list(feed_dict.keys()), path, index)
            feed_dicts.append(feed_dict)
    return feed_dicts
