"""Polygraphy's import paths in poly-core (poly.common, poly.exception.exception, poly.func,
poly.logger.logger, poly.util, poly.mod, poly.config, poly.backend.common) and the behaviour
behind them, checked against the installed Polygraphy where it gives the same answer."""

from __future__ import annotations

import importlib
import logging
import os
import textwrap

import numpy as np
import pytest

import poly.core.config as core_config
from poly.core.logging.exception import PolyException, PolyInternalException

polygraphy = pytest.importorskip("polygraphy", reason="the dev group installs Polygraphy to compare with")

# Polygraphy's public names that poly does not provide (yet), per path: anything else missing fails.
NOT_PROVIDED = {
    # Polygraphy's internals: its subprocess queue protocol and its layer printer.
    "util": {"str_from_layer", "try_receive_on_queue", "try_send_on_queue"},
    "mod": {"LATEST_VERSION", "autoinstall"},
    # poly colors without the `colored` module, so it has no flag saying whether that module is present
    "logger.logger": {"COLORED_MODULE_PRESENT"},
}
PATHS = ["common", "common.struct", "common.interface", "exception", "exception.exception", "func", "func.func",
         "logger", "logger.logger", "util", "util.array", "mod", "config", "cuda", "cuda.cuda", "json",
         "backend.base", "backend.common"]


def _polygraphy_api(module):
    """The names Polygraphy defines for users at ``module``: its ``__all__``, else the public
    classes, functions and constants it defines itself (not the modules and helpers it imports)."""
    if hasattr(module, "__all__"):
        return set(module.__all__)
    names = set()
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("_") or type(value).__name__ == "module":
            continue
        origin = getattr(value, "__module__", None)
        if origin is None or origin.startswith("polygraphy"):
            names.add(name)
    return names


@pytest.mark.parametrize("path", PATHS)
def test_every_polygraphy_name_of_the_path_exists_in_poly(path):
    theirs = importlib.import_module(f"polygraphy.{path}")
    ours = importlib.import_module(f"poly.{path}")
    imported_helpers = {"G_LOGGER", "OrderedDict", "List", "dedent", "LogMode"}
    missing = sorted(n for n in _polygraphy_api(theirs) - imported_helpers - NOT_PROVIDED.get(path, set())
                     if not hasattr(ours, n))
    assert not missing, f"poly.{path} lacks {missing}"


def test_exception_paths_and_the_internal_exception_is_not_a_poly_exception():
    from poly.exception import PolygraphyException, PolygraphyInternalException
    from poly.exception.exception import PolygraphyException as Same

    assert PolygraphyException is Same is PolyException
    assert PolygraphyInternalException is PolyInternalException
    assert not issubclass(PolyInternalException, PolyException)


def test_typed_dict_and_list_reject_wrong_types_with_polygraphy_messages():
    from poly.common.interface import TypedDict, TypedList

    class IntToFloat(TypedDict(lambda: int, lambda: float)):
        pass

    class Ints(TypedList(lambda: int)):
        pass

    d = IntToFloat({1: 2.0})
    assert d[1] == 2.0 and list(d.items()) == [(1, 2.0)]
    with pytest.raises(PolyException, match="Unsupported value type"):
        d[0] = "hi"
    with pytest.raises(PolyException, match="Unsupported key type"):
        d.update({"hi": 1.0})
    ints = Ints([1])
    ints += [2, 3]
    assert list(ints) == [1, 2, 3]
    with pytest.raises(PolyException, match="Unsupported element type"):
        ints.extend([4, "surprise"])
    assert list(ints) == [1, 2, 3], "a rejected extend adds nothing"
    with pytest.raises(PolyException, match="Unsupported element type"):
        ints[0] = 1.0


def test_tensor_metadata_prints_as_polygraphy_does():
    from polygraphy.common import TensorMetadata as TheirMeta
    from polygraphy.datatype import DataType as TheirType

    from poly.common import TensorMetadata
    from poly.datatype import DataType

    for dtype, their_dtype, shape in [(DataType.FLOAT32, TheirType.FLOAT32, (64, 64)), (None, None, (1,)),
                                      (DataType.INT8, TheirType.INT8, None), (None, None, None)]:
        ours = TensorMetadata().add("X", dtype=dtype, shape=shape)
        theirs = TheirMeta().add("X", dtype=their_dtype, shape=shape)
        assert str(ours) == str(theirs)


