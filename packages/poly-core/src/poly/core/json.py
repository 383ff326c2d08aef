"""
JSON serialization in Polygraphy 0.53's file format.

Custom objects are written as JSON objects carrying a ``"polygraphy_class": "<TypeName>"`` key;
NumPy arrays as ``{"array": "<base64 of the .npy bytes>", "polygraphy_class": "ndarray"}``.
Files written here load in Polygraphy and vice versa.

Reading never unpickles and never trusts a payload's header: arrays are read by
``poly.core.files.npy_format`` (as with ``allow_pickle=False``, the claimed size checked against the
bytes present before anything is allocated), and a payload that is not ``.npy``/``.npz`` data,
holds an object array, or claims more data than it holds is refused with a ``DataFormatError``.
"""

from __future__ import annotations

import base64
import binascii
import contextvars
import importlib
import io
import json
import mmap
import os
import re
import sys
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Callable
from typing import IO, Any, TypeVar

import numpy as np

import poly.core.constants as constants
from poly.core.files.npy_format import array_from_npy, array_from_zip_member
from poly.core.files.read_write import StrPath, load_file, mapped_file, save_file
from poly.core.logging.exception import DataFormatError, PolyException
from poly.core.logging.logger import G_LOGGER, LogMode
from poly.core.optional_import import lazy_import

__all__ = ["Encoder", "Decoder", "to_json", "from_json", "save_json", "load_json", "add_json_methods"]

_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"
_DTYPE_HINT_KEY = "poly_dtype"
_LEGACY_PREFIX = "__polygraphy_encoded_"

ml_dtypes = lazy_import("ml_dtypes", purpose="Reading bfloat16 and float8 arrays")
"""ml_dtypes, for the NumPy dtypes of the arrays whose ``poly_dtype`` NumPy lacks."""

# Packages that define serializable types (RunResults in poly-compare, ...) declare them as
# entry points of this group, name = the type name in the file, value = the module whose import
# registers the decoder. Looked up only for a type nobody registered yet, so loading results
# works without importing the defining package first, and poly-core names no other package.
ENTRY_POINT_GROUP = "poly.json_types"

_T = TypeVar("_T")
_C = TypeVar("_C", bound=type)


def _provider_of(type_name: str) -> str | None:
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == type_name:
            return ep.value
    return None


# The name of the file being decoded, for error messages raised deep inside decoders.
_SOURCE = contextvars.ContextVar("poly_json_source", default="<JSON string>")

# While save_json encodes, the base64 payloads of arrays and tensors (bytes), which the encoded
# text holds as placeholders: spliced in as bytes afterwards, they are never escaped character
# by character as strings (base64 needs no escaping) nor encoded again on the way to the file.
_PAYLOADS: contextvars.ContextVar[list[bytes] | None] = contextvars.ContextVar("poly_json_payloads", default=None)
_PLACEHOLDER = f"poly-payload-{uuid.uuid4().hex}-"  # (a string no real data holds)
_PLACEHOLDER_FIELD = re.compile(rb'"' + re.escape(_PLACEHOLDER.encode()) + rb'(\d+)"')


def _base64_field(data: bytes) -> str:
    """The base64 text of ``data`` for a JSON field, or its placeholder while save_json encodes."""
    encoded = base64.b64encode(data)
    payloads = _PAYLOADS.get()
    if payloads is None:
        return encoded.decode()
    payloads.append(encoded)
    return f"{_PLACEHOLDER}{len(payloads) - 1}"


def _json_bytes(obj: object) -> bytes:
    """``to_json(obj)`` as bytes (ASCII), its payloads spliced in as bytes."""
    payloads: list[bytes] = []
    token = _PAYLOADS.set(payloads)
    try:
        text = to_json(obj).encode()
    finally:
        _PAYLOADS.reset(token)
    if not payloads:
        return text
    pieces = _PLACEHOLDER_FIELD.split(text)  # text, payload index, text, ..., text
    for i in range(1, len(pieces), 2):
        pieces[i] = b'"' + payloads[int(pieces[i])] + b'"'
    return b"".join(pieces)


