"""Polygraphy's ``util`` helpers under ``poly.util`` (implemented in poly.core), answering as
the installed Polygraphy's do on the same inputs, and the ``util.array`` functions on NumPy."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import types
from collections.abc import Mapping

import numpy as np
import pytest

import poly.util as util
from poly.core import PolyException

pg_util = pytest.importorskip("polygraphy.util", reason="the dev group installs Polygraphy to compare with")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 1.0, 3, "nan", None, np.nan])
def test_is_nan_and_is_inf_match_polygraphy(value):
    assert util.is_nan(value) == pg_util.is_nan(value)
    assert util.is_inf(value) == pg_util.is_inf(value)


@pytest.mark.parametrize(
    "args, kwargs",
    [
        (("Example", None, "string"), {"w": None, "x": 2}),
        (("Loader", float("nan"), [float("inf"), 1]), {"d": {"a": -float("inf")}}),
        (("Empty",), {}),
        (("AllNone", None), {"k": None}),
    ],
)
def test_make_repr_matches_polygraphy(args, kwargs):
    assert util.make_repr(*args, **kwargs) == pg_util.make_repr(*args, **kwargs)
    text, _, _ = util.make_repr(*args, **kwargs)
    if "nan" in text:
        assert "float('nan')" in text


def test_text_and_attribute_helpers_match_polygraphy():
    block = "line one\nline two"
    assert util.indent_block(block, 2) == pg_util.indent_block(block, 2)
    obj = types.SimpleNamespace(a=types.SimpleNamespace(b=types.SimpleNamespace(c=5)))
    assert util.getattr_nested(obj, "a.b.c") == 5
    assert util.try_getattr(obj, "missing", 7) == pg_util.try_getattr(obj, "missing", 7) == 7
    with util.TempAttrChange(obj.a, {"b": 1, "untouched": None}):
        assert obj.a.b == 1 and not hasattr(obj.a, "untouched")
    assert obj.a.b.c == 5


def test_per_name_helpers_match_polygraphy():
    assert util.value_or_from_dict({"out": 1.0, "": 2.0}, "other") == 2.0
    assert util.value_or_from_dict({"out": 1.0}, "other", default=3) == pg_util.value_or_from_dict({"out": 1.0},
                                                                                                  "other", default=3)
    keys, targets = ["inp_*", "x", "nothing?"], ["inp_a", "inp_b", "x", "y"]
    assert util.match_keys(keys, targets) == pg_util.match_keys(keys, targets)
    assert util.contains_wildcard("inp_[ab]") and not util.contains_wildcard("inp")
    for name, seq, index in [("X", ["x:0", "y"], None), ("z", ["a", "b"], 1), ("z", ["a"], 4)]:
        assert util.find_str_in_iterable(name, seq, index) == pg_util.find_str_in_iterable(name, seq, index)


def test_an_exact_name_among_a_dicts_keys_is_found_without_a_scan():
    # Pairing each of a model's outputs by name searched every name of the other result: thousands
    # of outputs (`--onnx-outputs mark all`) made a comparison quadratic. A dict's keys (a set) are
    # asked first; only a name they lack is searched for, as Polygraphy does.
    class Outputs(Mapping):
        def __init__(self, items):
            self._items = items

        def __getitem__(self, name):
            return self._items[name]

        def __len__(self):
            return len(self._items)

        def __iter__(self):
            raise AssertionError("the keys were scanned")

    outputs = Outputs({"x:0": 1, "y": 2})
    assert util.find_str_in_iterable("y", outputs.keys(), 0) == "y"
    assert util.find_str_in_iterable("y", outputs) == "y"
    with pytest.raises(AssertionError, match="scanned"):  # (an inexact name still is searched for)
        util.find_str_in_iterable("X", outputs.keys())
    assert util.find_str_in_iterable("X", {"x:0": 1, "y": 2}.keys()) == "x:0"


def test_check_sequence_contains_reports_missing_and_extra():
    messages = []
    missing, extra = util.check_sequence_contains(["a", "b"], ["b", "c"], name="the model", items_name="outputs",
                                                  log_func=messages.append)
    assert (missing, extra) == pg_util.check_sequence_contains(["a", "b"], ["b", "c"], log_func=lambda _: None)
    assert missing == {"c"} and extra == {"a"}
    assert messages[0].startswith("The following outputs were not found in the model: {'c'}")
    assert messages[1].startswith("Extra outputs in the model: {'a'}")
    with pytest.raises(PolyException, match="were not found in the sequence"):
        util.check_sequence_contains(["a"], ["a", "b"], check_extra=False)


def test_try_match_shape_matches_polygraphy():
    arr = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for shape in [(2, 12), (4, 3, 2), (1, 2, 3, 4), (2, None, 4)]:
        np.testing.assert_array_equal(util.try_match_shape(arr, shape), pg_util.try_match_shape(arr, shape))


def test_path_helpers(tmp_path):
    target = tmp_path / "deep" / "er" / "file.onnx"
    util.makedirs(str(target))
    assert target.parent.is_dir()
    assert util.get_file_size(str(target)) == 0
    target.write_bytes(b"12345")
    assert util.get_file_size(str(target)) == pg_util.get_file_size(str(target)) == 5
    with open(target, "rb") as f:
        assert util.get_file_size(f) == 5
    assert util.add_file_suffix("a/b.onnx", "_fp16") == pg_util.add_file_suffix("a/b.onnx", "_fp16") == "a/b_fp16.onnx"
    assert util.find_in_dirs("*.onnx", [str(tmp_path), str(target.parent)]) == [str(target)]
    assert util.find_in_dirs("*.none", [str(tmp_path)]) == []
    assert util.sanitize_filename(os.path.join("out", "x")) == pg_util.sanitize_filename(os.path.join("out", "x"))


_HOLD_LOCK = """
import sys
from poly.util import LockFile
with LockFile(sys.argv[1]):
    print("locked", flush=True)
    sys.stdin.readline()  # hold it until told
