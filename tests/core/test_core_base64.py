"""The native strict base64 decoder behind large JSON array payloads (``poly._native.b64decode``,
used by ``poly.core.json``): the bytes ``base64.b64decode(validate=True)`` gives for every payload
it takes, None for every payload it refuses, and through the JSON reader the same arrays and the
same errors as the standard library's decoder would give."""

from __future__ import annotations

import base64
import os

import numpy as np
import pytest

from poly import _native
from poly.core import DataFormatError
from poly.core.json import from_json, to_json


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 100, 3071, 3072, 3073, 1_000_001])
def test_every_valid_payload_decodes_to_its_bytes(size):
    raw = os.urandom(size)
    assert _native.b64decode(base64.b64encode(raw)) == raw
    assert _native.b64decode(bytearray(base64.b64encode(raw))) == raw
    assert _native.b64decode(base64.b64encode(raw).decode("ascii")) == raw  # a str, read in place
    assert isinstance(_native.b64decode(base64.b64encode(raw)), bytearray)  # (arrays view it, writable)


def test_every_byte_value_in_every_position_of_a_group():
    raw = bytes(range(256)) * 3 + bytes(range(255, -1, -1))
    for shift in range(3):
        data = raw[shift:]
        assert _native.b64decode(base64.b64encode(data)) == data


BODY = base64.b64encode(bytes(range(256)) * 12)  # (fixed: xdist's workers must collect the same test ids)


@pytest.mark.parametrize("bad", [
    BODY[:100] + b"*" + BODY[101:],
    BODY[:100] + b"=" + BODY[101:],
    BODY[:-4] + b"QU=D",
    BODY[:-4] + b"Q===",
    BODY[:-4] + b"====",
    BODY[:-1] + b"\n",
    BODY + b"A",
    BODY[:50] + b"-_" + BODY[52:],
    BODY[:-4] + b"QR==",
    BODY[:-4] + b"QUJ=",
    b"\xff" * 8,
], ids=["byte outside the alphabet", "padding in the middle", "padding inside the last group",
        "three padding characters", "four padding characters", "whitespace", "length not a multiple of 4",
        "URL-safe alphabet", "bits under two padding characters", "bits under one padding character",
        "bytes above 127"])
def test_what_it_does_not_take_is_left_to_the_standard_library(bad):
    assert _native.b64decode(bad) is None
    assert _native.b64decode(bad.decode("latin-1")) is None  # as a str (non-ASCII: refused whole)


def test_a_str_beyond_ascii_or_an_object_without_bytes_is_refused():
    assert _native.b64decode(BODY.decode("ascii")[:-4] + "QUJ\u00e9") is None  # a str of 2-byte characters
    assert _native.b64decode(BODY.decode("ascii") + "\U0001f600" * 4) is None
    with pytest.raises(TypeError, match="str or a bytes-like object"):
        _native.b64decode(12)
    with pytest.raises(TypeError, match="str or a bytes-like object"):
        _native.b64decode(np.zeros(4, np.int32))


@pytest.mark.parametrize("size", [3000, 3], ids=["native", "standard library"])
def test_json_arrays_decode_through_either_decoder(size):
    arr = np.arange(size, dtype=np.float32)
    text = to_json({"x": arr})
    assert np.array_equal(from_json(text)["x"], arr)
    encoded = text.split('"array": "')[1].split('"')[0]
    damaged = text.replace(encoded, encoded[:40] + "*" + encoded[41:])
    with pytest.raises(DataFormatError, match="not valid base64"):
        from_json(damaged)
