"""
The ``.npz`` fast path for inputs and run results: plain NumPy archives, written
uncompressed and atomically, read with ``allow_pickle=False``.

An archive poly writes holds its arrays under generated keys plus ``__poly_meta__``, a JSON
string (a 0-d unicode array) describing the layout: for inputs, the feed dict of each iteration;
for run results, runners, iterations, runtimes and output names. An archive without that key,
such as one from ``numpy.savez("inputs.npz", x=..., y=...)``, is read as a single feed dict of
its arrays by name.
"""

from __future__ import annotations

import json
import os
import re
import struct
import zlib
from collections import OrderedDict
from typing import Any

import numpy as np

from poly.core import DataFormatError, atomic_write
from poly.core.arrays.host import host_array
from poly.core.files.npy_format import NpyHeader, array_from_data, array_from_zip_member, parse_npy_header
from poly.core.optional_import import lazy_import

__all__ = [
    "META_KEY",
    "is_npz_file",
    "save_npz",
    "load_npz",
    "load_npz_file",
    "save_feed_dicts_npz",
    "load_feed_dicts_npz",
    "run_results_to_npz",
    "decode_run_results",
]

META_KEY = "__poly_meta__"
ml_dtypes = lazy_import("ml_dtypes", install="ml-dtypes")
_ZIP_MAGIC = b"PK\x03\x04"
_EMPTY_ZIP_MAGIC = b"PK\x05\x06"