# While from_json decodes a large text: the text's bytes and the spans of the long array payloads
# cut out of it, references in their place. The JSON parser then neither decodes them to str nor
# scans them character by character (about 1 s of a 472 MB results file's load), and the base64
# decoder reads them where they lie. A payload is cut only where its key is a key (its quote not
# escaped) and its text holds no escape (base64 needs none); any error sends the whole text
# through the parser uncut, so that errors read as they always did.
_CUT: contextvars.ContextVar[tuple[Any, list[tuple[int, int]]] | None] = contextvars.ContextVar(
    "poly_json_cut", default=None)
_CUT_REFERENCE = f"poly-cut-{uuid.uuid4().hex}-"  # (a string no real data holds)
_CUT_KEY = b'"array": "'
_CUT_MIN_PAYLOAD = 1 << 16  # shorter payloads stay in the text
_CUT_MIN_TEXT = 1 << 22  # smaller texts are parsed whole


def _cut_payloads(src: bytes | bytearray | mmap.mmap) -> tuple[bytes, list[tuple[int, int]]] | None:
    """``src`` with its long array payloads replaced by references, and their spans in ``src``;
    None when none was cut."""
    pieces: list[bytes] = []
    spans: list[tuple[int, int]] = []
    pos = last = 0
    while True:
        key = src.find(_CUT_KEY, pos)
        if key < 0:
            break
        start = key + len(_CUT_KEY)
        end = src.find(b'"', start)
        if end < 0:
            break
        pos = end + 1
        if end - start < _CUT_MIN_PAYLOAD or (key and src[key - 1] == 0x5C) or src.find(b"\\", start, end) >= 0:
            continue
        pieces += [bytes(src[last:start]), f"{_CUT_REFERENCE}{len(spans)}".encode()]
        spans.append((start, end))
        last = end
    if not spans:
        return None
    pieces.append(bytes(src[last:]))
    return b"".join(pieces), spans


def _cut_span(value: object) -> memoryview | None:
    """The bytes of the payload ``value`` refers to, if it is a reference to a cut payload."""
    cut = _CUT.get()
    if cut is None or not isinstance(value, str) or not value.startswith(_CUT_REFERENCE):
        return None
    src, spans = cut
    start, end = spans[int(value[len(_CUT_REFERENCE):])]
    return memoryview(src)[start:end]


def _is_ndarray_entry(dct: dict[str, Any]) -> bool:
    return dct.get(constants.TYPE_MARKER) == "ndarray" or (
        dct.get(_LEGACY_PREFIX + "ndarray") == constants.LEGACY_TYPE_MARKER)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _type_id(typ: type) -> tuple[str | None, str]:
    return (getattr(typ, "__module__", None), getattr(typ, "__qualname__", repr(typ)))


def _format_error(detail: object) -> DataFormatError:
    return DataFormatError(f"Could not load '{_SOURCE.get()}': {_one_line(detail)}")


class Encoder(json.JSONEncoder):
    """
    JSON encoder that knows the types registered with ``Encoder.register``.

    NumPy scalars are written as plain JSON numbers/booleans.
    """

    polygraphy_registered: dict[type, Callable[[Any], dict[str, Any]]] = {}
    """type -> encoding function."""

    @classmethod
    def register(cls, typ: type[_T], name: str | None = None) -> Callable[[Callable[[_T], dict[str, Any]]], Callable[[_T], dict[str, Any]]]:
        """
        Decorator that registers an encoding function for ``typ``.

        The function takes an instance and returns a dict; the type marker
        (``"polygraphy_class": name``) is appended to it.

        Args:
            typ (type): The type to encode.
            name (str): The type name written to the file. Defaults to ``typ.__name__``, which is
                    what Polygraphy writes, so register classes under Polygraphy's class names.

        Example:
        ::

            @Encoder.register(Dummy)
            def encode(dummy):
                return {"x": dummy.x}
        """
        type_name = name or typ.__name__

        def register_impl(func: Callable[[_T], dict[str, Any]]) -> Callable[[_T], dict[str, Any]]:
            def wrapped(obj: _T) -> dict[str, Any]:
                dct = func(obj)
                dct[constants.TYPE_MARKER] = type_name
                return dct

            setattr(wrapped, "__wrapped__", func)  # noqa: B010 - a function attribute mypy does not know
            cls.polygraphy_registered[typ] = wrapped
            return wrapped

        return register_impl

    def default(self, o: Any) -> Any:
        """Encodes registered types, then NumPy scalars; anything else is a ``TypeError``."""
        registered = self.polygraphy_registered
        func = registered.get(type(o))
        if func is None:
            func = next((registered[base] for base in type(o).__mro__[1:] if base in registered), None)
        if func is not None:
            return func(o)
        if isinstance(o, np.generic):
            return o.item()
        if _is_torch_tensor(o):
            return _encode_torch_tensor(o)
        return super().default(o)


