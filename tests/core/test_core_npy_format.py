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
