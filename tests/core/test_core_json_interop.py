"""JSON interchange with Polygraphy 0.53 itself, in both directions."""

import numpy as np
import pytest

from poly.core.json import from_json, load_json, save_json, to_json

polygraphy_json = pytest.importorskip(
    "polygraphy.json", reason="polygraphy (a dev dependency) is not installed; interop not checked"
)


def _sample():
    return {
        "f32": np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
        "f16": np.array([1.5, -0.0, np.inf, np.nan], dtype=np.float16),
        "i64": np.array([[-(2**62), 2**62]], dtype=np.int64),
        "bool": np.array([True, False, True]),
        "scalar": np.array(3.25, dtype=np.float64),
        "empty": np.zeros((0, 2), dtype=np.int32),
        "u8": np.arange(5, dtype=np.uint8),
        "fortran": np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3)),
        "nested": [{"x": np.ones((1, 2), dtype=np.float32)}, {"y": [np.array([7], dtype=np.int8)]}],
        "plain": {"s": "text", "n": 1, "f": 0.5, "none": None, "list": [1, 2]},
    }


def _assert_equal(expected, actual):
    if isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray)
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        np.testing.assert_array_equal(actual, expected)
    elif isinstance(expected, dict):
        assert list(actual) == list(expected)
        for key in expected:
            _assert_equal(expected[key], actual[key])
    elif isinstance(expected, list):
        assert len(actual) == len(expected)
        for e, a in zip(expected, actual, strict=True):
            _assert_equal(e, a)
    else:
        assert actual == expected


def test_same_text_as_polygraphy():
    obj = _sample()
    assert to_json(obj) == polygraphy_json.to_json(obj)


def test_polygraphy_writes_poly_reads(tmp_path):
    path = str(tmp_path / "from_polygraphy.json")
    obj = _sample()
    polygraphy_json.save_json(obj, path)
    _assert_equal(obj, load_json(path))


def test_poly_writes_polygraphy_reads(tmp_path):
    path = tmp_path / "from_poly.json"
    obj = _sample()
    save_json(obj, path)
    _assert_equal(obj, polygraphy_json.load_json(str(path)))


def test_list_of_feed_dicts_both_ways(tmp_path):
    feeds = [{"input": np.full((1, 3), i, dtype=np.float32)} for i in range(3)]
    _assert_equal(feeds, from_json(polygraphy_json.to_json(feeds)))
    _assert_equal(feeds, polygraphy_json.from_json(to_json(feeds)))


def test_bfloat16_is_readable_by_polygraphy(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    arr = np.array([1.5, -2.0, 3.0], dtype=ml_dtypes.bfloat16)
    path = tmp_path / "bf16.json"
    save_json({"a": arr}, path)
    theirs = polygraphy_json.load_json(str(path))["a"]
    assert theirs.tobytes() == arr.tobytes()
    # and what Polygraphy writes for bfloat16 (raw 2-byte elements) still loads in poly
    mine = from_json(polygraphy_json.to_json({"a": arr}))["a"]
    assert mine.tobytes() == arr.tobytes() and mine.dtype.itemsize == 2
