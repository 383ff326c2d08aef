"""
Reading ``.npy`` data (a JSON array payload, an ``.npz`` member) without trusting its header.

A header may claim any shape: ``(10**12,)`` in a 100-byte file. NumPy's own reader allocates
the claimed array before it reads the data, so a corrupt or hostile header costs terabytes (or
an ``OverflowError``). Here the header is parsed first, the byte count it implies is computed
with Python integers and checked against the bytes actually present, and only then is an array
made, as a view of (or one copy of) those bytes. Object dtypes are refused: loading them would
unpickle.
"""

from __future__ import annotations

import io
import math
import re
import struct
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["NPY_MAGIC", "NpyHeader", "parse_npy_header", "read_npy_header", "check_data_size", "array_from_data",
           "array_from_npy", "array_from_zip_member", "MAX_DEFLATE_RATIO"]

NPY_MAGIC = b"\x93NUMPY"
_MAX_HEADER_LEN = 1 << 16
"""The longest header accepted; NumPy itself refuses headers over 10,000 bytes by default."""


@dataclass(frozen=True)
class NpyHeader:
    """What an ``.npy`` header says, with the sizes it implies."""

    shape: tuple  # type: ignore[type-arg]
    fortran_order: bool
    dtype: np.dtype
    data_offset: int
    """Where the array data starts (the length of magic, version and header)."""
    count: int
    """The number of elements (the product of ``shape``)."""

    @property
    def nbytes(self) -> int:
        """The bytes of data the header claims."""
        return self.count * self.dtype.itemsize


def _preamble(head: bytes) -> tuple[tuple[int, int], int]:
    # -> (version, header length), from the first 10 or 12 bytes
    if len(head) < 8 or head[:6] != NPY_MAGIC:
        raise ValueError("not .npy data (no .npy magic string)")
    version = (head[6], head[7])
    if version not in ((1, 0), (2, 0), (3, 0)):
        raise ValueError(f"unknown .npy format version {version[0]}.{version[1]}")
    size_len = 2 if version == (1, 0) else 4
    if len(head) < 8 + size_len:
        raise ValueError("the .npy header is truncated")
    (header_len,) = struct.unpack_from("<H" if size_len == 2 else "<I", head, 8)
    if header_len > _MAX_HEADER_LEN:
        raise ValueError(f"the .npy header claims {header_len} bytes; refusing headers over {_MAX_HEADER_LEN}")
    return version, 8 + size_len + header_len


# The header NumPy writes for a dtype named by a plain type string (no fields, no units), parsed by
# this pattern in a few microseconds; Python's literal_eval, which NumPy's reader runs, takes about
# 60 us a header (a validated sample reads two .npz files; a results file holds thousands of
# arrays). Any other header goes to NumPy's reader.
_CANONICAL_HEADER = re.compile(
    rb"\{'descr': '([<>|][biufcV]\d+)', 'fortran_order': (False|True), 'shape': \(((?:\d+, )*\d+,?|)\), \} *\n")
_DTYPES: dict[bytes, np.dtype] = {}


def _canonical_header(text: bytes) -> tuple[tuple[int, ...], bool, np.dtype] | None:
    """(shape, fortran_order, dtype) of a header text in NumPy's own layout, else None."""
    match = _CANONICAL_HEADER.fullmatch(text)
    if match is None:
        return None
    descr, fortran, dims = match.groups()
    dtype = _DTYPES.get(descr)
    if dtype is None:
        try:
            dtype = _DTYPES.setdefault(descr, np.dtype(descr.decode("ascii")))
        except TypeError:  # no such type ('<f3'): NumPy's reader says what is wrong
            return None
    return tuple(int(d) for d in dims.split(b",") if d.strip()), fortran == b"True", dtype


def parse_npy_header(buf: Any) -> NpyHeader:
    """
    Parses the ``.npy`` header at the start of ``buf`` (bytes-like); the data need not follow.

    Raises:
        ValueError: A one-line reason when the header is missing, truncated or corrupt, names an
                object dtype, or claims more elements than any machine addresses.
    """
    head = bytes(buf[:12])
    version, data_offset = _preamble(head)
    header = bytes(buf[:data_offset])
    if len(header) < data_offset:
        raise ValueError("the .npy header is truncated")
    if version == (3, 0):
        # 3.0 is 2.0 with a UTF-8 header (NumPy writes it only for non-Latin-1 field names).
        if not header.isascii():
            raise ValueError("the .npy header uses format 3.0 with non-ASCII text, which poly does not read")
        header = header[:6] + b"\x02\x00" + header[8:]
    canonical = _canonical_header(header[(10 if version == (1, 0) else 12):])
    if canonical is not None:
        shape, fortran_order, dtype = canonical
        return _checked(shape, fortran_order, dtype, data_offset)
    fp = io.BytesIO(header)
    try:
        np.lib.format.read_magic(fp)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        if b"\\" in header:  # a damaged header's escapes would print Python's invalid-escape warning
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                shape, fortran_order, dtype = read(fp, max_header_size=_MAX_HEADER_LEN)
        else:
            shape, fortran_order, dtype = read(fp, max_header_size=_MAX_HEADER_LEN)
    except Exception as err:  # ValueError, SyntaxError, tokenize errors, ... from a damaged header
        text = " ".join(str(err).split()) or type(err).__name__
        raise ValueError(f"the .npy header is corrupt ({text[:200]})") from None
    return _checked(tuple(shape), bool(fortran_order), dtype, data_offset)


