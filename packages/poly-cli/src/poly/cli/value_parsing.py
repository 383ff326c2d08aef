"""Parsing of Polygraphy's value syntax: `name:[1,3,224,224]` shapes, `name:[0,1]` value
ranges, `name:value` per-output numbers, `name:shape:dtype` tensor metadata and `mark all`
output lists. Errors are ``click.BadParameter`` naming the flag and the offending value."""

from __future__ import annotations

import ast
from typing import Any

import click


def _fail(flag: str, value: str, why: str) -> Any:
    raise click.BadParameter(f"{value!r}: {why}", param_hint=f"'{flag}'")


def _split_name(flag: str, arg: str) -> tuple[str, str]:
    """Splits `name:rest` at the last colon before a bracket (names may contain colons)."""
    bracket = arg.find("[")
    head = arg if bracket < 0 else arg[:bracket]
    name, sep, rest = head.rpartition(":")
    if not sep:
        _fail(flag, arg, "expected NAME:VALUE")
    return name, rest + ("" if bracket < 0 else arg[bracket:])


def split_name_value(flag: str, arg: str) -> tuple[str, str]:
    """`name:value` (or `name:[a,b]`) -> ("name", "value"); a missing name or value is an error."""
    name, value = _split_name(flag, arg)
    if not name or not value:
        _fail(flag, arg, "expected NAME:VALUE")
    return name, value


_SIZE_SUFFIXES = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_num_bytes(flag: str, arg: str, text: str) -> int:  # type: ignore[return]
    """`16M` -> 16777216, `1e9` -> 1000000000, `-1` -> -1: a number of bytes, with an optional
    K, M, G or T suffix (KiB, MiB...)."""
    upper = text.strip().upper().removesuffix("B")
    scale = _SIZE_SUFFIXES.get(upper[-1:], 1)
    try:
        return int(float(upper[:-1] if upper[-1:] in _SIZE_SUFFIXES else upper) * scale)
    except (ValueError, OverflowError):
        _fail(flag, arg, f"{text!r} is not a number of bytes (e.g. 16000000, 16e6 or 16M)")


def parse_dims(flag: str, arg: str, text: str) -> list:
    """`[1,3,'N',224]` -> [1, 3, 'N', 224]; names stand for dynamic dimensions."""
    text = text.strip()
    if not (text.startswith("[") and text.endswith("]")):
        _fail(flag, arg, "a shape must be written in brackets, e.g. [1,3,224,224]")
    dims = []
    for part in filter(None, (p.strip() for p in text[1:-1].split(","))):
        try:
            dims.append(int(part))
        except ValueError:
            if not part.replace("_", "").replace("'", "").replace('"', "").isalnum():
                _fail(flag, arg, f"bad dimension {part!r}")
            dims.append(part.strip("'\""))  # type: ignore[arg-type]
    return dims


def parse_shapes(flag: str, args: Any) -> dict[str, list]:
    """`x:[1,3] y:[2]` -> {"x": [1, 3], "y": [2]}."""
    shapes = {}
    for arg in args or ():
        name, rest = _split_name(flag, arg)
        shapes[name] = parse_dims(flag, arg, rest)
    return shapes


def _number(flag: str, arg: str, text: str) -> Any:
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        if text.strip().lower() in ("inf", "-inf", "+inf", "nan"):
            return float(text)
        _fail(flag, arg, f"{text!r} is not a number")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(flag, arg, f"{text!r} is not a number")
    return value


def number_within(low: float | None, high: float | None = None) -> Any:
    """A ``parse_per_output`` converter of numbers in [``low``, ``high``] (None: unbounded), a value
    outside (or NaN) a usage error naming the flag and the range."""
    def convert_for(flag: str) -> Any:
        def convert(arg: str, text: str) -> Any:
            value = _number(flag, arg, text)
            if not (low is None or value >= low) or not (high is None or value <= high):
                span = (f"at least {low:g}" if high is None else f"between {low:g} and {high:g}")
                _fail(flag, arg, f"{text.strip()} is out of range: expected a value {span}")
            return value
        return convert
    return convert_for