"""


@pytest.mark.skipif(os.name != "posix", reason="checks the lock with fcntl (POSIX)")
def test_lock_file_excludes_another_process(tmp_path):
    import fcntl

    path = str(tmp_path / "cache.bin")
    child = subprocess.Popen([sys.executable, "-c", _HOLD_LOCK, path], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "locked"
        with open(path + ".lock", "ab+") as f, pytest.raises(OSError):
            fcntl.lockf(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by the child
    finally:
        child.communicate("release\n", timeout=60)
    with util.LockFile(path) as handle:  # free again
        assert handle is not None
    with util.LockFile(io.BytesIO()) as handle:  # file-like objects are not locked
        assert handle is None


def test_array_functions_on_numpy():
    arr = np.array([[1.0, -2.0], [0.0, 4.0]], np.float32)
    assert util.array.view(arr, "int32", (4,)).dtype == np.int32
    np.testing.assert_array_equal(util.array.argwhere(arr > 0), [[0, 0], [1, 1]])
    np.testing.assert_array_equal(util.array.logical_not(arr > 0), ~(arr > 0))
    np.testing.assert_array_equal(util.array.logical_xor(arr > 0, arr < 2), np.logical_xor(arr > 0, arr < 2))
    np.testing.assert_array_equal(util.array.logical_and(arr > 0, arr < 2), [[True, False], [False, False]])
    np.testing.assert_array_equal(util.array.greater(arr, 0), arr > 0)
    np.testing.assert_array_equal(util.array.where(arr > 0, arr, 0), [[1, 0], [0, 4]])
    np.testing.assert_array_equal(util.array.power(arr, 2), arr**2)
    np.testing.assert_array_equal(util.array.sqrt(np.abs(arr)), np.sqrt(np.abs(arr)))
    np.testing.assert_array_equal(util.array.multiply(arr, arr), arr * arr)
    counts, edges = util.array.histogram(arr, range=(-2, 4))
    assert counts.sum() == 4 and len(edges) == 11
    padded = util.array.pad(arr, [(1, 0)], axes=[1], constant_val=9)
    np.testing.assert_array_equal(padded, [[9, 1, -2], [9, 0, 4]])
    with pytest.raises(ValueError, match="must match number of dimensions"):
        util.array.pad(arr, [(1, 1)])
    buf = np.zeros(4, np.float32)
    grown = util.array.resize_or_reallocate(buf, (2, 4))
    assert grown.shape == (2, 4) and grown.dtype == np.float32
    assert util.array.resize_or_reallocate(grown, (2, 4)) is grown


def test_array_functions_on_torch():
    torch = pytest.importorskip("torch")
    t = torch.tensor([[1.0, -2.0], [0.0, 4.0]])
    assert util.array.view(t, "int32", (4,)).dtype == torch.int32
    assert torch.equal(util.array.where(t > 0, t, torch.zeros_like(t)), torch.tensor([[1.0, 0.0], [0.0, 4.0]]))
    assert torch.equal(util.array.pad(t, [(1, 0)], axes=[1], constant_val=9),
                       torch.tensor([[9.0, 1.0, -2.0], [9.0, 0.0, 4.0]]))
    counts, edges = util.array.histogram(t, range=(-2, 4))
    assert counts.sum().item() == 4 and len(edges) == 11


def test_frozen_instance_is_what_the_dataclass_makes():
    import dataclasses

    from poly.core.util.attributes import frozen_instance

    @dataclasses.dataclass(frozen=True)
    class Point:
        x: float
        y: tuple[int, ...]
        label: str = "p"

    made = frozen_instance(Point, {"x": 1.5, "y": (2, 3), "label": "q"})
    assert type(made) is Point and made == Point(1.5, (2, 3), "q") and hash(made) == hash(Point(1.5, (2, 3), "q"))
    assert repr(made) == repr(Point(1.5, (2, 3), "q"))
    assert dataclasses.replace(made, x=2.0) == Point(2.0, (2, 3), "q")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.x = 0.0  # type: ignore[misc]
