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

import io
import json
import os
import struct
import zipfile
from collections import OrderedDict

import numpy as np

from poly.core.exception import DataFormatError
from poly.core.fileio import atomic_write
from poly.core.optional_import import lazy_import

__all__ = [
    "META_KEY",
    "is_npz_file",
    "save_npz",
    "load_npz",
    "save_feed_dicts_npz",
    "load_feed_dicts_npz",
    "run_results_to_npz",
    "decode_run_results",
]

META_KEY = "__poly_meta__"
ml_dtypes = lazy_import("ml_dtypes", install="ml-dtypes")
_ZIP_MAGIC = b"PK\x03\x04"
_EMPTY_ZIP_MAGIC = b"PK\x05\x06"


def is_npz_file(path) -> bool:
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


def _restore_dtype(arr: np.ndarray, name: str | None, source) -> np.ndarray:
    if name is None:
        return arr
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
    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}
        self.dtypes: dict[str, str] = {}

    def add(self, arr) -> str:
        key = f"a{len(self.arrays)}"
        stored, dtype_name = _storable(np.asarray(arr))
        self.arrays[key] = stored
        if dtype_name is not None:
            self.dtypes[key] = dtype_name
        return key


def save_npz(meta: dict, arrays: dict[str, np.ndarray], dtypes: dict[str, str], dest) -> None:
    """Writes ``arrays`` and the JSON ``meta`` (plus dtype names) as an uncompressed ``.npz``."""
    payload = dict(arrays)
    payload[META_KEY] = np.array(json.dumps({**meta, "dtypes": dtypes}))
    if hasattr(dest, "write"):
        np.savez(dest, **payload)
        return
    with atomic_write(dest, "wb") as f:
        np.savez(f, **payload)


_FAST_READ_LIMIT = 64 << 20
"""Archives up to this size are read in one call and parsed here; bigger ones go through np.load."""
_HEADER_CACHE: dict[bytes, tuple] = {}
_HEADER_CACHE_LIMIT = 256


def _npy_header(buf: memoryview) -> tuple[tuple, bool, np.dtype, int]:
    """Shape, Fortran order, dtype and data offset of the .npy bytes in ``buf``; headers seen
    before (every sample of a dataset has the same) are not parsed again."""
    if bytes(buf[:6]) != b"\x93NUMPY":
        raise ValueError("not an .npy entry")
    major = buf[6]
    size_len = 2 if major == 1 else 4
    (hlen,) = struct.unpack_from("<H" if size_len == 2 else "<I", buf, 8)
    start = 8 + size_len
    header = bytes(buf[:start + hlen])
    parsed = _HEADER_CACHE.get(header)
    if parsed is None:
        fp = io.BytesIO(header)
        version = np.lib.format.read_magic(fp)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read(fp)
        if dtype.hasobject:
            raise ValueError("object arrays cannot be loaded without pickle")
        parsed = (shape, fortran, dtype, start + hlen)
        if len(_HEADER_CACHE) < _HEADER_CACHE_LIMIT:
            _HEADER_CACHE[header] = parsed
    return parsed


def _read_stored_npz(path) -> dict[str, np.ndarray] | None:
    """
    The arrays of an uncompressed ``.npz`` (what ``np.savez`` writes), read in one call and
    parsed without ``np.load``'s per-member file objects: the validation loader reads two such
    files per sample. None when the archive is not of that kind (compressed, large, a file
    object), so the caller falls back to ``np.load``. Arrays are writable views of one buffer.
    """
    if not isinstance(path, (str, os.PathLike)):
        return None
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > _FAST_READ_LIMIT:
            return None
        data = bytearray(size)
        if f.readinto(data) != size:
            return None
    view = memoryview(data)
    arrays = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            if info.compress_type != zipfile.ZIP_STORED or not info.filename.endswith(".npy"):
                return None
            name_len, extra_len = struct.unpack_from("<HH", data, info.header_offset + 26)
            start = info.header_offset + 30 + name_len + extra_len
            member = view[start:start + info.file_size]
            shape, fortran, dtype, offset = _npy_header(member)
            count = 1
            for dim in shape:
                count *= dim
            arr = np.frombuffer(member, dtype=dtype, count=count, offset=offset)
            arrays[info.filename[:-4]] = arr.reshape(shape, order="F" if fortran else "C")
    return arrays


