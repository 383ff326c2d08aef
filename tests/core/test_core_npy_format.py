"""poly.core.files.npy_format: .npy bytes read like np.load reads them, except that a header is never
trusted: whatever the damage, the result is the array NumPy wrote or a one-line ValueError, and
nothing bigger than the bytes present is allocated."""

from __future__ import annotations

import io
import warnings
import zipfile

import numpy as np
import pytest
from fixtures import corruption
from fixtures.fuzz_profiles import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from poly.core.files.npy_format import (
    array_from_npy,
    array_from_zip_member,
    parse_npy_header,
    read_npy_header,
)

DTYPES = st.sampled_from(["<f4", ">f8", "<i2", "|u1", "|b1", "<c8", "<U3", "|S2", "<m8[s]", "<M8[D]"])
arrays = DTYPES.flatmap(lambda dt: hnp.arrays(np.dtype(dt), hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)))


def _npy(arr, fortran=False):
    buf = io.BytesIO()
    np.save(buf, np.asfortranarray(arr) if fortran else arr, allow_pickle=False)
    return buf.getvalue()


@given(arr=arrays, fortran=st.booleans())
@fuzz_settings(150)
def test_reads_what_numpy_wrote(arr, fortran):
    data = _npy(arr, fortran)
    for buf in (data, bytearray(data)):
        out = array_from_npy(buf)
        expected = np.load(io.BytesIO(data), allow_pickle=False)
        assert out.dtype == expected.dtype and out.shape == expected.shape and out.flags.writeable
        np.testing.assert_array_equal(out, expected)
    assert read_npy_header(io.BytesIO(data)).nbytes == arr.nbytes


@given(arr=arrays, data=st.data())
@fuzz_settings(150)
def test_damaged_bytes_give_the_array_or_a_one_line_error(arr, data):
    blob = data.draw(corruption.corrupted_bytes(_npy(arr)))
    try:
        out = array_from_npy(blob)
    except ValueError as err:
        assert "\n" not in str(err) and str(err)
        return
    assert out.nbytes <= len(blob)


@given(npy=corruption.huge_npy())
@fuzz_settings(100)
def test_huge_claims_are_refused_before_allocating(npy):
    with pytest.raises(ValueError, match="claims|addresses|zero-size"):
        array_from_npy(npy)


def test_object_arrays_are_refused():
    with pytest.raises(ValueError, match="allow_pickle=False"):
        parse_npy_header(corruption.npy_bytes((2,), descr="|O"))


def test_zip_member_sizes_are_checked_against_the_archive():
    npy = corruption.npy_bytes((1 << 28,), payload=b"\0" * 64)
    for blob in (corruption.npz_bytes({"x.npy": npy}, compressed=True),
                 corruption.lying_zip_sizes(corruption.npz_bytes({"x.npy": npy}))):
        with zipfile.ZipFile(io.BytesIO(blob)) as archive, pytest.raises(ValueError, match="claims"):
            array_from_zip_member(archive, archive.infolist()[0], len(blob))
    good = corruption.npz_bytes({"x.npy": _npy(np.arange(10.0))}, compressed=True)
    with zipfile.ZipFile(io.BytesIO(good)) as archive:
        np.testing.assert_array_equal(array_from_zip_member(archive, archive.infolist()[0], len(good)), np.arange(10.0))


def test_a_damaged_header_prints_no_python_warning():
    # literal_eval of a header with a stray backslash warns about the escape (on stderr, in a CLI)
    damaged = corruption.npy_bytes((2,)).replace(b"'descr'", b"'d\\escr'", 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="corrupt"):
            parse_npy_header(damaged)
    assert not caught, [str(w.message) for w in caught]


def _with_header_text(text: bytes) -> bytes:
    """A version 1.0 .npy preamble around ``text`` padded as NumPy pads it (no data)."""
    pad = 64 - (10 + len(text) + 1) % 64
    body = text + b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body


@pytest.mark.parametrize("arr", [np.zeros((1, 64, 56, 56), np.float32), np.arange(3, dtype=">i8"), np.array(2.5),
                                 np.zeros((2, 3), np.bool_), np.zeros((0,), np.float16), np.zeros(2, "V8"),
                                 np.zeros((4, 1), np.complex64)])
@pytest.mark.parametrize("fortran", [False, True])
def test_numpy_s_own_headers_are_parsed_without_python_s_literal_eval(arr, fortran, monkeypatch):
    # the header NumPy writes for a plain type string is read by a pattern; NumPy's reader (and
    # its literal_eval, 60 us a header) runs for any other header, with the same result
    data = _npy(arr, fortran)
    fp = io.BytesIO(data)
    np.lib.format.read_magic(fp)
    numpy_says = np.lib.format.read_array_header_1_0(fp)

    def numpy_reader(*args, **kwargs):
        raise AssertionError("NumPy's header reader ran")

    monkeypatch.setattr(np.lib.format, "read_array_header_1_0", numpy_reader)
    header = parse_npy_header(data)
    assert (header.shape, header.fortran_order, header.dtype) == numpy_says
    assert header.data_offset == fp.tell() and header.count == arr.size
    # the same header with its keys in another order is NumPy's reader's to parse
    shape, fortran_order, dtype = numpy_says
    reordered = (f"{{'shape': {shape!r}, 'fortran_order': {fortran_order!r}, "
                 f"'descr': {np.lib.format.dtype_to_descr(dtype)!r}, }}").encode()
    with pytest.raises(ValueError, match="NumPy's header reader ran"):  # (its error, reported)
        parse_npy_header(_with_header_text(reordered))
    monkeypatch.undo()
    other = parse_npy_header(_with_header_text(reordered))
    assert (other.shape, other.fortran_order, other.dtype) == numpy_says


def test_a_canonical_header_naming_no_type_is_reported_as_corrupt():
    with pytest.raises(ValueError, match=r"the \.npy header is corrupt .*'<f3'"):
        parse_npy_header(_with_header_text(b"{'descr': '<f3', 'fortran_order': False, 'shape': (2,), }"))
