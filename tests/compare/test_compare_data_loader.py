"""DataLoader (synthetic inputs) against Polygraphy's, data-loader scripts, and input coercion."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import poly.compare as pc
from poly.core import DataType, PolyException, TensorMetadata


def _meta(module_meta, entries):
    meta = module_meta()
    for name, dtype, shape, *bounds in entries:
        kwargs = {}
        if bounds:
            kwargs = {"min_shape": bounds[0], "max_shape": bounds[1]}
        meta.add(name, dtype, shape, **kwargs)
    return meta


MODEL_INPUTS = [
    ("image", np.float32, (1, 3, 4, 4)),
    ("half", np.float16, (2, 2)),
    ("ids", np.int64, (2, 5)),
    ("small", np.int32, (3,)),
    ("flags", np.bool_, (4,)),
    ("bytes", np.uint8, (2, 3)),
    ("dyn", np.float32, ("N", 3, -1)),
]


def _assert_feeds_equal(a, b):
    assert list(a.keys()) == list(b.keys())
    for name in a:
        assert a[name].dtype == b[name].dtype, name
        assert a[name].shape == b[name].shape, name
        assert np.array_equal(a[name], b[name]), name


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"seed": 7, "iterations": 3},
        {"val_range": (-2, 5)},
        {"val_range": {"image": (0.5, 0.75), "ids": (10, 20), "flags": (True, True), "": (-1.0, 1.0)}},
    ],
)
def test_synthetic_inputs_match_polygraphy(pg, options):
    from polygraphy.common import TensorMetadata as PgTensorMetadata

    # (Polygraphy cannot draw a negative range for uint8: NumPy raises; poly clamps, tested below.)
    inputs = [i for i in MODEL_INPUTS if i[1] != np.uint8 or "val_range" not in options]
    ours = pc.DataLoader(**options)
    theirs = pg.data_loader.DataLoader(**options)
    ours.input_metadata = _meta(TensorMetadata, inputs)
    theirs.input_metadata = _meta(PgTensorMetadata, inputs)
    ours_feeds, theirs_feeds = list(ours), [theirs[i] for i in range(theirs.iterations)]
    assert len(ours_feeds) == len(theirs_feeds) == options.get("iterations", 1)
    for a, b in zip(ours_feeds, theirs_feeds, strict=True):
        _assert_feeds_equal(a, b)
    assert ours_feeds[0]["dyn"].shape == (1, 3, 1)


def test_user_metadata_overrides_match_polygraphy(pg):
    from polygraphy.common import TensorMetadata as PgTensorMetadata

    model = [("x", np.float32, ("batch", 3, -1)), ("shape", np.int32, (2,)), ("y", np.float32, (-1, 2), (2, 2), (8, 2)),
             ("z", np.float32, (4, 4))]
    user = [("x", None, (2, 3, 5)), ("shape", None, (7, 9)), ("z", np.float16, (4, 4)), ("z*", np.int32, (4, 4)),
            ("missing", np.float32, (1,))]
    ours = pc.DataLoader(input_metadata=_meta(TensorMetadata, user))
    theirs = pg.data_loader.DataLoader(input_metadata=_meta(PgTensorMetadata, user))
    ours.input_metadata = _meta(TensorMetadata, model)
    theirs.input_metadata = _meta(PgTensorMetadata, model)
    a, b = ours[0], theirs[0]
    _assert_feeds_equal(a, b)
    assert a["x"].shape == (2, 3, 5)
    assert a["shape"].tolist() == [7, 9]  # a shape tensor: the given shape is its value
    assert a["y"].shape == (2, 2)  # the minimum of a bounded dynamic shape
    assert a["z"].dtype == np.int32  # wildcard metadata applies after the exact name


def test_determinism_and_seeds():
    meta = _meta(TensorMetadata, MODEL_INPUTS)
    first, second, other = pc.DataLoader(seed=3, iterations=2), pc.DataLoader(seed=3, iterations=2), pc.DataLoader(seed=4)
    for loader in (first, second, other):
        loader.input_metadata = meta
    _assert_feeds_equal(first[0], second[0])
    _assert_feeds_equal(first[1], other[0])  # iteration i uses seed + i
    assert not np.array_equal(first[0]["image"], first[1]["image"])
    with pytest.raises(IndexError):
        first[2]


def test_value_ranges_and_dtypes():
    loader = pc.DataLoader(val_range={"f": (-3.0, -2.0), "i": (5, 6), "b": (False, False), "": (0, 1)})
    loader.input_metadata = _meta(
        TensorMetadata, [("f", np.float32, (100,)), ("i", np.int8, (100,)), ("b", np.bool_, (10,)), ("other", np.float64, (10,))]
    )
    feed = loader[0]
    assert feed["f"].dtype == np.float32 and feed["f"].min() >= -3 and feed["f"].max() <= -2
    assert feed["i"].dtype == np.int8 and set(feed["i"].tolist()) <= {5, 6}
    assert feed["b"].dtype == np.bool_ and not feed["b"].any()
    assert feed["other"].dtype == np.float64
    inf = pc.DataLoader(val_range=(-np.inf, np.inf))
    inf.input_metadata = _meta(TensorMetadata, [("x", np.float32, (50,))])
    assert not np.isnan(inf[0]["x"]).any()  # infinite bounds give infinities, not NaN


def test_none_bounds_and_narrow_integer_ranges(capsys):
    loader = pc.DataLoader(val_range=(None, 4.0))
    loader.input_metadata = _meta(TensorMetadata, [("x", np.float32, (200,)), ("u", np.uint8, (200,))])
    feed = loader[0]
    assert feed["x"].min() >= 0.0 and feed["x"].max() <= 4.0 and feed["x"].max() > 1.0
    loader = pc.DataLoader(val_range=(-2, 300))
    loader.input_metadata = _meta(TensorMetadata, [("u", np.uint8, (500,))])
    u = loader[0]["u"]
    assert u.dtype == np.uint8 and u.min() >= 0 and int(u.max()) <= 255
    assert "does not fit uint8" in capsys.readouterr().out


def test_dynamic_user_shape_falls_back_with_a_warning(capsys):
    loader = pc.DataLoader(input_metadata=_meta(TensorMetadata, [("x", None, (-1, 3))]))
    loader.input_metadata = _meta(TensorMetadata, [("x", np.float32, (-1, 3))])
    assert loader[0]["x"].shape == (1, 3)
    assert "is dynamic" in capsys.readouterr().out


def _script(tmp_path, body, name="loader.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_data_loader_script(tmp_path):
    path = _script(tmp_path, """
        import numpy as np

        def load_data():
            for i in range(3):
                yield {"x": np.full((1, 2), i, np.float32)}

        def my_loader():
            return [{"x": np.ones((1, 2), np.float32)}]

        NOT_A_LOADER = 5
    """)
    loader = pc.DataLoaderFromScript(path)
    assert [float(f["x"][0, 0]) for f in loader] == [0, 1, 2]
    assert [float(f["x"][0, 0]) for f in loader] == [0, 1, 2]  # iterable more than once
    assert len(list(pc.DataLoaderFromScript(f"{path}:my_loader"))) == 1
    with pytest.raises(PolyException, match="Could not import symbol: nope"):
        list(pc.DataLoaderFromScript(f"{path}:nope"))
    with pytest.raises(PolyException, match="must return an iterable"):
        list(pc.DataLoaderFromScript(f"{path}:NOT_A_LOADER"))
    with pytest.raises(PolyException, match="does not exist"):
        list(pc.DataLoaderFromScript(str(tmp_path / "missing.py")))


def test_script_path_parsing():
    assert pc.parse_script_and_func_name("a/b.py:func", "load_data") == ("a/b.py", "func")
    assert pc.parse_script_and_func_name("a/b.py", "load_data") == ("a/b.py", "load_data")
    assert pc.parse_script_and_func_name(r"C:\data\b.py", "load_data") == (r"C:\data\b.py", "load_data")


def test_data_loader_script_feeds_comparator(tmp_path, h):
    path = _script(tmp_path, """
        import numpy as np
        def load_data():
            yield {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}
            yield {"x": np.ones((2, 3), np.float32)}
    """)
    runner = h.NumpyRunner(lambda f: {"y": f["x"] * 2}, {"x": (np.float32, (2, 3))}, name="r")
    results = pc.Comparator.run([runner], data_loader=pc.DataLoaderFromScript(path))
    assert [float(it["y"][0, 1]) for it in results["r"]] == [2.0, 2.0]


def test_coerce_feed_dict_casts_transposes_and_matches_names(capsys):
    meta = _meta(TensorMetadata, [("input_ids", np.int32, (2, 3)), ("mask", np.float32, (-1, 2))])
    feed = {"ids": np.ones((3, 2), np.int64), "other": np.zeros((4, 2), np.float64)}
    coerced = pc.coerce_feed_dict(feed, meta)
    assert coerced["input_ids"].dtype == np.int32 and coerced["input_ids"].shape == (2, 3)
    assert coerced["mask"].dtype == np.float32 and coerced["mask"].shape == (4, 2)
    out = capsys.readouterr().out
    assert "does not match expected input dtype" in out and "Attempting to transpose/reshape" in out
    with pytest.raises(PolyException, match="Cannot reuse input data"):
        pc.coerce_feed_dict({"x": np.ones(5, np.float32)}, _meta(TensorMetadata, [("x", np.float32, (2, 3))]))


def test_datatype_entries_and_numpy_dtypes_are_both_accepted():
    loader = pc.DataLoader(input_metadata={"x": (DataType.FLOAT16, (2,))})
    loader.input_metadata = _meta(TensorMetadata, [("x", np.float32, (2,))])
    assert loader[0]["x"].dtype == np.float16


@pytest.mark.parametrize("dtype", [DataType.BFLOAT16, DataType.FLOAT8E4M3FN, DataType.INT4])
def test_numpy_backend_refuses_types_numpy_lacks_as_polygraphy_does(dtype):
    loader = pc.DataLoader()
    loader.input_metadata = TensorMetadata().add("X", dtype=dtype, shape=(3,))
    with pytest.raises(PolyException, match=rf"{dtype}.*input: X.*Please use a custom data loader to provide inputs"):
        loader[0]


def test_torch_backend_generates_bfloat16():
    torch = pytest.importorskip("torch")
    loader = pc.DataLoader(data_loader_backend_module="torch")
    loader.input_metadata = TensorMetadata().add("X", dtype=DataType.BFLOAT16, shape=(3,))
    x = loader[0]["X"]
    assert isinstance(x, torch.Tensor) and x.dtype == torch.bfloat16 and tuple(x.shape) == (3,)