class Decoder:
    """
    ``object_pairs_hook`` for ``json.loads`` that rebuilds the types registered with
    ``Decoder.register``; other JSON objects become ``OrderedDict`` s (as in Polygraphy).
    """

    polygraphy_registered: dict[str, Callable[[dict[str, Any]], Any]] = {}
    """type name (current, legacy and aliases) -> decoding function."""

    _owners: dict[str, tuple[str | None, str]] = {}

    @classmethod
    def register(cls, typ: type[_T], alias: str | None = None, name: str | None = None
                 ) -> Callable[[Callable[[dict[str, Any]], _T]], Callable[[dict[str, Any]], _T]]:
        """
        Decorator that registers a decoding function for ``typ``.

        The function takes the dict that was written (type marker removed) and returns an
        instance. Registering the same class again (a reloaded module) replaces the function;
        a different class under a taken name is an error.

        Args:
            typ (type): The type to decode.
            alias (str): Another name to accept, e.g. a former class name.
            name (str): The type name in files. Defaults to ``typ.__name__``.

        Example:
        ::

            @Decoder.register(Dummy)
            def decode(dct):
                return Dummy(x=dct["x"])
        """
        type_name = name or typ.__name__

        def register_impl(func: Callable[[dict[str, Any]], _T]) -> Callable[[dict[str, Any]], _T]:
            def wrapped(dct: dict[str, Any]) -> _T:
                dct.pop(constants.TYPE_MARKER, None)
                dct.pop(_LEGACY_PREFIX + type_name, None)
                return func(dct)

            setattr(wrapped, "__wrapped__", func)  # noqa: B010 - a function attribute mypy does not know
            keys = [type_name, _LEGACY_PREFIX + type_name] + ([alias] if alias else [])
            for key in keys:
                owner = cls._owners.get(key)
                if owner is not None and owner != _type_id(typ):
                    raise PolyException(
                        f"Duplicate JSON decoder for type name {key!r}: already registered for "
                        f"{owner[0]}.{owner[1]}, now requested for {_type_id(typ)[0]}.{_type_id(typ)[1]}"
                    )
            for key in keys:
                cls._owners[key] = _type_id(typ)
                cls.polygraphy_registered[key] = wrapped
            return wrapped

        return register_impl

    def __call__(self, pairs: list[tuple[str, Any]]) -> Any:
        dct = OrderedDict(pairs)
        cut = _cut_span(dct.get("array"))
        if cut is not None and not _is_ndarray_entry(dct):  # a cut payload of no array: its text again
            dct["array"] = bytes(cut).decode("utf-8")

        for key, value in dct.items():
            if (
                isinstance(value, str)
                and value == constants.LEGACY_TYPE_MARKER
                and key.startswith(_LEGACY_PREFIX)
            ):
                return self._decode(key[len(_LEGACY_PREFIX) :], key, dct)

        type_name = dct.get(constants.TYPE_MARKER)
        if type_name is None:
            return dct
        if not isinstance(type_name, str):
            raise _format_error(f"invalid type marker {type_name!r}")
        return self._decode(type_name, type_name, dct)

    def _decode(self, type_name: str, key: str, dct: dict[str, Any]) -> Any:
        func = self.polygraphy_registered.get(key)
        provider = None
        if func is None:
            provider = _provider_of(type_name)
            if provider is not None:
                try:
                    importlib.import_module(provider)
                except ImportError:
                    pass
                func = self.polygraphy_registered.get(key)
        if func is None:
            hint = f"; the package providing {provider} must be importable to read it" if provider else ""
            raise _format_error(f"unknown serialized type {type_name!r}{hint}")
        try:
            return func(dct)
        except DataFormatError:
            raise
        except KeyError as err:
            raise _format_error(f"invalid serialized {type_name}: it has no {err} entry") from None
        except (ValueError, TypeError) as err:
            raise _format_error(f"invalid serialized {type_name}: {err}") from None
        except Exception as err:
            raise _format_error(f"invalid serialized {type_name}: {type(err).__name__}: {err}") from None


