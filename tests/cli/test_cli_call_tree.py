"""The one source of truth of `poly run` and `--gen-script`: the option groups' call trees
(``poly.cli.gen_script.call_tree``), evaluated by the command and printed by the generator, and
the debug flags declared once for click and argparse (``poly.cli.args.debug.options``)."""

from __future__ import annotations

import argparse

import click
import pytest

from poly.cli.args.data.data_loader import DataLoaderArgs
from poly.cli.args.debug import options as debug_options
from poly.cli.args.debug.argparse_groups import ArtifactSortArgs, CheckCmdArgs, IterativeDebugArgs
from poly.cli.args.debug.debugger import DebuggerArgs
from poly.cli.args.onnx.load import OnnxLoadArgs
from poly.cli.gen_script.call_tree import (
    Assign,
    Const,
    Do,
    ListOf,
    Ref,
    Value,
    Var,
    evaluate,
    run_statements,
    statement_lines,
)
from poly.cli.gen_script.script_source import ScriptSource


def _script_namespace(statements):
    """Runs the source ``statements`` print (with their imports) as a script would; returns its
    variables."""
    src = ScriptSource([])
    src.section("code", statement_lines(statements, src))
    namespace = {}
    exec(compile(src.text(), "<script>", "exec"), namespace)  # noqa: S102 (our own generated source)
    return namespace


def test_a_call_prints_and_evaluates_the_same_call():
    statements = [
        Assign("parts", Ref("os.path", "split")("/a/b.onnx")),
        Assign("name", Ref("os").attr("path").attr("join")("dir", Var("parts").attr("__getitem__")(1))),
        Assign("items", ListOf([Ref("builtins", "dict")(a=1, b=None), Const(None)])),
    ]
    src = ScriptSource([])
    lines = statement_lines(statements[2:], src)
    assert statement_lines(statements[1:2], src) == ["name = os.path.join('dir', parts.__getitem__(1))"]
    # keyword arguments that are None are left out (the callee's default), a Const None stays
    assert lines == ["items = [\n    dict(a=1),\n    None,\n]"]
    assert src.imports == {"builtins": {"dict"}}
    ran = run_statements(statements)
    written = _script_namespace(statements)
    assert ran["parts"] == written["parts"] == ("/a", "b.onnx")
    assert ran["name"] == written["name"] == "dir/b.onnx"
    assert ran["items"] == written["items"] == [{"a": 1}, None]


def test_positional_func_argument_does_not_clash_with_a_func_keyword():
    expr = Ref("functools", "partial")(print, func=None)
    assert expr.kwargs == {} and callable(evaluate(expr))
    keyword = Ref("builtins", "dict")(func="f")
    assert evaluate(keyword) == {"func": "f"}


def test_a_value_only_the_command_holds_cannot_be_written_into_a_script():
    session_options = object()
    tree = Ref("builtins", "list")(Value([session_options]))
    assert evaluate(tree) == [session_options]
    with pytest.raises(TypeError):
        statement_lines([Do(tree)], ScriptSource([]))


def test_a_group_loader_is_its_call_tree_evaluated(models):
    onnx = OnnxLoadArgs(outputs=("r",), shape_inference=True, allow_onnxruntime_shape_inference=False)
    tree = onnx.loader_expr(models["multi"])
    src = ScriptSource([])
    text = tree.source(src)
    assert text.startswith("ModifyOutputs(InferShapes(OnnxFromPath(") and "allow_onnxruntime=False" in text
    assert src.imports == {"poly.onnx": {"InferShapes", "ModifyOutputs", "OnnxFromPath"}}
    loaded, written = onnx.load_onnx(models["multi"]), evaluate(tree)
    assert type(loaded) is type(written) and vars(loaded).keys() == vars(written).keys()
    assert [o.name for o in loaded().graph.output] == [o.name for o in written().graph.output] == ["r"]
    # nothing to change: the path itself, for the command and the script
    assert OnnxLoadArgs().loader_expr(models["multi"]) == models["multi"]


def test_the_data_loader_statements_make_the_data_loader_of_the_command():
    data = DataLoaderArgs(input_shapes={"x": [2, 3]}, seed=4, iterations=2)
    written = _script_namespace(data.data_loader_statements())["data_loader"]
    made = data.create_data_loader()
    assert [feed["x"].tolist() for feed in made] == [feed["x"].tolist() for feed in written]
    assert [feed["x"].shape for feed in made] == [(2, 3), (2, 3)]


# ---- debug flags: one table, two renderings ----------------------------------------------------

def _argparse_actions(group_class, *args):
    parser = argparse.ArgumentParser()
    group = group_class(*args)
    group.group = parser.add_argument_group(group.GROUP_TITLE)
    group.add_parser_args_impl()
    return {action.option_strings[0]: action for action in parser._actions if action.option_strings[1:2] != ["--help"]
            and action.option_strings and action.option_strings[0] != "-h"}


def test_click_and_argparse_take_the_same_flags_defaults_and_help():
    command = click.command()(DebuggerArgs.options(iter_artifact_default="polygraphy_debug.onnx",
                                                   until_required=True)(lambda **kwargs: None))
    clicked = {param.opts[0]: param for param in command.params}
    actions = {}
    for group in (_argparse_actions(CheckCmdArgs), _argparse_actions(ArtifactSortArgs),
                  _argparse_actions(IterativeDebugArgs, True, "polygraphy_debug.onnx", True)):
        actions.update(group)
    assert list(clicked) == list(actions)  # same flags, same order
    for flag, param in clicked.items():
        action = actions[flag]
        assert param.opts + param.secondary_opts == action.option_strings, flag
        assert param.help == action.help, flag
    assert clicked["--iter-artifact"].default == actions["--iter-artifact"].default == "polygraphy_debug.onnx"
    assert clicked["--save-debug-replay"].default == actions["--save-debug-replay"].default
    assert clicked["--until"].required and actions["--until"].required
    # Polygraphy's attribute names on the argparse side
    assert actions["--art-dir"].dest == "artifacts_dir" and actions["--iter-info"].dest == "iteration_info_path"


def test_the_replay_default_is_poly_debugs():
    from poly.debug import DEFAULT_REPLAY_PATH

    assert debug_options.DEFAULT_REPLAY_PATH == DEFAULT_REPLAY_PATH


def test_show_and_hide_output_exclude_each_other_in_argparse():
    parser = argparse.ArgumentParser()
    group = CheckCmdArgs()
    group.group = parser.add_argument_group(group.GROUP_TITLE)
    group.add_parser_args_impl()
    assert parser.parse_args(["--fail-code", "1", "3"]).fail_codes == [1, 3]
    with pytest.raises(SystemExit):
        parser.parse_args(["--show-output", "--hide-fail-output"])
