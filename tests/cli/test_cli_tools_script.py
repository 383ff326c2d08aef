"""Polygraphy's script-writing API for argument groups (``poly.tools.script``, with
``BaseRunnerArgs`` and ``poly.tools.args.util``): groups parse their options and write the code
of their loaders and runners; the script runs and gives the runners, and no string value a user
gives can become code."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from fixtures import onnx_models

from poly.core import PolyException
from poly.tools.args import util as args_util
from poly.tools.args.base import BaseArgs, BaseRunnerArgs
from poly.tools.script import (
    Script,
    inline,
    inline_identifier,
    make_invocable,
    make_invocable_if_nondefault,
    safe,
)


def test_calls_are_written_with_literals_and_inline_code():
    assert str(make_invocable("T", "s", inline(safe("v")), [1, "a"], k=None, m={"a": 1})) == "T('s', v, [1, 'a'], m={'a': 1})"
    assert str(safe("f({}, {x})", 1, x="a'); import os; ('")) == "f(1, \"a'); import os; ('\")"
    assert make_invocable_if_nondefault("T", None, k=None) is None
    assert str(make_invocable_if_nondefault("T", 1)) == "T(1)"
    assert str(inline_identifier("abc")) == "abc"
    with pytest.raises(PolyException, match="identifier"):
        inline_identifier("a b")
    with pytest.raises(PolyException, match="safe"):
        inline("os.system('x')")  # plain text is never code


class _LoadModel(BaseArgs):
    """Model Loading: the ONNX model path."""

    def add_parser_args_impl(self):
        self.group.add_argument("model_file")

    def parse_impl(self, args):
        self.path = args_util.get(args, "model_file")

    def add_to_script_impl(self, script):
        script.add_import(imports=["OnnxFromPath"], frm="poly.onnx")
        return script.add_loader(make_invocable("OnnxFromPath", self.path), "load_onnx")


class _RefRunnerArgs(BaseRunnerArgs):
    """An extension's runner group: --my-ref selects the reference runner, --my-ref-name names it."""

    def get_name_opt_impl(self):
        return "My Reference", "my-ref"

    def add_parser_args_impl(self):
        self.group.add_argument("--my-ref-name", default=None)

    def parse_impl(self, args):
        self.name = args_util.get(args, "my_ref_name", default="my-ref-runner")

    def add_to_script_impl(self, script):
        loader = self.arg_groups[_LoadModel].add_to_script(script)
        script.add_import(imports=["OnnxRefRunner"], frm="poly.onnx")
        script.add_runner(make_invocable("OnnxRefRunner", loader, name=self.name))


def _the_script_s_runner(group):
    """The source of the script ``group`` writes, and the one runner that script makes."""
    script = Script(summary="an extension's runner")
    group.add_to_script(script)
    text = str(script)
    namespace: dict = {}
    exec(compile(text, "script.py", "exec"), namespace)  # noqa: S102 - the generated script under test
    (runner,) = namespace["runners"]
    return text, runner


def test_a_runner_group_writes_a_script_that_runs(tmp_path):
    path = str(onnx_models.save(onnx_models.identity(), tmp_path / "identity.onnx"))
    groups = {_LoadModel: _LoadModel(), _RefRunnerArgs: _RefRunnerArgs()}
    parser = argparse.ArgumentParser()
    for group in groups.values():
        group.register(groups)
        group.add_parser_args(parser)
    assert "My Reference Runner" in parser.format_help() and "--my-ref-name" in parser.format_help()
    args = parser.parse_args([path, "--my-ref-name", "ref'); import os; ('"])
    for group in groups.values():
        group.parse(args)
    assert groups[_RefRunnerArgs].get_name_opt() == ("My Reference", "my-ref")

    text, runner = _the_script_s_runner(groups[_RefRunnerArgs])
    assert "load_onnx = OnnxFromPath(" in text and "runners = [" in text
    assert runner.name == "ref'); import os; ('"  # a value, not code
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    with runner:
        assert np.array_equal(runner.infer({"x": x})["y"], x)


def test_loader_names_stay_unique_and_sections_are_ordered():
    script = Script()
    assert str(script.add_loader(make_invocable("L", 1), "ld")) == "ld"
    assert str(script.add_loader(make_invocable("L", 2), "ld")) == "ld_1"
    assert str(script.add_var(make_invocable("V"), "v")) == "v"
    script.set_data_loader(make_invocable("DataLoader", iterations=2))
    script.add_runner(make_invocable("R", inline(safe("ld"))))
    text = str(script)
    order = [text.index(s) for s in ("data_loader = DataLoader(iterations=2)", "ld = L(1)", "ld_1 = L(2)", "v = V()",
                                     "    R(ld),")]
    assert order == sorted(order)
    with pytest.raises(PolyException, match="Unsafe"):
        script.add_runner("R()")


class _GraphRunnerArgs(BaseRunnerArgs):
    """A runner group on poly's own ONNX loading group: the ONNX-Runtime runner on the model as
    --onnx-outputs and the other loading flags leave it (an extension would put its own runner)."""

    def get_name_opt_impl(self):
        return "Graph", "graph"

    def add_to_script_impl(self, script):
        from poly.tools.args import OnnxLoadArgs

        loader = self.arg_groups[OnnxLoadArgs].add_to_script(script)
        script.add_import(imports=["OnnxrtRunner", "SessionFromOnnx"], frm="poly.onnx")
        session = script.add_loader(make_invocable("SessionFromOnnx", loader), "session")
        script.add_runner(make_invocable("OnnxrtRunner", session))


def test_poly_s_onnx_loading_group_writes_the_loader_run_would_use(tmp_path):
    from poly.tools.args import ModelArgs, OnnxLoadArgs

    path = str(onnx_models.save(onnx_models.multi_output(), tmp_path / "multi.onnx"))
    groups = {ModelArgs: ModelArgs(), OnnxLoadArgs: OnnxLoadArgs(), _GraphRunnerArgs: _GraphRunnerArgs()}
    parser = argparse.ArgumentParser()
    for group in groups.values():
        group.register(groups)
        group.add_parser_args(parser)
    args = parser.parse_args([path, "--onnx-outputs", "s"])
    for group in groups.values():
        group.parse(args)
    assert [o.name for o in groups[OnnxLoadArgs].load_onnx().graph.output] == ["s"]

    text, runner = _the_script_s_runner(groups[_GraphRunnerArgs])
    assert "ModifyOutputs(OnnxFromPath(" in text and "from poly.onnx import" in text
    with runner:
        feed = {name: np.ones(meta.shape, meta.dtype) for name, meta in runner.get_input_metadata().items()}
        assert list(runner.infer(feed)) == ["s"]
