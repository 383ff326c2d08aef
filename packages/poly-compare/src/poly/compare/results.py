"""
Inference results: ``IterationResult`` (the outputs of one runner for one input) and
``RunResults`` (every iteration of every runner), saved and loaded in Polygraphy 0.53's JSON
format or as ``.npz``.
"""

from __future__ import annotations

import copy
import os
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Iterator, KeysView, Mapping
from typing import IO, Any, cast, overload

import numpy as np
import numpy.typing as npt

from poly.compare.io.iteration_files import iterate_from_files
from poly.compare.io.npz_codec import decode_run_results, is_npz_file, load_npz, run_results_to_npz
from poly.core import G_LOGGER, DataFormatError, config
from poly.core.arrays.ops import is_torch
from poly.core.files.read_write import StrPath
from poly.core.json import Decoder, Encoder, from_json, load_json, save_json, to_json
from poly.core.optional_import import lazy_import

torch = lazy_import("torch", purpose="Swapping PyTorch tensors to disk")

__all__ = ["LazyArray", "IterationResult", "RunResults", "array_swap_threshold_mb"]


def array_swap_threshold_mb() -> int:
    """
    Arrays larger than this many MiB are kept in a temporary ``.npy`` file until used:
    ``poly.core.config.ARRAY_SWAP_THRESHOLD_MB`` (also Polygraphy's ``poly.config``), read from
    ``POLY_ARRAY_SWAP_THRESHOLD_MB`` or ``POLYGRAPHY_ARRAY_SWAP_THRESHOLD_MB`` at import and
    assignable; negative (the default) disables it.
    """
    threshold: int = config.ARRAY_SWAP_THRESHOLD_MB
    return threshold


def _nbytes(arr: Any) -> int:
    return int(getattr(arr, "nbytes", 0) or 0)


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


class LazyArray:
    """An array (NumPy array or PyTorch tensor) that may be kept in a temporary file until it is
    needed."""

    def __init__(self, arr: npt.NDArray[Any] | Any) -> None:
        """
        Args:
            arr (Union[numpy.ndarray, torch.Tensor]): The array; moved to disk when larger than
                    ``array_swap_threshold_mb()`` (a ``.npy`` file, or ``torch.save``'s file for
                    a tensor, which comes back as a tensor of the same dtype and device).
        """
        self.arr: Any = None
        self.tmpfile: str | None = None
        threshold = array_swap_threshold_mb()
        swappable = (isinstance(arr, np.ndarray) and not arr.dtype.hasobject) or is_torch(arr)
        if threshold >= 0 and _nbytes(arr) > (threshold << 20) and swappable:
            import tempfile  # only for an array moved to disk: not a start-up cost of every run

            suffix = ".pt" if is_torch(arr) else ".npy"
            fd, path = tempfile.mkstemp(prefix="poly-array-", suffix=suffix)
            with os.fdopen(fd, "wb") as f:
                if is_torch(arr):
                    torch.save(arr, f)
                else:
                    np.save(f, arr, allow_pickle=False)
            self.tmpfile = path
            weakref.finalize(self, _remove_quietly, path)
            G_LOGGER.extra_verbose(f"Evicting large array ({_nbytes(arr) / 1024.0 ** 2:.3f} MiB) from memory and saving to {path}")
        else:
            self.arr = arr

    def __getstate__(self) -> dict[str, Any]:
        # Pickles (e.g. results sent back from a runner subprocess) carry the data itself: the
        # temporary file belongs to the process that made it.
        return {"arr": self.load(), "tmpfile": None}

    def load(self) -> npt.NDArray[Any]:
        """Returns the array, reading it back from disk if it was swapped out."""
        arr: npt.NDArray[Any]
        if self.arr is not None:
            arr = self.arr
            return arr
        path = cast(str, self.tmpfile)  # set whenever arr is not
        if path.endswith(".pt"):
            # weights_only: rebuilding plain tensors runs no code from the file
            arr = torch.load().load(path, weights_only=True)  # LazyModule.load() gives the module
            return arr
        arr = np.load(path, allow_pickle=False)
        return arr


@Encoder.register(LazyArray)
def _encode_lazy_array(lazy: LazyArray) -> dict[str, Any]:
    return {"values": lazy.load()}


def _expect_array(value: object, what: str) -> npt.NDArray[Any]:
    if not isinstance(value, np.ndarray):
        raise ValueError(f"{what} is a {type(value).__name__}, not an array")
    return value


@Decoder.register(LazyArray, alias="LazyNumpyArray")
def _decode_lazy_array(dct: dict[str, Any]) -> LazyArray:
    return LazyArray(_expect_array(dct["values"], "its 'values'"))