# -- NumPy arrays ------------------------------------------------------------------------------


def _dtype_hint(dtype: Any) -> Any:
    # .npy headers describe only NumPy's own types; an extension type such as ml_dtypes'
    # bfloat16 is written as raw bytes ('<V2'), so its name travels in an extra key that
    # Polygraphy ignores.
    if dtype.names is not None or dtype.subdtype is not None:
        return None
    descr = np.lib.format.dtype_to_descr(dtype)
    try:
        readable = np.lib.format.descr_to_dtype(descr)
    except Exception:
        return dtype.name, False
    if readable != dtype:
        return dtype.name, True
    return None


@Encoder.register(np.ndarray)
def _encode_ndarray(array: Any) -> dict[Any, Any]:
    extra = {}
    hint = _dtype_hint(array.dtype)
    if hint is not None:
        name, header_readable = hint
        extra[_DTYPE_HINT_KEY] = name
        if not header_readable:
            array = array.view(np.dtype(f"V{array.dtype.itemsize}"))
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return {"array": _base64_field(buffer.getvalue()), **extra}


_NATIVE_BASE64_MIN = 1 << 12  # payloads this long are decoded by poly._native (shorter: the call costs more)


def _b64decode(payload: str) -> bytes | bytearray:
    """``base64.b64decode(payload, validate=True)`` (a bytearray where decoded natively: an array read
    from it is a view, not a copy): large payloads decoded natively (CPython's
    decoder takes a byte at a time: 2.1 of the 11 s a 472 MB results file took to load), anything
    the native decoder does not take by the standard library, which decides and names the error."""
    if len(payload) >= _NATIVE_BASE64_MIN:
        from poly import _native

        decoded = _native.b64decode(payload)  # (an ASCII str is read in place, not encoded first)
        if decoded is not None:
            return decoded
    return base64.b64decode(payload.encode("ascii"), validate=True)


def _payload_bytes(payload: Any) -> Any:
    cut = _cut_span(payload)
    if cut is not None:
        from poly import _native

        decoded = _native.b64decode(cut)
        if decoded is None:  # the uncut text's parse decides what is wrong
            raise _format_error("an array payload is not valid base64 (truncated or corrupt file?)")
        return decoded
    try:
        return _b64decode(payload)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        pass
    # Files from old Polygraphy versions held the raw .npy bytes as a latin-1 string.
    try:
        legacy = payload.encode("latin-1")
    except UnicodeEncodeError:
        legacy = b""
    if legacy.startswith(_NPY_MAGIC):
        return legacy
    raise _format_error("an array payload is not valid base64 (truncated or corrupt file?)")


def _load_array(data: Any) -> Any:
    if data.startswith(_NPY_MAGIC):
        try:
            return array_from_npy(data)
        except ValueError as err:
            raise _format_error(f"an array payload is unreadable: {err}") from None

    if data.startswith(_ZIP_MAGIC):
        # Polygraphy once wrote arrays as single-entry .npz archives. zipfile imported here: with
        # pathlib and urllib it is ~40 ms of start-up (~100 ms without compiled bytecode) for a rare file
        import zipfile

        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                members = [info for info in archive.infolist() if info.filename.endswith(".npy")]
                if not members:
                    raise _format_error("an array payload is an .npz archive without arrays")
                return array_from_zip_member(archive, members[0], len(data))
        except DataFormatError:
            raise
        except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError,
                RuntimeError) as err:
            raise _format_error(f"an .npz array payload is corrupt ({err})") from None

    raise _format_error(
        "an array payload is not .npy data; refusing it (pickled data and object arrays are never loaded)"
    )


def _dtype_from_name(name: Any) -> Any:
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_]+", name):
        raise _format_error(f"invalid {_DTYPE_HINT_KEY} value {name!r}")
    try:
        return np.dtype(name)
    except TypeError:
        pass
    if not ml_dtypes.is_available():
        return None
    typ = getattr(ml_dtypes, name, None)
    try:
        return np.dtype(typ) if isinstance(typ, type) else None
    except TypeError:
        return None