def test_formatted_array_round_trips_through_json_and_polygraphy_reads_it(tmp_path):
    from polygraphy.json import load_json as their_load

    from poly.common import FormattedArray
    from poly.json import load_json, save_json

    arr = FormattedArray(np.arange(8, dtype=np.uint8), shape=(1, 3, 1, 2))
    path = tmp_path / "farray.json"
    save_json(arr, str(path))
    back = load_json(str(path))
    assert isinstance(back, FormattedArray) and list(back.shape) == [1, 3, 1, 2]
    assert np.array_equal(back.array, arr.array)
    theirs = their_load(str(path))
    assert type(theirs).__name__ == "FormattedArray" and np.array_equal(theirs.array, arr.array)


def test_constantmethod_raises_only_with_internal_checks(monkeypatch):
    from poly.func import constantmethod

    class Counter:
        def __init__(self):
            self.x = 2

        def bump(self):
            self.x = 3

    monkeypatch.setattr(core_config, "INTERNAL_CORRECTNESS_CHECKS", False)
    unchecked = Counter()
    constantmethod(Counter.bump)(unchecked)
    assert unchecked.x == 3

    monkeypatch.setattr(core_config, "INTERNAL_CORRECTNESS_CHECKS", True)
    with pytest.raises(PolyInternalException, match="was mutated in a constant method"):
        constantmethod(Counter.bump)(Counter())

    class Reader:
        def __init__(self):
            self.x = [1]

        def read(self):
            self.x.append(2)  # contents, not bindings: not checked (as in Polygraphy)
            return len(self.x)

    assert constantmethod(Reader.read)(Reader()) == 2


def test_loaders_warn_when_call_impl_is_called_directly(capsys):
    from poly.backend.base import BaseLoader

    class Three(BaseLoader):
        def call_impl(self):
            return 3

    loader = Three()
    assert loader() == 3
    assert "directly is not recommended" not in capsys.readouterr().out
    assert loader.call_impl() == 3
    assert "Calling 'Three.call_impl()' directly is not recommended. Please use '__call__()' instead." in \
        capsys.readouterr().out


def test_runner_returns_numpy_dtypes_by_default_as_polygraphy_does():
    from poly.backend.base import BaseRunner
    from poly.common import TensorMetadata
    from poly.datatype import DataType

    class Runner(BaseRunner):
        def get_input_metadata_impl(self):
            return TensorMetadata().add("x", DataType.FLOAT16, (1, 2))

    with Runner(name="r") as runner:
        assert runner.get_input_metadata(use_numpy_dtypes=False)["x"].dtype == DataType.FLOAT16
        for numpy_meta in (runner.get_input_metadata(), runner.get_input_metadata(use_numpy_dtypes=True)):
            assert numpy_meta["x"].dtype == np.dtype(np.float16) and isinstance(numpy_meta["x"].dtype, np.dtype)


def test_config_path_is_the_settings_module_and_lazy_arrays_follow_it(monkeypatch):
    import poly.config
    from poly.compare import IterationResult

    assert poly.config is core_config
    monkeypatch.setattr(poly.config, "ARRAY_SWAP_THRESHOLD_MB", 0)
    result = IterationResult({"y": np.arange(10, dtype=np.float32)}, runner_name="r")
    assert result.dct["y"].arr is None and os.path.exists(result.dct["y"].tmpfile)
    monkeypatch.setattr(poly.config, "ARRAY_SWAP_THRESHOLD_MB", -1)
    assert IterationResult({"y": np.ones(3)}, runner_name="r").dct["y"].tmpfile is None


@pytest.mark.parametrize("older, newer", [("8.6.1", "10.0"), ("1.7.1.116", "10.0.0"), ("0.9.9", "0.10")])
def test_mod_version_orders_like_polygraphy(older, newer):
    from polygraphy import mod as their_mod

    from poly import mod

    assert mod.version(older) < mod.version(newer)
    assert their_mod.version(older) < their_mod.version(newer)
    assert mod.version("10.0") == mod.version("10.0.0")