def _checked(shape: tuple[int, ...], fortran_order: bool, dtype: np.dtype, data_offset: int) -> NpyHeader:
    """The header, once its dtype and the size it claims are found acceptable."""
    if dtype.hasobject:
        raise ValueError(
            "it holds an object array, which could run code when loaded (pickle); poly reads arrays "
            "as with allow_pickle=False and refuses it"
        )
    count = math.prod(shape)
    if count and dtype.itemsize == 0:
        raise ValueError(f"the .npy header names a zero-size dtype ({dtype}) for {count} elements")
    if count * max(dtype.itemsize, 1) >= 2**63:
        raise ValueError(f"the .npy header claims shape {shape} of {dtype}: more bytes than any machine addresses")
    return NpyHeader(shape, fortran_order, dtype, data_offset, count)


def read_npy_header(f: Any) -> NpyHeader:
    """
    Reads and parses the ``.npy`` header from a binary file object positioned at its start,
    leaving it positioned at the data (reads at most the header's length).

    Raises:
        ValueError: As ``parse_npy_header``.
    """
    head = f.read(10)
    if len(head) >= 8 and head[6:8] != b"\x01\x00":
        head += f.read(2)
    _, data_offset = _preamble(head)
    rest = f.read(data_offset - len(head))
    return parse_npy_header(head + rest)


def _describe(nbytes: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return f"{nbytes} {unit}" if unit == "bytes" else f"{nbytes:.3g} {unit}"
        nbytes /= 1024  # type: ignore[assignment]
    return ""


def check_data_size(header: NpyHeader, available: int) -> None:
    """
    Raises ``ValueError`` when fewer than ``header.nbytes`` bytes of data are ``available``.
    """
    if available < header.nbytes:
        raise ValueError(
            f"the .npy header claims shape {header.shape} of {header.dtype} ({_describe(header.nbytes)}) but "
            f"only {available} bytes of data follow; the data is truncated or the header is corrupt"
        )



def array_from_data(header: NpyHeader, data: Any) -> Any:
    """
    The array ``header`` describes, over ``data`` (bytes-like: the bytes after the header),
    after checking that they are enough (trailing bytes are ignored, as NumPy does). Writable
    ``data`` (``bytearray``) is viewed, not copied; read-only bytes are copied once, so the
    array is always writable.

    Raises:
        ValueError: When ``data`` is shorter than the header claims.
    """
    view = memoryview(data)
    check_data_size(header, view.nbytes)
    order = "F" if header.fortran_order else "C"
    if header.count == 0:
        return np.empty(header.shape, dtype=header.dtype, order=order)  # type: ignore[call-overload]
    arr = np.frombuffer(view, dtype=header.dtype, count=header.count)
    if header.dtype.kind == "U" and header.dtype.itemsize:
        # UCS-4 code units past U+10FFFF make NumPy fail (SystemError) when the text is read
        units = np.frombuffer(view, dtype=header.dtype.byteorder.replace("=", "") + "u4",
                              count=header.nbytes // 4)
        if units.size and int(units.max()) > 0x10FFFF:
            raise ValueError(f"its {header.dtype} text holds code points beyond Unicode; the data is corrupt")
    if view.readonly:
        arr = arr.copy()
    return arr.reshape(header.shape, order=order)  # type: ignore[call-overload]


def array_from_npy(buf: Any) -> np.ndarray:
    """
    The array of the ``.npy`` bytes ``buf`` (see ``array_from_data``).

    Raises:
        ValueError: A one-line reason when the header is corrupt or the data is short.
    """
    header = parse_npy_header(buf)
    return array_from_data(header, memoryview(buf)[header.data_offset:])  # type: ignore[no-any-return]


MAX_DEFLATE_RATIO = 1032
"""Deflate expands data at most this much: a zip member claiming more than its compressed
size times this is corrupt."""


def array_from_zip_member(archive: Any, info: Any, archive_size: int) -> np.ndarray:
    """
    The array of one ``.npy`` member of an open ``zipfile.ZipFile`` (an ``.npz``), read
    without trusting the sizes of the zip directory or of the ``.npy`` header: both are checked
    against what the archive (``archive_size`` bytes) can hold before the data is allocated.

    Raises:
        ValueError: A one-line reason (``zipfile``, ``zlib`` and I/O errors propagate).
    """
    if info.compress_size > archive_size or info.file_size > max(info.compress_size, 1) * MAX_DEFLATE_RATIO:
        raise ValueError(
            f"member '{info.filename}' claims {info.file_size} bytes ({info.compress_size} compressed) "
            f"in an archive of {archive_size} bytes; the zip directory is corrupt"
        )
    with archive.open(info) as member:
        header = read_npy_header(member)
        check_data_size(header, info.file_size - header.data_offset)
        buffer = bytearray(header.nbytes)
        if header.nbytes and member.readinto(buffer) != header.nbytes:
            raise ValueError(f"member '{info.filename}' is shorter than its .npy header claims")
    return array_from_data(header, buffer)  # type: ignore[no-any-return]
