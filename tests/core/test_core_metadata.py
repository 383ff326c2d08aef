import copy

import numpy as np
import pytest

from poly.core import BoundedShape, DataType, MetadataTuple, TensorMetadata
from poly.core.tensors.shape import (
    is_dimension_dynamic,
    is_shape_dynamic,
    is_valid_shape_override,
    override_dynamic_shape,
    volume,
)


def test_add_chains_and_converts_dtypes():
    meta = (
        TensorMetadata()
        .add("x", np.float32, (1, 3))
        .add("y", "int64", ["batch", -1], min_shape=[1, 1], max_shape=[8, 4])
    )
    assert list(meta) == ["x", "y"]
    dtype, shape = meta["x"]
    assert dtype is DataType.FLOAT32 and list(shape) == [1, 3]
    assert meta["y"].dtype is DataType.INT64
    assert isinstance(meta["y"].shape, BoundedShape)
    assert meta["y"].shape.min == [1, 1] and meta["y"].shape.max == [8, 4]


def test_str_matches_polygraphy():
    meta = TensorMetadata().add("x", np.float32, (1, 3)).add("y", DataType.INT64, ("batch", -1))
    assert str(meta) == "{x [dtype=float32, shape=(1, 3)],\n y [dtype=int64, shape=('batch', -1)]}"
    assert str(TensorMetadata()) == "{}"
    assert str(TensorMetadata().add("z", None, None)) == "{z}"
    assert (
        str(TensorMetadata().add("d", np.int8, (2,), docstring="note"))
        == "{d [dtype=int8, shape=(2,), note]}"
    )


def test_repr_rebuilds_metadata():
    meta = TensorMetadata().add("x", np.float16, [1, -1], min_shape=[1, 1], max_shape=[1, 9])
    text = repr(meta)
    assert text == "TensorMetadata().add('x', DataType.FLOAT16, [1, -1], min_shape=[1, 1], max_shape=[1, 9])"
    assert eval(text) == meta


def test_from_feed_dict():
    feed = {"a": np.zeros((2, 3), dtype=np.float32), "b": np.array(5, dtype=np.int64)}
    meta = TensorMetadata.from_feed_dict(feed)
    assert list(meta) == ["a", "b"]
    assert meta["a"].dtype is DataType.FLOAT32 and tuple(meta["a"].shape) == (2, 3)
    assert meta["b"].dtype is DataType.INT64 and tuple(meta["b"].shape) == ()


def test_from_feed_dict_with_array_interface_objects():
    class DeviceArray:
        __cuda_array_interface__ = {"typestr": "<f2", "shape": (4, 2), "data": (0, False), "version": 3}

    meta = TensorMetadata.from_feed_dict({"d": DeviceArray()})
    assert meta["d"].dtype is DataType.FLOAT16 and tuple(meta["d"].shape) == (4, 2)


def test_mapping_behaviour_and_type_checks():
    meta = TensorMetadata()
    meta["t"] = (np.float32, (1,))
    assert isinstance(meta["t"], MetadataTuple) and meta["t"].dtype is DataType.FLOAT32
    assert "t" in meta and len(meta) == 1
    with pytest.raises(TypeError):
        meta[3] = MetadataTuple(np.float32, [1])
    with pytest.raises(TypeError):
        meta["u"] = "float32"
    del meta["t"]
    assert len(meta) == 0


def test_equality_and_copies():
    a = TensorMetadata().add("x", np.float32, (1, 3))
    b = TensorMetadata().add("x", "float32", [1, 3])
    assert a == b
    assert a != TensorMetadata().add("x", np.float32, (1, 4))
    assert a != TensorMetadata().add("x", np.float16, (1, 3))
    c = copy.copy(a)
    c.add("y", np.int8, (1,))
    assert "y" not in a
    d = copy.deepcopy(a)
    assert d == a and d["x"].dtype is DataType.FLOAT32


def test_shape_helpers():
    assert not is_dimension_dynamic(3) and not is_dimension_dynamic(np.int64(3))
    assert is_dimension_dynamic(-1) and is_dimension_dynamic(None) and is_dimension_dynamic("batch")
    assert is_shape_dynamic((1, "n")) and not is_shape_dynamic((1, 2))
    assert is_valid_shape_override((4, 3), ("batch", 3))
    assert is_valid_shape_override((4, 3), (-1, None))
    assert not is_valid_shape_override((4, 2), ("batch", 3))
    assert not is_valid_shape_override((4, 3, 1), ("batch", 3))
    assert override_dynamic_shape(("n", 3, -1)) == [1, 3, 1]
    assert override_dynamic_shape(("n", 3), default_shape_value=7) == [7, 3]
    assert volume((2, 3, 4)) == 24 and volume(()) == 1