def _to_lazy(arr: Any) -> LazyArray:
    return arr if isinstance(arr, LazyArray) else LazyArray(arr)


RunnerResults = tuple[str, list["IterationResult"]]
"""One runner's results: its name and one ``IterationResult`` per iteration."""


class IterationResult:
    """
    The outputs of one iteration of one runner: an ordered mapping of output name to array, plus
    the runner's name and the inference time.
    """

    def __init__(self, outputs: Mapping[str, Any] | None = None, runtime: float | None = None,
                 runner_name: str | None = None) -> None:
        """
        Args:
            outputs (Dict[str, numpy.ndarray]): The outputs by name, in the runner's order.
            runtime (float): Seconds the inference took (for logging).
            runner_name (str): The runner's name. Defaults to ``"custom_runner"``.
        """
        if outputs and array_swap_threshold_mb() < 0:
            total_gib = sum(_nbytes(arr) for arr in outputs.values() if not isinstance(arr, LazyArray)) / 1024.0**3
            if total_gib >= 1:
                G_LOGGER.warning(
                    f"It looks like the outputs of this network are very large ({total_gib:.3f} GiB).\n"
                    "To reduce memory usage, you may want to allow poly to swap these arrays to the disk "
                    "using the POLY_ARRAY_SWAP_THRESHOLD_MB environment variable."
                )
        self.dct: OrderedDict[str, LazyArray] = OrderedDict()
        """Output name -> ``LazyArray``."""
        for name, arr in (outputs or {}).items():
            self.dct[name] = _to_lazy(arr)
        self.runtime = runtime
        self.runner_name = "custom_runner" if runner_name is None else runner_name

    def keys(self) -> KeysView[str]:
        """The output names, in order."""
        return self.dct.keys()

    def values(self) -> Iterator[npt.NDArray[Any]]:
        """Yields the output arrays, in order."""
        for lazy in self.dct.values():
            yield lazy.load()

    def items(self) -> Iterator[tuple[str, npt.NDArray[Any]]]:
        """Yields ``(name, array)`` pairs, in order."""
        for name, lazy in self.dct.items():
            yield name, lazy.load()

    def update(self, other: Mapping[str, Any] | IterationResult) -> IterationResult:
        """Adds or replaces outputs from a mapping of name to array."""
        for name, arr in other.items():
            self[name] = arr
        return self

    def __getitem__(self, name: str) -> npt.NDArray[Any]:
        return self.dct[name].load()

    def __setitem__(self, name: str, arr: Any) -> None:
        if not isinstance(name, str):
            G_LOGGER.critical(f"IterationResult keys are output names (str), not {type(name).__name__}: {name!r}")
        self.dct[name] = _to_lazy(arr)

    def __delitem__(self, name: str) -> None:
        del self.dct[name]

    def __contains__(self, name: object) -> bool:
        return name in self.dct

    def __iter__(self) -> Iterator[str]:
        return iter(self.dct)

    def __len__(self) -> int:
        return len(self.dct)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IterationResult):
            return NotImplemented
        if self.runtime != other.runtime or self.runner_name != other.runner_name:
            return False
        if list(self.keys()) != list(other.keys()):
            return False
        return all(np.array_equal(np.asarray(val), np.asarray(other[key])) for key, val in self.items())

    __hash__: Any = None

    def __copy__(self) -> IterationResult:
        new = IterationResult(runtime=self.runtime, runner_name=self.runner_name)
        new.dct = OrderedDict(self.dct)
        return new

    def __deepcopy__(self, memo: dict[int, Any]) -> IterationResult:
        return IterationResult(
            outputs=OrderedDict((name, copy.deepcopy(arr, memo)) for name, arr in self.items()),
            runtime=self.runtime,
            runner_name=self.runner_name,
        )

    def __repr__(self) -> str:
        outputs = {name: f"<{arr.dtype} {tuple(arr.shape)}>" for name, arr in self.items()}
        return f"IterationResult(runner_name={self.runner_name!r}, runtime={self.runtime!r}, outputs={outputs})"


@Encoder.register(IterationResult)
def _encode_iteration_result(result: IterationResult) -> dict[str, Any]:
    return {"outputs": result.dct, "runtime": result.runtime, "runner_name": result.runner_name}