def load_npz(src):
    """
    Reads an ``.npz`` with ``allow_pickle=False``.

    Returns:
        Tuple[Optional[dict], Dict[str, numpy.ndarray]]: The poly layout (None for a plain
        archive) and every array by key, with extension dtypes restored.
    """
    try:
        arrays = _read_stored_npz(src)
        if arrays is None:
            with np.load(src, allow_pickle=False) as archive:
                arrays = {key: archive[key] for key in archive.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError, struct.error) as err:
        if "pickle" in str(err).lower():
            raise DataFormatError(
                f"Could not load '{src}': refusing an object array or pickled payload "
                "(poly loads arrays with allow_pickle=False)"
            ) from None
        raise DataFormatError(f"Could not load '{src}': not a valid .npz archive ({err})") from None
    meta_arr = arrays.pop(META_KEY, None)
    if meta_arr is None:
        return None, arrays
    try:
        meta = json.loads(str(meta_arr.item()))
        dtypes = meta.get("dtypes", {})
    except (ValueError, AttributeError) as err:
        raise DataFormatError(f"Could not load '{src}': its {META_KEY} entry is not valid JSON ({err})") from None
    for key, name in dtypes.items():
        if key in arrays:
            arrays[key] = _restore_dtype(arrays[key], name, src)
    return meta, arrays


def _lookup(arrays: dict, key, src) -> np.ndarray:
    try:
        return arrays[key]
    except (KeyError, TypeError):
        raise DataFormatError(f"Could not load '{src}': its layout names a missing array {key!r}") from None


def save_feed_dicts_npz(feed_dicts, dest) -> None:
    """Saves a list of feed dicts (input name -> array), one per iteration, as an ``.npz``."""
    builder = _ArchiveBuilder()
    iterations = [[[name, builder.add(arr)] for name, arr in feed_dict.items()] for feed_dict in feed_dicts]
    save_npz({"format": "poly.inputs", "version": 1, "iterations": iterations}, builder.arrays, builder.dtypes, dest)


def load_feed_dicts_npz(src) -> list[OrderedDict]:
    """Loads the feed dicts of an ``.npz``: poly's layout, or a plain archive as one feed dict."""
    meta, arrays = load_npz(src)
    if meta is None:
        return [OrderedDict(arrays.items())]
    if meta.get("format") != "poly.inputs":
        raise DataFormatError(
            f"Could not load '{src}': it holds {meta.get('format')!r} data, not inputs (feed dicts)"
        )
    return [
        OrderedDict((name, _lookup(arrays, key, src)) for name, key in iteration)
        for iteration in meta.get("iterations", [])
    ]


def run_results_to_npz(run_results, dest) -> None:
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


def decode_run_results(meta, arrays, src) -> list[tuple[str, list[tuple[OrderedDict, float | None, str | None]]]]:
    """
    The run results an archive read by ``load_npz`` holds, as plain data: ``(runner name,
    [(outputs, runtime, runner name of the iteration), ...])`` per runner, for ``RunResults`` to
    build its objects from.
    """
    if meta is None or meta.get("format") != "poly.RunResults":
        found = "a plain archive of arrays" if meta is None else f"{meta.get('format')!r} data"
        raise DataFormatError(f"Could not load '{src}': expected run results, found {found}")
    runners = []
    for runner in meta.get("runners", []):
        iterations = []
        for it in runner.get("iterations", []):
            outputs = OrderedDict((name, _lookup(arrays, key, src)) for name, key in it.get("outputs", []))
            iterations.append((outputs, it.get("runtime"), it.get("runner_name")))
        runners.append((runner["name"], iterations))
    return runners
