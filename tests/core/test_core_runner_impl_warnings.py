"""BaseRunner warns when a runner's ``*_impl`` method is called directly instead of through its
public method, as Polygraphy's runners do, and stays silent on the public path and on an
override that chains to its parent's implementation."""

import numpy as np
import pytest

from poly.core import BaseRunner, TensorMetadata

METHODS = ("activate", "get_input_metadata", "infer", "deactivate")


def warning(runner, method):
    return f"Calling '{type(runner).__name__}.{method}_impl()' directly is not recommended. Please use '{method}()' instead."


class Doubler(BaseRunner):
    def get_input_metadata_impl(self):
        return TensorMetadata().add("x", np.float32, (2,))

    def infer_impl(self, feed_dict):
        return {"y": feed_dict["x"] * 2}


class ChainedDoubler(Doubler):
    """Overrides that reach the parent's implementations with super()."""

    def get_input_metadata_impl(self):
        return super().get_input_metadata_impl()

    def infer_impl(self, feed_dict):
        return {"y": super().infer_impl(feed_dict)["y"] + 1}


def run_public(runner):
    runner.activate()
    meta = runner.get_input_metadata()
    out = runner.infer({name: np.ones(shape, dtype) for name, (dtype, shape) in meta.items()})
    runner.deactivate()
    return out


def run_impls(runner):
    runner.activate_impl()
    meta = runner.get_input_metadata_impl()
    out = runner.infer_impl({name: np.ones(shape, dtype.numpy()) for name, (dtype, shape) in meta.items()})
    runner.deactivate_impl()
    return out


@pytest.mark.parametrize("cls", [Doubler, ChainedDoubler])
def test_public_methods_do_not_warn(cls, capsys):
    runner = cls(name="r")
    run_public(runner)
    out = capsys.readouterr().out
    assert "directly is not recommended" not in out


def test_each_impl_called_directly_warns_naming_the_public_method(capsys):
    runner = Doubler(name="r")
    assert run_impls(runner)["y"].tolist() == [2.0, 2.0]
    out = capsys.readouterr().out
    # activate_impl and deactivate_impl are BaseRunner's own (not overridden): only the
    # subclass's implementations are checked, as Polygraphy decorates each runner's own.
    for method in ("get_input_metadata", "infer"):
        assert warning(runner, method) in out
    assert out.count("directly is not recommended") == 2


def test_an_override_chaining_to_its_parent_warns_once_not_twice(capsys):
    runner = ChainedDoubler(name="r")
    assert run_public(runner)["y"].tolist() == [3.0, 3.0]
    assert "directly is not recommended" not in capsys.readouterr().out
    run_impls(runner)
    out = capsys.readouterr().out
    assert out.count(warning(runner, "infer")) == 1
    assert out.count(warning(runner, "get_input_metadata")) == 1


def test_every_call_warns_not_only_the_first(capsys):
    runner = Doubler(name="r")
    runner.get_input_metadata_impl()
    runner.get_input_metadata_impl()
    assert capsys.readouterr().out.count(warning(runner, "get_input_metadata")) == 2