def _apply_dtype_hint(array: Any, name: Any) -> Any:
    if array.dtype.kind != "V" or array.dtype.names is not None:
        return array
    dtype = _dtype_from_name(name)
    if dtype is None:
        G_LOGGER.warning(
            f"'{_SOURCE.get()}' holds {name} arrays, which need ml_dtypes (pip install ml-dtypes); "
            f"loading them as raw bytes ({array.dtype})",
            mode=LogMode.ONCE,
        )
        return array
    if dtype.hasobject or dtype.itemsize != array.dtype.itemsize:
        raise _format_error(f"{_DTYPE_HINT_KEY} {name!r} does not fit an array of {array.dtype}")
    return array.view(dtype)


@Decoder.register(np.ndarray)
def _decode_ndarray(dct: Any) -> Any:
    payload = dct.get("array")
    if not isinstance(payload, str):
        raise _format_error("an ndarray entry has no string 'array' payload")
    array = _load_array(_payload_bytes(payload))
    hint = dct.get(_DTYPE_HINT_KEY)
    if hint is not None:
        array = _apply_dtype_hint(array, hint)
    return array


# -- PyTorch tensors ---------------------------------------------------------------------------
# Written as Polygraphy writes them: torch.save's bytes in base64 under "tensor", type "Tensor".
# Read back with torch.load(weights_only=True), which rebuilds tensors without running code.

torch = lazy_import("torch", purpose="Reading PyTorch tensors saved in JSON")


def _is_torch_tensor(obj: Any) -> bool:
    return any(cls.__module__.startswith("torch") and cls.__name__ == "Tensor" for cls in type(obj).__mro__)


def _encode_torch_tensor(tensor: Any) -> dict[Any, Any]:
    buffer = io.BytesIO()
    sys.modules[type(tensor).__module__.split(".")[0]].save(tensor, buffer)  # the tensor's own torch
    return {"tensor": _base64_field(buffer.getvalue()), constants.TYPE_MARKER: "Tensor"}


class _TorchTensorType:
    """Stands for ``torch.Tensor`` in the decoder table, so that registering needs no PyTorch."""


@Decoder.register(_TorchTensorType, name="Tensor")
def _decode_torch_tensor(dct: Any) -> Any:
    payload = dct.get("tensor")
    if not isinstance(payload, str):
        raise _format_error("a Tensor entry has no string 'tensor' payload")
    try:
        data = _b64decode(payload)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise _format_error("a tensor payload is not valid base64 (truncated or corrupt file?)") from None
    return torch.load().load(io.BytesIO(data), weights_only=True)  # LazyModule.load() gives the module


# -- public functions --------------------------------------------------------------------------


def to_json(obj: object) -> str:
    """
    Encodes ``obj`` as JSON text (4-space indentation, as Polygraphy writes it).

    Args:
        obj: Lists, dicts, scalars, NumPy arrays and registered types, nested freely.

    Returns:
        str: The JSON text.
    """
    return json.dumps(obj, cls=Encoder, indent=constants.TAB)


def from_json(src: str | bytes | bytearray | mmap.mmap, source: str | None = None) -> Any:
    """
    Decodes JSON text, rebuilding NumPy arrays and registered types.

    Args:
        src (Union[str, bytes, bytearray, mmap.mmap]): The JSON text, or its UTF-8 bytes (a
            mapped file's among them: nothing decoded refers to them once this returns).
        source (str): Where the text came from, for error messages.

    Returns:
        object: The decoded object.

    Raises:
        DataFormatError: If the text is not valid JSON or holds a payload poly refuses.
    """
    token = _SOURCE.set(source if source is not None else "<JSON string>")
    try:
        if isinstance(src, (bytes, bytearray, mmap.mmap)):
            cut = _cut_payloads(src) if len(src) >= _CUT_MIN_TEXT else None
            if cut is not None:
                cut_token = _CUT.set((src, cut[1]))
                try:
                    return json.loads(cut[0].decode("utf-8"), object_pairs_hook=Decoder())
                except (DataFormatError, ValueError, RecursionError):
                    pass  # (JSONDecodeError and UnicodeDecodeError are ValueErrors) parsed uncut below
                finally:
                    _CUT.reset(cut_token)
            try:
                src = (src[:] if isinstance(src, mmap.mmap) else src).decode("utf-8")
            except UnicodeDecodeError as err:
                raise _format_error(f"not UTF-8 text ({err})") from None
        if not src.strip():
            raise _format_error("the file is empty")
        try:
            return json.loads(src, object_pairs_hook=Decoder())
        except json.JSONDecodeError as err:
            raise _format_error(
                f"malformed JSON: {err.msg} at line {err.lineno}, column {err.colno}"
            ) from None
        except RecursionError:
            raise _format_error("malformed JSON: nested too deeply") from None
    finally:
        _SOURCE.reset(token)