@pytest.mark.parametrize("older, newer", [("1.0rc1", "1.0"), ("1.0", "1.0.post1"), ("2.0.dev1", "2.0a1")])
def test_mod_version_orders_pre_and_post_releases(older, newer):
    # Polygraphy's own tuples cannot compare these (a TypeError); poly's can.
    from poly import mod

    assert mod.version(older) < mod.version(newer)


def test_mod_lazy_import_takes_polygraphy_spellings():
    from poly import mod

    np_lazy = mod.lazy_import("numpy>=1.20", pkg_name="numpy")
    assert np_lazy.ones(2).sum() == 2
    assert mod.has_mod("numpy") and not mod.has_mod("surely_not_a_module_x")


def test_util_array_matches_numpy_and_rejects_unknown_types():
    from poly.util import array

    a = np.array([[1.0, np.nan], [np.inf, -2.0]], dtype=np.float32)
    assert array.equal(a[:, 1:], a[:, 1:].copy()) is False  # NaN != NaN, as np.array_equal
    assert array.equal(np.arange(3), np.arange(3))
    assert array.any(array.isnan(a)) and not array.all(array.isfinite(a))
    assert array.dtype(a).name == "float32" and array.shape(a) == (2, 2) and array.nbytes(a) == 16
    assert array.max(np.array([3, 9, 1])) == 9 and array.argmin(np.array([3, 9, 1])) == 2
    values, indices = array.topk(np.array([[1, 5, 3]]), 2, axis=1)
    assert values.tolist() == [[5, 3]] and indices.tolist() == [[1, 2]]
    with pytest.raises(PolyException, match="unsupported for objects of type: str"):
        array.any("not an array")


def test_util_helpers_and_temporary_files():
    from poly import util

    assert util.volume((2, 3, 4)) == 24 and util.is_empty_shape((2, 0)) and not util.is_empty_shape((1,))
    assert util.invert_dict({"a": 1}) == {1: "a"} and util.unique_list([3, 1, 3]) == [3, 1]
    assert util.invoke_if_callable(lambda: 5) == (5, True) and util.invoke_if_callable(5) == (5, False)
    tmp = util.NamedTemporaryFile("w+", suffix=".txt")
    with tmp as f:
        f.write("hello")
    with open(tmp.name) as again:
        assert again.read() == "hello"
    name = tmp.name
    del tmp
    assert not os.path.exists(name), "removed once the object goes"


def test_logger_path_and_python_logging(tmp_path):
    from poly.logger.logger import Logger

    handler_path = tmp_path / "py.log"
    py_logger = logging.getLogger(Logger.PYTHON_LOGGER_NAME)
    handler = logging.FileHandler(handler_path)
    py_logger.addHandler(handler)
    py_logger.setLevel(1)
    try:
        logger = Logger(severity=Logger.ULTRA_VERBOSE)
        logger.use_python_logging_system = True
        logger.ultra_verbose("deep")
        logger.warning("careful")
        with pytest.raises(PolyException):
            logger.critical("broken")
    finally:
        py_logger.removeHandler(handler)
        handler.close()
    assert handler_path.read_text().splitlines() == ["[U] deep", "[W] careful", "[!] broken"]


def test_backend_common_loaders(tmp_path):
    from poly.backend.common import (
        BytesFromPath,
        InvokeFromScript,
        SaveBytes,
        bytes_from_path,
        invoke_from_script,
    )

    target = tmp_path / "sub" / "data.bin"
    assert SaveBytes(lambda: b"\x00\x01", str(target))() == b"\x00\x01"
    assert BytesFromPath(str(target))() == b"\x00\x01" == bytes_from_path(str(target))
    with pytest.raises(PolyException, match="missing.bin"):
        BytesFromPath(str(tmp_path / "missing.bin"))()

    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        def add(a, b=1):
            return a + b

        class Scale:
            factor = 3
            def __call__(self, x):
                return x * self.factor
    """))
    assert InvokeFromScript(str(script), "add")(2, b=5) == 7
    assert invoke_from_script(str(script), "add", 2) == 3
    scale = InvokeFromScript(str(script), "Scale")
    assert scale(2) == 6 and scale.factor == 3
    with pytest.raises(PolyException, match="Could not import symbol: nope from script"):
        invoke_from_script(str(script), "nope")
