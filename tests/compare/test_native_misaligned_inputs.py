"""Arrays whose data is not aligned to their element size, as ``np.frombuffer`` returns for the
members of an uncompressed ``.npz`` (poly.compare.io.npz_codec), give the same statistics as
aligned copies of them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from poly import _native
from poly.compare import error_stats


def misaligned(values: np.ndarray) -> np.ndarray:
    """``values`` viewed one byte past an aligned address."""
    raw = bytearray(values.nbytes + 1)
    arr = np.frombuffer(raw, dtype=values.dtype, count=values.size, offset=1)
    arr = arr.reshape(values.shape)
    arr.flags.writeable = True
    arr[...] = values
    return arr


def same(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or x == y


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64"])
@pytest.mark.parametrize("n", [37, 5000])
def test_misaligned_arrays_give_the_statistics_of_aligned_copies(dtype, n):
    rng = np.random.default_rng(n)
    a = (rng.standard_normal(n) * 10).astype(dtype)
    b = (a.astype(np.float64) + rng.standard_normal(n)).astype(dtype)
    ma, mb = misaligned(a), misaligned(b)
    assert not ma.flags.aligned and not mb.flags.aligned
    want = error_stats(a, b, quantiles=(0.5, 0.9), threads=1)
    got = error_stats(ma, mb, quantiles=(0.5, 0.9), threads=1)
    assert got.mismatches == want.mismatches
    for g, w in ((got.absdiff, want.absdiff), (got.reldiff, want.reldiff)):
        assert (g.argmin, g.argmax) == (w.argmin, w.argmax)
        for field in ("min", "max", "mean", "var", "median"):
            assert same(getattr(g, field), getattr(w, field)), field
        assert g.quantiles == w.quantiles
    assert same(got.a.median, want.a.median) and got.b.max == want.b.max
    code = _native.DTYPE_CODES[dtype]
    edges = np.linspace(float(a.min()), float(a.max()), 9).tolist()
    assert _native.histogram(ma, None, code, code, "a", edges) == _native.histogram(a, None, code, code, "a", edges)