@Decoder.register(IterationResult)
def _decode_iteration_result(dct: dict[str, Any]) -> IterationResult:
    outputs = dct["outputs"]
    if not isinstance(outputs, dict):
        raise ValueError(f"its 'outputs' is a {type(outputs).__name__}, not an object of arrays by name")
    for name, arr in outputs.items():
        if not isinstance(arr, LazyArray):
            _expect_array(arr, f"output {name!r}")
    runtime, runner_name = dct.get("runtime"), dct.get("runner_name")
    if runtime is not None and (isinstance(runtime, bool) or not isinstance(runtime, (int, float))):
        raise ValueError(f"its 'runtime' is a {type(runtime).__name__}, not a number")
    if runner_name is not None and not isinstance(runner_name, str):
        raise ValueError(f"its 'runner_name' is a {type(runner_name).__name__}, not a string")
    return IterationResult(outputs=outputs, runtime=runtime, runner_name=runner_name)


class RunResults:
    """
    The results of running several runners: a list of ``(runner_name, List[IterationResult])``
    that also behaves like an ordered mapping (which may hold the same name twice)::

        outputs = run_results["onnxrt-runner"][0]   # IterationResult of the first iteration
        for runner_name, iteration_results in run_results: ...

    ``save``/``load`` write and read Polygraphy's JSON format, or ``.npz`` for a path ending in
    ``.npz`` (``load`` recognises an ``.npz`` by its content).
    """

    def __init__(self, lst: Iterable[RunnerResults] | None = None) -> None:
        """
        Args:
            lst (List[Tuple[str, List[IterationResult]]]): Initial contents.
        """
        self.lst: list[RunnerResults] = []
        for item in lst or []:
            self.append(item)

    @staticmethod
    def _check(item: object) -> None:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
            G_LOGGER.critical(
                f"RunResults holds (runner_name, List[IterationResult]) tuples, not: {item!r}"
            )

    def append(self, item: RunnerResults) -> None:
        """Appends a ``(runner_name, List[IterationResult])`` tuple."""
        self._check(item)
        self.lst.append(item)

    def extend(self, items: Iterable[RunnerResults]) -> None:
        """Appends several ``(runner_name, List[IterationResult])`` tuples."""
        for item in items:
            self.append(item)

    def items(self) -> Iterator[RunnerResults]:
        """Yields ``(runner_name, List[IterationResult])`` tuples."""
        yield from self.lst

    def keys(self) -> Iterator[str]:
        """Yields runner names."""
        for name, _ in self.lst:
            yield name

    def values(self) -> Iterator[list[IterationResult]]:
        """Yields each runner's ``List[IterationResult]``."""
        for _, iteration_results in self.lst:
            yield iteration_results

    def update(self, other: Mapping[str, list[IterationResult]] | RunResults) -> RunResults:
        """Adds or replaces runners from a dict or ``RunResults``."""
        for name, iteration_results in other.items():
            self[name] = iteration_results
        return self

    def add(self, out_list: Iterable[Mapping[str, Any]], runtime: float | None = None,
            runner_name: str | None = None) -> None:
        """
        Adds a runner from a list of output dicts, one per iteration.

        Args:
            out_list (List[Dict[str, numpy.ndarray]]): The outputs of each iteration.
            runtime (float): The inference time of each iteration.
            runner_name (str): The runner's name. Defaults to ``"custom_runner"``.
        """
        runner_name = "custom_runner" if runner_name is None else runner_name
        self[runner_name] = [IterationResult(out, runtime, runner_name) for out in out_list]

    @overload
    def __getitem__(self, key: int) -> RunnerResults: ...
    @overload
    def __getitem__(self, key: slice) -> list[RunnerResults]: ...
    @overload
    def __getitem__(self, key: str) -> list[IterationResult]: ...

    def __getitem__(self, key: int | slice | str) -> RunnerResults | list[RunnerResults] | list[IterationResult]:
        if isinstance(key, (int, slice)):
            return self.lst[key]
        for name, iteration_results in self.lst:
            if name == key:
                return iteration_results
        G_LOGGER.critical(f"{key:35} does not exist in this RunResults instance. Note: Available runners: {list(self.keys())}")

    def __setitem__(self, key: int | str, value: Any) -> None:
        if isinstance(key, int):
            self._check(value)
            self.lst[key] = value
            return
        for index, name in enumerate(self.keys()):
            if name == key:
                self.lst[index] = (key, value)
                return
        self.append((key, value))

    def __contains__(self, val: object) -> bool:
        if isinstance(val, (str, bytes)):
            return val in list(self.keys())
        return val in self.lst

    def __iter__(self) -> Iterator[RunnerResults]:
        return iter(self.lst)

    def __len__(self) -> int:
        return len(self.lst)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunResults):
            return NotImplemented
        if len(self.lst) != len(other.lst):
            return False
        return all(r0 == r1 and list(its0) == list(its1) for (r0, its0), (r1, its1) in zip(self.lst, other.lst, strict=True))

    __hash__: Any = None

    def __repr__(self) -> str:
        return f"RunResults({self.lst!r})"

    def split(self) -> Iterator[RunResults]:
        """Yields one single-iteration ``RunResults`` per iteration (runners that ran out are left out)."""
        count = max((len(its) for _, its in self.lst), default=0)
        for index in range(count):
            single = RunResults()
            for name, its in self.lst:
                if index < len(its):
                    single.append((name, [its[index]]))
            yield single

    @staticmethod
    def concat(runs: Iterable[RunResults]) -> RunResults:
        """Joins the iterations of several ``RunResults`` (matching runners by name): the inverse of ``split``."""
        combined = RunResults()
        for run in runs:
            for name, its in run.items():
                if name in combined:
                    combined[name].extend(its)
                else:
                    combined.append((name, list(its)))
        return combined

    def to_json(self) -> str:
        """This instance as JSON text, in Polygraphy's format."""
        return to_json(self)

    @staticmethod
    def from_json(src: str | bytes | bytearray) -> RunResults:
        """Decodes JSON text into a ``RunResults``."""
        return RunResults._checked(from_json(src), "Provided JSON")

    @staticmethod
    def _checked(obj: object, source: str) -> RunResults:
        if not isinstance(obj, RunResults):
            raise DataFormatError(
                f"{source} cannot be decoded into a RunResults. Note: JSON was decoded into a {type(obj).__name__}"
            )
        return obj

    def save(self, dest: StrPath | IO[Any]) -> None:
        """
        Saves to a path (atomically) or file-like object: ``.npz`` when the path ends in ``.npz``,
        else Polygraphy's JSON format.
        """
        if isinstance(dest, (str, os.PathLike)) and os.fspath(dest).lower().endswith(".npz"):
            G_LOGGER.info(f"Saving inference results to {dest}")
            run_results_to_npz(self, dest)
            return
        save_json(self, dest, description="inference results")

    @staticmethod
    def load(src: StrPath | IO[Any]) -> RunResults:
        """Loads from a JSON or ``.npz`` file (or a file-like object holding JSON)."""
        if is_npz_file(src):
            G_LOGGER.info(f"Loading inference results from {src}")
            meta, arrays = load_npz(src)
            return RunResults.from_npz_archive(meta, arrays, src)
        source = f"'{os.fspath(src)}'" if isinstance(src, (str, os.PathLike)) else "Provided JSON"
        return RunResults._checked(load_json(src, description="inference results"), source)

    @staticmethod
    def from_npz_archive(meta: Mapping[str, Any], arrays: Mapping[str, Any], src: object) -> RunResults:
        """Builds the ``RunResults`` held by an ``.npz`` archive already read (``load_npz``);
        ``src`` names it in errors."""
        results = RunResults()
        for runner_name, iterations in decode_run_results(meta, arrays, src):
            results.append((runner_name, [
                IterationResult(outputs=outputs, runtime=runtime, runner_name=name)
                for outputs, runtime, name in iterations
            ]))
        return results

    @staticmethod
    def load_streaming(path: StrPath | Iterable[StrPath], allow_dirs: bool = True) -> Iterator[RunResults]:
        """
        Yields single-iteration ``RunResults`` from a file (split), a directory of per-iteration
        files, or a list of those (chained), one iteration at a time.
        """
        yield from iterate_from_files(path, lambda file_path: RunResults.load(file_path).split(), allow_dirs=allow_dirs)


@Encoder.register(RunResults)
def _encode_run_results(results: RunResults) -> dict[str, Any]:
    return {"lst": results.lst}


def _runner_entry(item: object, index: int) -> RunnerResults:
    if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], list)):
        raise ValueError(f"entry {index} of its 'lst' is not a [runner name, [iteration results]] pair")
    for k, result in enumerate(item[1]):
        if not isinstance(result, IterationResult):
            raise ValueError(f"iteration {k} of runner {item[0]!r} is a {type(result).__name__}, not an IterationResult")
    return (item[0], item[1])


@Decoder.register(RunResults)
def _decode_run_results(dct: dict[str, Any]) -> RunResults:
    lst = dct["lst"]
    if not isinstance(lst, list):
        raise ValueError(f"its 'lst' is a {type(lst).__name__}, not a list")
    return RunResults([_runner_entry(item, index) for index, item in enumerate(lst)])