def parse_ranges(flag: str, args: Any) -> dict[str, tuple] | None:
    """`[0,1] x:[-1,1]` -> {"": (0, 1), "x": (-1, 1)}."""
    if not args:
        return None
    ranges = {}
    for arg in args:
        name, text = ("", arg) if arg.startswith("[") else _split_name(flag, arg)
        text = text.strip()
        if not (text.startswith("[") and text.endswith("]")):
            _fail(flag, arg, "a range must be written [MIN,MAX]")
        parts = [p for p in text[1:-1].split(",")]
        if len(parts) != 2:
            _fail(flag, arg, "a range takes exactly two values, [MIN,MAX]")
        low, high = (_number(flag, arg, p) for p in parts)
        if low > high:
            _fail(flag, arg, "MIN is larger than MAX")
        ranges[name] = (low, high)
    return ranges


def cast_literal(text: str) -> Any:
    """A command-line value as an int, a float, a string or a list of those: `[0,1]` -> [0, 1],
    `1.0` -> 1.0 (a decimal point makes a float), `'53'` -> "53" (quotes make a string)."""
    text = text.strip()
    if text.strip("[]") != text:
        return [cast_literal(part) for part in text.strip("[]").split(",")]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip("\"'")


def parse_attrs(flag: str, args: Any) -> dict:
    """`axis=1 perm=[0,2,1] mode='constant'` -> {"axis": 1, "perm": [0, 2, 1], "mode": "constant"}."""
    attrs = {}
    for arg in args or ():
        name, sep, value = arg.rpartition("=")
        if not sep or not name:
            _fail(flag, arg, "expected NAME=VALUE")
        attrs[name] = cast_literal(value)
    return attrs


def parse_byte_count(flag: str, text: str | None) -> int | None:
    """A non-negative ``parse_num_bytes`` value given as the whole flag value; None stays None."""
    if text is None:
        return None
    value = parse_num_bytes(flag, text, text)
    if value < 0:
        _fail(flag, text, "a number of bytes cannot be negative")
    return value


def parse_per_output(flag: str, args: Any, convert: Any = None) -> Any:
    """`1e-3 y:1e-2` -> {"": 1e-3, "y": 1e-2}; a lone default value stays a plain value."""
    if not args:
        return None
    convert = convert or (lambda arg, text: _number(flag, arg, text))
    values = {}
    for arg in args:
        name, sep, text = arg.rpartition(":")
        values[name if sep else ""] = convert(arg, text)
    if list(values) == [""]:
        return values[""]
    return values


def parse_meta(flag: str, args: Any, with_shape: bool = True) -> list[tuple]:
    """`name:shape:dtype` (or `name:dtype` for outputs) with `auto` for unknown parts."""
    from poly.core import DataType

    metas = []
    for arg in args or ():
        dtype, shape = None, None
        bracket = arg.find("[")
        if with_shape and bracket >= 0:
            close = arg.rfind("]")
            name = arg[:bracket].rstrip(":")
            shape = parse_dims(flag, arg, arg[bracket : close + 1])
            tail = arg[close + 1 :].lstrip(":")
        else:
            parts = arg.split(":")
            name, rest = parts[0], parts[1:]
            if with_shape and rest:
                if rest[0] != "auto":
                    _fail(flag, arg, "expected NAME:SHAPE:DTYPE with SHAPE like [1,3] or auto")
                rest = rest[1:]
            tail = ":".join(rest)
        if tail and tail != "auto":
            import numpy as np

            try:
                dtype = DataType.from_dtype(np.dtype(tail))
            except Exception:
                _fail(flag, arg, f"unknown data type {tail!r}")
        if not name:
            _fail(flag, arg, "missing tensor name")
        metas.append((name, dtype, shape))
    return metas


MARK_ALL_WORDS = ("mark", "all")


def parse_outputs(values: Any) -> Any:
    """`mark all` -> ``poly.core.MARK_ALL``; names otherwise (a list); nothing -> None."""
    from poly.core import MARK_ALL

    values = list(values or ())
    if not values:
        return None
    if values == list(MARK_ALL_WORDS) or values == [MARK_ALL]:
        return MARK_ALL
    return values