def _describe_source(src: StrPath | IO[Any]) -> str:
    if isinstance(src, (str, os.PathLike)):
        return os.fspath(src)
    return getattr(src, "name", None) or "<file object>"


def save_json(obj: object, dest: StrPath | IO[Any], description: str | None = None, durable: bool = True) -> None:
    """
    Encodes ``obj`` as JSON and writes it to a path (atomically) or a file-like object.

    Args:
        obj: The object.
        dest (Union[str, os.PathLike, file-like]): Where to write.
        description (str): What is being saved; when given, an info message is logged.
        durable (bool): For paths: whether the write is flushed to disk (see ``atomic_write``).
    """
    if isinstance(dest, (str, os.PathLike)):
        save_file(_json_bytes(obj), dest, mode="wb", description=description, durable=durable)
    else:  # (a file object may be open in text mode)
        save_file(to_json(obj), dest, description=description, durable=durable)


def load_json(src: StrPath | IO[Any], description: str | None = None) -> Any:
    """
    Reads and decodes a JSON file.

    Args:
        src (Union[str, os.PathLike, file-like]): Where to read.
        description (str): What is being loaded; when given, an info message is logged.

    Returns:
        object: The decoded object.

    Raises:
        DataFormatError: If the file is not valid JSON or holds a payload poly refuses.
        OSError: If the file cannot be read.
    """
    if isinstance(src, (str, os.PathLike)) and _is_large_file(src):
        with mapped_file(src, description=description) as data:  # (no copy of the text into memory)
            return from_json(data, source=_describe_source(src))
    return from_json(load_file(src, mode="rb", description=description), source=_describe_source(src))


def _is_large_file(path: StrPath) -> bool:
    """Whether the file at ``path`` is large enough for its long payloads to be cut (``from_json``)."""
    try:
        return os.stat(path).st_size >= _CUT_MIN_TEXT
    except OSError:  # (load_file raises the error a reader expects)
        return False


def add_json_methods(description: str | None = None) -> Callable[[_C], _C]:
    """
    Class decorator adding ``to_json()``, ``from_json(src)``, ``save(dest)`` and ``load(src)``.

    The class must have an encoder and a decoder registered. ``from_json`` and ``load`` raise
    ``DataFormatError`` (a ``PolyException``) when the JSON decodes to another type.

    Args:
        description (str): What instances are, for log messages (e.g. ``"inference results"``).
    """

    def add_json_methods_impl(cls: _C) -> _C:
        def check_decoded(obj: object, source: str = "Provided JSON") -> object:
            if not isinstance(obj, cls):
                raise DataFormatError(
                    f"{source} cannot be decoded into a {cls.__name__}. "
                    f"Note: JSON was decoded into a {type(obj).__name__}"
                )
            return obj

        def _to_json(self: object) -> str:
            """Returns this instance encoded as JSON text."""
            return to_json(self)

        def _from_json(src: str | bytes | bytearray) -> object:
            return check_decoded(from_json(src))

        _from_json.__doc__ = f"Decodes JSON text into a {cls.__name__}."

        def _save(self: object, dest: StrPath | IO[Any]) -> None:
            """Saves this instance as JSON to a path (atomically) or file-like object."""
            save_json(self, dest, description=description)

        def _load(src: StrPath | IO[Any]) -> object:
            source = f"'{os.fspath(src)}'" if isinstance(src, (str, os.PathLike)) else "Provided JSON"
            return check_decoded(load_json(src, description=description), source)

        _load.__doc__ = f"Loads a {cls.__name__} from a JSON path or file-like object."

        # setattr: the methods are added to an arbitrary class, which mypy cannot follow
        setattr(cls, "to_json", _to_json)  # noqa: B010
        setattr(cls, "from_json", staticmethod(_from_json))  # noqa: B010
        setattr(cls, "save", _save)  # noqa: B010
        setattr(cls, "load", staticmethod(_load))  # noqa: B010
        return cls

    return add_json_methods_impl
