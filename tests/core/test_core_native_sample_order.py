"""poly._native's order statistics of a sample of keys (the planning of the rank windows and of
the GPU engine's predicted ranges): keys at positions of the sorted order and counts below
keys, against NumPy's sort, for uint32 and uint64 keys, spread, clustered and tied."""

from __future__ import annotations

import numpy as np
import pytest

from poly import _native


def samples(dtype):
    rng = np.random.default_rng(1)
    n = 1 << 16
    float_type = np.float32 if dtype == np.uint32 else np.float64
    yield "spread", rng.integers(0, np.iinfo(dtype).max, n, dtype=dtype, endpoint=True)
    yield "clustered", (rng.random(n) * 1e-3).astype(float_type).view(dtype)  # one binade's keys
    yield "tied", rng.integers(5, 9, n).astype(dtype)
    yield "constant", np.full(n, 7, dtype=dtype)
    yield "one key", np.array([3], dtype=dtype)


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_keys_at_positions_are_those_of_the_sorted_sample(dtype):
    for name, keys in samples(dtype):
        ordered = np.sort(keys)
        n = len(keys)
        positions = sorted({0, n - 1, n // 2, n // 3, (n * 9) // 10, max(0, n - 2)})
        got = _native.sample_keys_at(keys.copy(), positions)
        assert got.dtype == dtype, name
        assert got.tolist() == ordered[positions].tolist(), name


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_counts_below_and_up_to_keys(dtype):
    for name, keys in samples(dtype):
        ordered = [int(k) for k in np.sort(keys)]
        queries = [0, ordered[0], ordered[len(ordered) // 2], ordered[-1], int(np.iinfo(dtype).max)]
        below = _native.sample_keys_below(keys, queries, False).tolist()
        upto = _native.sample_keys_below(keys, queries, True).tolist()
        # exact integer counts (NumPy's searchsorted would compare uint64 with Python ints as floats)
        assert below == [sum(k < q for k in ordered) for q in queries], name
        assert upto == [sum(k <= q for k in ordered) for q in queries], name


def test_bad_samples_are_refused_with_a_clear_error():
    keys = np.arange(10, dtype=np.uint32)
    with pytest.raises(ValueError, match="uint32 or uint64"):
        _native.sample_keys_at(keys.astype(np.int64), [1])
    with pytest.raises(ValueError, match="contiguous 1-D"):
        _native.sample_keys_at(keys[::2], [1])
    frozen = keys.copy()
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        _native.sample_keys_at(frozen, [1])
    with pytest.raises(IndexError, match="past its end"):
        _native.sample_keys_at(keys.copy(), [10])
