"""
Tactic records: Polygraphy's tactic replay files (JSON written by ``--save-tactics``: layer
name -> implementation, tactic and I/O formats) and TensorRT timing caches (key -> tactic hash
and time), read into one form for ``poly inspect tactics``; and the diff of good and bad
replays for ``poly inspect diff-tactics``: the tactics only ever seen in failing builds.
"""

import json
import os
from collections import OrderedDict
from typing import Any, NamedTuple

from poly.core import G_LOGGER, PolyException, atomic_write_text

__all__ = [
    "TensorInfo",
    "Algorithm",
    "TacticReplayData",
    "load_tactic_records",
    "diff_tactics",
    "TacticFileError",
]


class TacticFileError(PolyException):
    """A tactic replay or timing cache file could not be read."""


def _expect(condition: Any, what: Any) -> None:
    if not condition:
        raise ValueError(what)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _TensorInfoFields(NamedTuple):
    dtype: str
    strides: tuple
    vectorized_dim: object
    components_per_element: object


class TensorInfo(_TensorInfoFields):
    """
    The format of one input or output of a tactic: data type (kept as its string, e.g.
    ``"DataType.FLOAT"``, as replay files write it), strides, vectorized dimension and
    components per element. A tuple, so it unpacks as ``dtype, strides, vectorized_dim,
    components = info``.
    """

    def __new__(cls, dtype: Any, strides: Any, vectorized_dim: Any = None, components_per_element: Any = None) -> Any:
        return super().__new__(cls, str(dtype), tuple(strides), vectorized_dim, components_per_element)

    @staticmethod
    def from_trt(io_info: Any) -> Any:
        """The ``TensorInfo`` of a TensorRT ``IAlgorithmIOInfo`` (vectorized_dim and
        components_per_element are None where TensorRT lacks them)."""
        return TensorInfo(io_info.dtype, tuple(io_info.strides), getattr(io_info, "vectorized_dim", None),
                          getattr(io_info, "components_per_element", None))

    def __repr__(self) -> str:
        return f"TensorInfo({self.dtype}, {self.strides}, {self.vectorized_dim}, {self.components_per_element})"


def _tensor_info(dct: Any, where: Any) -> Any:
    _expect(isinstance(dct, dict), f"{where} is a {type(dct).__name__}, not an object")
    strides = dct.get("strides") or ()
    _expect(isinstance(strides, list) and all(_is_int(s) for s in strides), f"the strides of {where} are not integers")
    for key in ("vectorized_dim", "components_per_element"):
        value = dct.get(key)
        _expect(value is None or _is_int(value), f"'{key}' of {where} is not an integer")
    return TensorInfo(dct.get("dtype"), strides, dct.get("vectorized_dim"), dct.get("components_per_element"))


def _tensor_infos(dct: Any, key: Any, layer: Any) -> list[Any]:
    infos = dct.get(key, [])
    _expect(isinstance(infos, list), f"'{key}' of layer {layer!r} is a {type(infos).__name__}, not a list")
    return [_tensor_info(info, f"{key[:-1]} {index} of layer {layer!r}") for index, info in enumerate(infos)]


class Algorithm:
    """The tactic chosen for one layer: implementation, tactic and the formats of its I/O."""

    def __init__(self, implementation: Any, tactic: Any, inputs: Any = (), outputs: Any = (), time_ms: Any = None) -> None:
        self.implementation = implementation
        self.tactic = tactic
        self.inputs = tuple(TensorInfo(*info) for info in inputs)
        self.outputs = tuple(TensorInfo(*info) for info in outputs)
        self.time_ms = time_ms
        """The time a timing cache recorded for the tactic (None for replay files)."""

    @staticmethod
    def from_json_dict(dct: Any, layer: str = "?") -> Any:
        """
        The algorithm of a replay file's entry for ``layer``.

        Raises:
            ValueError: When the entry is not of the replay format.
        """
        _expect(isinstance(dct, dict), f"layer {layer!r} maps to a {type(dct).__name__}, not an algorithm object")
        for key in ("implementation", "tactic"):
            value = dct.get(key)
            _expect(value is None or isinstance(value, (int, str)), f"'{key}' of layer {layer!r} is a "
                    f"{type(value).__name__}, not an integer")
        return Algorithm(
            dct.get("implementation"),
            dct.get("tactic"),
            _tensor_infos(dct, "inputs", layer),
            _tensor_infos(dct, "outputs", layer),
        )

    def to_json_dict(self) -> dict[Any, Any]:
        def io(info: Any) -> dict[Any, Any]:
            dtype, strides, vectorized_dim, components = info
            return {
                "polygraphy_class": "TensorInfo",
                "dtype": dtype,
                "strides": list(strides),
                "vectorized_dim": vectorized_dim,
                "components_per_element": components,
            }

        return {
            "polygraphy_class": "Algorithm",
            "implementation": self.implementation,
            "tactic": self.tactic,
            "inputs": [io(i) for i in self.inputs],
            "outputs": [io(o) for o in self.outputs],
        }

    def _key(self) -> tuple[Any, ...]:
        return (self.implementation, self.tactic, self.inputs, self.outputs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Algorithm) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        def fmt(infos: Any) -> Any:
            return "[" + ", ".join(f"{d.split('.')[-1]}{list(s)}" for d, s, _, _ in infos) + "]"

        text = f"(Implementation: {self.implementation}, Tactic: {self.tactic})"
        if self.time_ms is not None:
            text += f" | Time: {self.time_ms} ms"
        if self.inputs or self.outputs:
            text += f" | Inputs: {fmt(self.inputs)} | Outputs: {fmt(self.outputs)}"
        return text

    __repr__ = __str__