def is_npz_file(path: Any) -> bool:
    """Whether ``path`` is a file that starts like a zip archive (an ``.npz``)."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        return f.read(4) in (_ZIP_MAGIC, _EMPTY_ZIP_MAGIC)


def _storable(arr: np.ndarray) -> tuple[np.ndarray, str | None]:
    # Extension dtypes (ml_dtypes' bfloat16, float8...) have no .npy description: store their
    # bytes as unsigned integers and remember the dtype's name.
    if arr.dtype.hasobject:
        raise DataFormatError(f"refusing to save an object array (dtype {arr.dtype}) in an .npz archive")
    if arr.dtype.kind in "biufcUSmM":
        return arr, None
    return arr.view(np.dtype(f"u{arr.dtype.itemsize}")), arr.dtype.name


def _restore_dtype(arr: np.ndarray, name: str | None, source: Any) -> np.ndarray:
    if name is None:
        return arr
    if not re.fullmatch(r"[A-Za-z0-9_]+", name):
        raise DataFormatError(f"Could not load '{source}': invalid array dtype name {name!r}")
    try:
        dtype = np.dtype(name)
    except TypeError:
        if not ml_dtypes.is_available():
            raise DataFormatError(
                f"Could not load '{source}': it holds {name} arrays, which need ml_dtypes (pip install ml-dtypes)"
            ) from None
        typ = getattr(ml_dtypes, name, None)
        if not isinstance(typ, type):
            raise DataFormatError(f"Could not load '{source}': unknown array dtype {name!r}") from None
        dtype = np.dtype(typ)
    if dtype.hasobject or dtype.itemsize != arr.dtype.itemsize:
        raise DataFormatError(f"Could not load '{source}': dtype {name!r} does not fit its array")
    return arr.view(dtype)


class _ArchiveBuilder:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.dtypes: dict[str, str] = {}

    def add(self, arr: Any) -> str:
        key = f"a{len(self.arrays)}"
        # One conversion per array (torch tensors on any device, bfloat16 ones included, CuPy
        # arrays): never NumPy's element-by-element sequence protocol.
        stored, dtype_name = _storable(host_array(arr))
        self.arrays[key] = stored
        if dtype_name is not None:
            self.dtypes[key] = dtype_name
        return key


def save_npz(meta: dict, arrays: dict[str, np.ndarray], dtypes: dict[str, str], dest: Any) -> None:  # type: ignore[type-arg]
    """Writes ``arrays`` and the JSON ``meta`` (plus dtype names) as an uncompressed ``.npz``."""
    payload = dict(arrays)
    payload[META_KEY] = np.array(json.dumps({**meta, "dtypes": dtypes}))
    if hasattr(dest, "write"):
        np.savez(dest, **payload)  # type: ignore[arg-type]
        return
    with atomic_write(dest, "wb") as f:
        np.savez(f, **payload)  # type: ignore[arg-type]


_FAST_READ_LIMIT = 64 << 20
"""Archives up to this size are read in one call and parsed here; bigger ones member by member."""
_HEADER_CACHE: dict[bytes, NpyHeader] = {}
_HEADER_CACHE_LIMIT = 256


def _read_errors() -> tuple[type[BaseException], ...]:
    """What a damaged archive raises while it is read: zipfile's, zlib's and poly.core.files.npy_format's errors,
    NotImplementedError for an unknown compression, RuntimeError for an encrypted member. (zipfile, with
    pathlib and urllib, is imported where an archive is read, not by every run that imports this module.)"""
    import zipfile

    return (ValueError, OSError, zipfile.BadZipFile, EOFError, struct.error, zlib.error, NotImplementedError,
            RuntimeError)


def _npy_header(member: memoryview) -> NpyHeader:
    """The header of the .npy bytes ``member``; headers seen before (every sample of a dataset
    has the same) are not parsed again."""
    head = bytes(member[:12])
    if len(head) >= 10 and head[:6] == b"\x93NUMPY":
        size_len = 2 if head[6] == 1 else 4
        end = 8 + size_len + int.from_bytes(head[8:8 + size_len], "little")
        cached = _HEADER_CACHE.get(bytes(member[:end]))
        if cached is not None:
            return cached
    header = parse_npy_header(member)
    if len(_HEADER_CACHE) < _HEADER_CACHE_LIMIT:
        _HEADER_CACHE[bytes(member[:header.data_offset])] = header
    return header


def _key(name: str) -> str:
    """The array key of archive member ``name`` (its ``.npy`` suffix dropped, as np.load does)."""
    return name[:-4] if name.endswith(".npy") else name


def _stored_members(data: bytearray) -> list[tuple[str, int, int]] | None:
    """``(name, local header offset, size)`` of each member of the zip archive ``data``, read from
    its central directory, when every member is stored uncompressed and unencrypted (what
    ``np.savez`` writes); None for any other archive (compressed, Zip64 records, several disks,
    or damaged: zipfile then reads it, and names what is wrong)."""
    end = len(data) - 22  # the end-of-central-directory record, without an archive comment
    if end < 0 or data[end:end + 4] != _EMPTY_ZIP_MAGIC:
        end = data.rfind(_EMPTY_ZIP_MAGIC, max(0, len(data) - 22 - 0xFFFF))
        if end < 0 or end + 22 > len(data):
            return None
    disk, directory_disk, _, count, _, offset, _ = struct.unpack_from("<HHHHIIH", data, end + 4)
    if disk or directory_disk or count == 0xFFFF or offset == 0xFFFFFFFF:
        return None
    members = []
    for _ in range(count):
        if offset + 46 > len(data) or data[offset:offset + 4] != b"PK\x01\x02":
            return None
        (flags, method, packed, size, name_len, extra_len, comment_len, _, _, _, header) = struct.unpack_from(
            "<HH8xIIHHHHHII", data, offset + 8)
        if method != 0 or flags & 0x1 or packed != size or size == 0xFFFFFFFF or header == 0xFFFFFFFF:
            return None
        name = bytes(data[offset + 46:offset + 46 + name_len]).decode("utf-8" if flags & 0x800 else "cp437")
        members.append((name, header, size))
        offset += 46 + name_len + extra_len + comment_len
    return members


def _read_whole(path: Any) -> bytearray | None:
    """The bytes of the file at ``path`` read in one call; None for a file object or a file too
    large to read at once (``_FAST_READ_LIMIT``)."""
    if not isinstance(path, (str, os.PathLike)):
        return None
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > _FAST_READ_LIMIT:
            return None
        data = bytearray(size)
        if f.readinto(data) != size:
            return None
    return data


def _read_stored_npz(data: bytearray) -> dict[str, np.ndarray] | None:
    """
    The arrays of an uncompressed ``.npz`` (what ``np.savez`` writes) whose bytes are ``data``,
    parsed here without ``np.load``'s or zipfile's per-member objects: the validation loader reads
    two such files per sample. None when the archive is not of that kind (compressed, Zip64), so
    that the caller reads it member by member. Arrays are writable views of ``data``.
    """
    members = _stored_members(data)
    if members is None:
        return None
    view = memoryview(data)
    arrays = {}
    for name, offset, size in members:
        if data[offset:offset + 4] != _ZIP_MAGIC:
            raise ValueError(f"member '{name}' has no local header where the zip directory says")
        name_len, extra_len = struct.unpack_from("<HH", data, offset + 26)
        start = offset + 30 + name_len + extra_len
        member = view[start:start + size]
        if len(member) != size:
            raise ValueError(f"member '{name}' is truncated")
        header = _npy_header(member)
        arrays[_key(name)] = array_from_data(header, member[header.data_offset:])
    return arrays


def _read_npz_members(src: Any) -> dict[str, np.ndarray]:
    """Every member of an archive (any compression, a path or a file object), checked as it is read."""
    if isinstance(src, (str, os.PathLike)):
        size = os.path.getsize(src)
    else:
        position = src.tell()
        size = src.seek(0, os.SEEK_END)
        src.seek(position)
    import zipfile

    with zipfile.ZipFile(src) as archive:
        return {_key(info.filename): array_from_zip_member(archive, info, size) for info in archive.infolist()}


def load_npz(src: Any) -> tuple[Any, ...]:
    """
    Reads an ``.npz`` as with ``allow_pickle=False``, checking every member's claimed size
    against the archive before allocating it.

    Returns:
        Tuple[Optional[dict], Dict[str, numpy.ndarray]]: The poly layout (None for a plain
        archive) and every array by key, with extension dtypes restored.
    """
    return _decode(src, None, read=True)


def load_npz_file(path: Any) -> tuple[Any, ...] | None:
    """``load_npz(path)`` when the file at ``path`` is an ``.npz`` (starts like a zip archive),
    else None (a JSON file, say): the file is opened and read once either way. Raises OSError
    for a file that cannot be opened (FileNotFoundError where there is none)."""
    data = _read_whole(path)
    if data is not None and data[:4] not in (_ZIP_MAGIC, _EMPTY_ZIP_MAGIC):
        return None
    if data is None and not is_npz_file(path):
        return None
    return _decode(path, data)


def _decode(src: Any, data: bytearray | None, read: bool = False) -> tuple[Any, ...]:
    """``load_npz`` of ``src``, whose bytes are ``data`` where they were read at once (``read``:
    read them here, a failure reported as the archive's)."""
    try:
        if read:
            data = _read_whole(src)
        arrays = _read_stored_npz(data) if data is not None else None
        if arrays is None:
            arrays = _read_npz_members(src)
    except _read_errors() as err:
        text = " ".join(str(err).split()) or type(err).__name__
        if "pickle" in text.lower():
            raise DataFormatError(
                f"Could not load '{src}': refusing an object array or pickled payload "
                "(poly loads arrays with allow_pickle=False)"
            ) from None
        raise DataFormatError(f"Could not load '{src}': not a valid .npz archive ({text})") from None
    meta_arr = arrays.pop(META_KEY, None)
    if meta_arr is None:
        return None, arrays
    try:
        if meta_arr.dtype.kind != "U" or meta_arr.size != 1:
            raise ValueError(f"it is a {meta_arr.dtype} array of shape {meta_arr.shape}, not a string")
        meta = json.loads(str(meta_arr.item()))
        if not isinstance(meta, dict):
            raise ValueError(f"it holds a {type(meta).__name__}, not an object")
        dtypes = meta.get("dtypes", {})
        if not isinstance(dtypes, dict) or not all(isinstance(v, str) for v in dtypes.values()):
            raise ValueError("its 'dtypes' entry is not an object of dtype names")
    except (ValueError, RecursionError) as err:
        raise DataFormatError(f"Could not load '{src}': its {META_KEY} entry is invalid ({err})") from None
    for key, name in dtypes.items():
        if key in arrays:
            arrays[key] = _restore_dtype(arrays[key], name, src)
    return meta, arrays


def _expect(condition: Any, src: Any, what: Any) -> None:
    if not condition:
        raise DataFormatError(f"Could not load '{src}': its {META_KEY} layout is invalid: {what}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _lookup(arrays: dict, key: Any, src: Any) -> Any:  # type: ignore[type-arg]
    try:
        return arrays[key]
    except (KeyError, TypeError):
        raise DataFormatError(f"Could not load '{src}': its layout names a missing array {key!r}") from None


def _named_arrays(pairs: Any, arrays: Any, src: Any, where: Any) -> OrderedDict:  # type: ignore[type-arg]
    """``[[name, array key], ...]`` -> name -> array."""
    _expect(isinstance(pairs, list), src, f"{where} is {_short(pairs)}, not a list of [name, array key] pairs")
    named = OrderedDict()
    for pair in pairs:
        _expect(isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair), src,
                f"{where} holds {_short(pair)}, not a [name, array key] pair")
        named[pair[0]] = _lookup(arrays, pair[1], src)
    return named


def _entry(dct: Any, key: Any, types: Any, default: Any, src: Any, where: Any) -> Any:
    types = types if isinstance(types, tuple) else (types,)
    value = dct.get(key, default)
    _expect(isinstance(value, types) and not (isinstance(value, bool) and bool not in types), src,
            f"'{key}' of {where} is {_short(value)}")
    return value


def save_feed_dicts_npz(feed_dicts: Any, dest: Any) -> None:
    """Saves a list of feed dicts (input name -> array), one per iteration, as an ``.npz``."""
    builder = _ArchiveBuilder()
    iterations = [[[name, builder.add(arr)] for name, arr in feed_dict.items()] for feed_dict in feed_dicts]
    save_npz({"format": "poly.inputs", "version": 1, "iterations": iterations}, builder.arrays, builder.dtypes, dest)


def load_feed_dicts_npz(src: Any) -> list[OrderedDict]:  # type: ignore[type-arg]
    """Loads the feed dicts of an ``.npz``: poly's layout, or a plain archive as one feed dict."""
    meta, arrays = load_npz(src)
    if meta is None:
        return [OrderedDict(arrays.items())]
    if meta.get("format") != "poly.inputs":
        raise DataFormatError(
            f"Could not load '{src}': it holds {_short(meta.get('format'))} data, not inputs (feed dicts)"
        )
    iterations = _entry(meta, "iterations", list, None, src, "the archive")
    return [_named_arrays(iteration, arrays, src, f"iteration {index}") for index, iteration in enumerate(iterations)]


def run_results_to_npz(run_results: Any, dest: Any) -> None:
    """Saves a ``RunResults`` as an ``.npz`` (see the module docstring)."""
    builder = _ArchiveBuilder()
    runners = []
    for runner_name, iteration_results in run_results.items():
        iterations = []
        for result in iteration_results:
            iterations.append({
                "runner_name": result.runner_name,
                "runtime": result.runtime,
                "outputs": [[name, builder.add(arr)] for name, arr in result.items()],
            })
        runners.append({"name": runner_name, "iterations": iterations})
    save_npz({"format": "poly.RunResults", "version": 1, "runners": runners}, builder.arrays, builder.dtypes, dest)


def decode_run_results(meta: Any, arrays: Any, src: Any) -> list[tuple[str, list[tuple[OrderedDict, float | None, str | None]]]]:  # type: ignore[type-arg]
    """
    The run results an archive read by ``load_npz`` holds, as plain data: ``(runner name,
    [(outputs, runtime, runner name of the iteration), ...])`` per runner, for ``RunResults`` to
    build its objects from.
    """
    if meta is None or meta.get("format") != "poly.RunResults":
        found = "a plain archive of arrays" if meta is None else f"{_short(meta.get('format'))} data"
        raise DataFormatError(f"Could not load '{src}': expected run results, found {found}")
    runners = []
    for index, runner in enumerate(_entry(meta, "runners", list, None, src, "the archive")):
        _expect(isinstance(runner, dict), src, f"runner {index} is {_short(runner)}, not an object")
        name = _entry(runner, "name", str, None, src, f"runner {index}")
        iterations = []
        for k, it in enumerate(_entry(runner, "iterations", list, None, src, f"runner {name!r}")):
            where = f"iteration {k} of runner {name!r}"
            _expect(isinstance(it, dict), src, f"{where} is {_short(it)}, not an object")
            outputs = _named_arrays(it.get("outputs"), arrays, src, f"the outputs of {where}")
            runtime = _entry(it, "runtime", (int, float, type(None)), None, src, where)
            iterations.append((outputs, runtime, _entry(it, "runner_name", (str, type(None)), None, src, where)))
        runners.append((name, iterations))
    return runners
