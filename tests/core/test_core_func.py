import inspect
from collections import namedtuple

import pytest

from poly.core import BaseLoader, PolyException
from poly.core.func import extend, funcify, pascal_to_snake


def test_extend_modifies_in_place_and_forwards_return_values():
    def x(a0, a1, a2):
        return [a0, a1, a2], None

    @extend(x)
    def y(rv0, rv1):
        rv0.append(-1)

    rv0, rv1 = y(1, 2, 3)
    assert rv0 == [1, 2, 3, -1]
    assert rv1 is None


def test_extend_returned_value_replaces_original():
    @extend(lambda: 5)
    def doubled(value):
        return value * 2

    assert doubled() == 10


def test_extend_tuple_is_unpacked():
    def x():
        ret = (1, 2)
        return ret

    seen = []

    @extend(x)
    def y(a, b):
        seen.append((a, b))

    assert y() == (1, 2)
    assert seen == [(1, 2)]


def test_extend_namedtuple_is_one_value():
    Pair = namedtuple("Pair", "a b")

    @extend(lambda: Pair(1, 2))
    def y(pair):
        assert pair == Pair(1, 2)

    assert y() == Pair(1, 2)


def test_extend_receives_arguments_before_return_values():
    def x(x_arg):
        return x_arg + 1

    @extend(x)
    def y(x_arg, x_ret):
        assert x_ret == x_arg + 1

    assert y(5) == 6

    def z(a, b=0):
        return a + b

    @extend(z)
    def w(a, b, ret):
        return (a, b, ret)

    assert w(1, b=2) == (1, 2, 3)


def test_extend_function_without_parameters():
    calls = []

    @extend(lambda: calls.append("loader"))
    def after():
        calls.append("after")

    assert after() is None
    assert calls == ["loader", "after"]


def test_extend_parameter_mismatch_is_critical():
    @extend(lambda: (1, 2, 3))
    def y(a):
        pass

    with pytest.raises(PolyException, match="accepts 1 parameter"):
        y()


def test_extend_wraps_a_loader():
    class Loader(BaseLoader):
        def call_impl(self):
            return {"name": "orig"}

    @extend(Loader())
    def load(model):
        model["name"] = "changed"

    assert load() == {"name": "changed"}
    assert load.__name__ == "load"


class OnnxFromThing(BaseLoader):
    """Loads a thing."""

    def __init__(self, path, scale=1, *, tag=None):
        self.path, self.scale, self.tag = path, scale, tag

    def call_impl(self, offset, extra=0):
        return (self.path, self.scale, self.tag, offset, extra)


def test_funcify_signature_and_call():
    onnx_from_thing = funcify(OnnxFromThing)
    assert onnx_from_thing.__name__ == "onnx_from_thing"
    assert list(inspect.signature(onnx_from_thing).parameters) == ["path", "offset", "scale", "extra", "tag"]
    assert onnx_from_thing("p", 10) == ("p", 1, None, 10, 0)
    assert onnx_from_thing("p", 10, 2, 3, tag="t") == ("p", 2, "t", 10, 3)
    assert onnx_from_thing(offset=1, path="q", extra=5) == ("q", 1, None, 1, 5)
    with pytest.raises(TypeError):
        onnx_from_thing("p")


def test_funcify_variadic():
    class Collect(BaseLoader):
        def __init__(self, first, *rest):
            self.items = (first, *rest)

        def call_impl(self, **options):
            return self.items, options

    collect = funcify(Collect, func_name="gather")
    assert collect.__name__ == "gather"
    assert collect(1, 2, 3, flag=True) == ((1, 2, 3), {"flag": True})


def test_funcify_rejects_shared_parameter_names():
    class Clash(BaseLoader):
        def __init__(self, x):
            pass

        def call_impl(self, x):
            pass

    with pytest.raises(TypeError, match="share"):
        funcify(Clash)


def test_base_loader_is_abstract():
    with pytest.raises(NotImplementedError):
        BaseLoader()()


@pytest.mark.parametrize(
    "name, snake",
    [
        ("OnnxFromPath", "onnx_from_path"),
        ("SaveEngine", "save_engine"),
        ("GsFromOnnx", "gs_from_onnx"),
        ("NetworkFromOnnxBytes", "network_from_onnx_bytes"),
    ],
)
def test_pascal_to_snake(name, snake):
    assert pascal_to_snake(name) == snake