class TacticReplayData(OrderedDict):
    """Layer name -> ``Algorithm``, in Polygraphy's tactic replay JSON format."""

    def add(self, name: Any, algorithm: Any) -> Any:
        self[name] = algorithm
        return self

    @staticmethod
    def from_json_dict(dct: Any) -> Any:
        replay = dct.get("replay") if isinstance(dct, dict) else None
        if not isinstance(replay, dict):
            raise ValueError("no 'replay' mapping")
        return TacticReplayData((name, Algorithm.from_json_dict(algo, name)) for name, algo in replay.items())

    def to_json_dict(self) -> dict[Any, Any]:
        return {
            "replay": {name: algo.to_json_dict() for name, algo in self.items()},
            "polygraphy_class": "TacticReplayData",
        }

    def save(self, path: Any) -> None:
        atomic_write_text(os.fspath(path), json.dumps(self.to_json_dict(), indent=4))

    @staticmethod
    def load(path: Any) -> Any:
        return _load_replay(os.fspath(path))

    def __str__(self) -> str:
        return "\n".join(f"Layer: {name}\n    Algorithm: {algo}" for name, algo in self.items())


def _load_replay(path: Any) -> Any:
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise TacticFileError(f"'{path}' is not a tactic replay file: not UTF-8 text ({err})") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise TacticFileError(
            f"'{path}' is not a tactic replay file: malformed JSON: {err.msg} at line {err.lineno}, column {err.colno}"
        ) from None
    except RecursionError:
        raise TacticFileError(f"'{path}' is not a tactic replay file: its JSON is nested too deeply") from None
    try:
        return TacticReplayData.from_json_dict(obj)
    except ValueError as err:
        raise TacticFileError(f"'{path}' is not a tactic replay file: {err}") from None


def _load_timing_cache(path: Any) -> Any:
    from poly.trt.builder.timing_cache import quiet_timing_cache_api
    from poly.trt.tensorrt_module import trt
    from poly.trt.trt_logger import get_trt_logger

    with open(path, "rb") as f:
        data = f.read()
    config = trt.Builder(get_trt_logger()).create_builder_config()
    with quiet_timing_cache_api():
        cache = config.create_timing_cache(data)
        if cache is None:
            raise TacticFileError(
                f"'{path}' is neither a tactic replay (JSON) nor a timing cache TensorRT can read"
            )
        records = TacticReplayData()
        for key in cache.queryKeys():
            value = cache.query(key)
            records[str(key)] = Algorithm(
                "timing-cache", getattr(value, "tacticHash", None), time_ms=getattr(value, "timingMsec", None)
            )
    return records


def load_tactic_records(path: Any) -> Any:
    """
    Reads a tactic replay JSON file or a timing cache into a ``TacticReplayData``.

    Raises:
        TacticFileError: with one line naming the file, when it is neither.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        raise TacticFileError(f"Tactic file '{path}' is a directory, not a file")
    if not os.path.isfile(path):
        raise TacticFileError(f"Tactic file '{path}' does not exist")
    with open(path, "rb") as f:
        head = f.read(64)
    if not head:
        raise TacticFileError(f"Tactic file '{path}' is empty")
    if head.lstrip()[:1] in (b"{", b"["):
        return _load_replay(path)
    return _load_timing_cache(path)


def _replays_in(source: Any) -> list[tuple[str, Any]]:
    """(path, replay) of a replay file, or of every replay file under a directory (recursively,
    in name order). A file named directly must be a replay; in a directory, other files are
    skipped with a warning and an empty directory holds zero replays, as in Polygraphy."""
    source = os.fspath(source)
    if not os.path.isdir(source):
        return [(source, _load_replay(source))]
    found = []
    for root, dirs, names in os.walk(source):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(n for n in names if not n.startswith(".")):
            path = os.path.join(root, name)
            try:
                found.append((path, _load_replay(path)))
            except (TacticFileError, OSError) as err:
                why = str(err)
                named = f"'{path}' "
                G_LOGGER.warning(f"Skipping {path!r}, which {why[len(named):]}" if why.startswith(named)
                                 else f"Skipping {path!r}: {why}")
    return found


class _Suspects(OrderedDict):  # type: ignore[type-arg]
    """What ``diff_tactics`` found, with the replay files it read."""

    good_files: list[str]
    bad_files: list[str]


def diff_tactics(good: Any, bad: Any) -> Any:
    """
    Finds tactics that may cause failures: for each layer, those used in some bad replay and in
    no good replay.

    Args:
        good, bad (Union[str, Sequence[str]]): Replay files or directories of them.

    Returns:
        Dict[str, List[Algorithm]]: Layer name -> suspicious algorithms (layers with none left out);
        its ``good_files`` and ``bad_files`` attributes list the replay files that were read.
    """

    def collect(sources: Any) -> tuple[Any, ...]:
        table: dict[Any, Any] = {}
        files = []
        for source in [sources] if isinstance(sources, (str, os.PathLike)) else sources:
            for path, replay in _replays_in(source):
                files.append(path)
                for name, algo in replay.items():
                    table.setdefault(name, set()).add(algo)
        return table, files

    good_table, good_files = collect(good)
    bad_table, bad_files = collect(bad)
    G_LOGGER.info(f"Loaded {len(good_files)} good tactic replays.")
    G_LOGGER.verbose(f"Good tactic replays: {good_files}")
    G_LOGGER.info(f"Loaded {len(bad_files)} bad tactic replays.")
    G_LOGGER.verbose(f"Bad tactic replays: {bad_files}")
    suspects = _Suspects()
    suspects.good_files, suspects.bad_files = good_files, bad_files
    for name in sorted(bad_table):
        only_bad = bad_table[name] - good_table.get(name, set())
        if only_bad:
            suspects[name] = sorted(only_bad, key=str)
    return suspects
