"""The comparison group's call trees: what `poly run` does with its results (--load-outputs,
--postprocess, --validate, the comparison and its verdict) is one list of statements, which the
command evaluates and `--gen-script` prints; generated scripts import only stable public paths;
the group's flags keep their help order."""

from __future__ import annotations

import ast
import importlib
import pathlib

import click
import numpy as np
import pytest
from click.testing import CliRunner

from poly.cli.args.comparison import _FAIL_FAST_FLAG, _PLOT_FLAGS, _VERDICT_FLAGS, ComparisonArgs
from poly.cli.gen_script.call_tree import (
    Assign,
    BinOp,
    Builtin,
    Do,
    For,
    If,
    Ref,
    Var,
    run_statements,
    statement_lines,
)
from poly.cli.gen_script.script_source import ScriptSource
from poly.compare import IterationResult, RunResults, SimpleCompareOptions


def _parse(*args) -> ComparisonArgs:
    @click.command()
    @ComparisonArgs.options()
    def command(**kwargs):
        return ComparisonArgs.from_kwargs(kwargs)

    return command.main([str(arg) for arg in args], standalone_mode=False)


def _exec(statements, env):
    """Runs the source ``statements`` print, with their imports, in a namespace holding ``env``."""
    src = ScriptSource([])
    src.section("code", statement_lines(statements, src))
    namespace = dict(env)
    exec(compile(src.text(), "<script>", "exec"), namespace)  # noqa: S102 (our own generated source)
    return namespace, src.text()


def _results(*arrays, names=("a", "b", "c")) -> RunResults:
    results = RunResults()
    for name, array in zip(names, arrays, strict=False):
        results.append((name, [IterationResult({"y": np.asarray(array, dtype=np.float32)}, runner_name=name)]))
    return results


# ---- call tree blocks and operators -------------------------------------------------------------


def test_blocks_and_operators_print_and_evaluate_the_same():
    statements = [
        Assign("total", 1),
        For("x", [1, 2, 3], [Assign("total", BinOp(Var("total"), "and", Var("x")))]),
        Assign(("first", "rest"), Ref("os.path", "split")("/a/b")),
        If(BinOp(Builtin("len")(Var("first")), ">", 1), [Assign("long", True)]),
        If(BinOp(Builtin("len")(Var("rest")), ">", 5), [Assign("never", True)]),
        Do(Ref("os.path", "join")("a", "b")),
    ]
    evaluated = run_statements(statements)
    printed, text = _exec(statements, {})
    assert "for x in [1, 2, 3]:\n    total = total and x" in text
    assert "first, rest = split('/a/b')" in text and "if len(first) > 1:\n    long = True" in text
    for env in (evaluated, printed):
        assert (env["total"], env["first"], env["rest"], env["long"]) == (3, "/a", "b", True)
        assert "never" not in env
    with pytest.raises(ValueError):
        run_statements([Assign(("a", "b", "c"), (1, 2))])
    with pytest.raises(ValueError):
        Builtin("no_such_builtin")


# ---- the comparison group's statements ----------------------------------------------------------


@pytest.mark.parametrize(
    "flags, arrays, passed",
    [
        ((), ([1.0, 2.0], [1.0, 2.0]), True),
        ((), ([1.0, 2.0], [1.0, 2.5]), False),
        (("--atol", "1"), ([1.0, 2.0], [1.0, 2.5]), True),
        (("--validate",), ([1.0, np.nan],), False),
        ((), ([1.0, np.nan],), True),
        (("--validate",), ([1.0, 2.0],), True),
        (("--compare", "simple", "l2", "--l2-threshold", "0.1", "--fail-fast"), ([1.0, 2.0], [1.0, 2.5]), False),
        (("--compare", "indices"), ([1.0, 2.0], [1.0, 2.0], [1.0, 2.0]), True),
    ],
)
def test_the_command_evaluates_what_the_script_prints(flags, arrays, passed):
    comparison = _parse(*flags)
    statements = comparison.check_statements()
    evaluated = run_statements(statements, {"results": _results(*arrays)})["success"]
    printed, text = _exec(statements, {"results": _results(*arrays)})
    assert bool(evaluated) == bool(printed["success"]) == passed, text
    assert comparison.check_results(_results(*arrays)) == passed
    assert text.count("success = ") == 2 + ("--validate" in flags)


def test_loaded_outputs_are_compared_and_post_processing_comes_after_loading(tmp_path):
    saved = tmp_path / "golden.json"
    _results([1.0, 2.0], names=("golden",)).save(str(saved))
    comparison = _parse("--load-outputs", saved, "--atol", "0", "--rtol", "0")
    # post-processing (here a statement that changes the last result) runs after the extend
    edit = Do(Var("results").attr("__getitem__")(-1).attr("__getitem__")(1).attr("__getitem__")(0)
              .attr("__setitem__")("y", np.float32(5.0).item()))
    for after_loading, passed in (((), True), ((edit,), False)):
        statements = comparison.check_statements(after_loading)
        env = run_statements(statements, {"results": _results([1.0, 2.0], names=("run",))})
        assert [name for name, _ in env["results"]] == ["run", "golden"]
        assert bool(env["success"]) == passed
    text = "\n".join(statement_lines(comparison.check_statements(), ScriptSource([])))
    assert f"for path in [{str(saved)!r}]:\n    results.extend(RunResults.load(path))" in text
    results = _results([1.0, 2.0], names=("run",))
    comparison.add_loaded_outputs(results)
    assert len(results) == 2 and comparison.check_results(results)


def test_compare_func_is_one_assign_of_the_compare_funcs():
    comparison = _parse("--compare", "simple", "psnr", "--atol", "0.5", "--psnr-threshold", "20", "--no-shape-check")
    (assign,) = comparison.compare_func_statements()
    src = ScriptSource([])
    assert assign.name == "compare_func"
    assert assign.line(src) == ("compare_func = [CompareFunc.simple(check_shapes=False, atol=0.5), "
                                "CompareFunc.psnr(check_shapes=False, psnr_threshold=20)]")
    assert src.imports == {"poly.compare": {"CompareFunc"}}
    simple, psnr = comparison.create_compare_func()
    assert (simple.atol, simple.check_shapes, type(psnr).__name__) == (0.5, False, "PsnrCompareFunc")


def test_show_flags_resolve_the_display_when_the_statements_run(tmp_path, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("MPLBACKEND", "agg")
    comparison = _parse("--show-error-metrics-plot", "--save-error-metrics-plot", tmp_path)
    statements = comparison.compare_func_statements()
    src = ScriptSource([])
    lines = statement_lines(statements, src)
    assert lines[0] == (f"show_error_metrics_plot, save_error_metrics_plot = resolve_display("
                        f"'--show-error-metrics-plot', True, {str(tmp_path)!r})")
    assert src.imports["poly.compare"] == {"CompareFunc", "resolve_display"}
    func = run_statements(statements)["compare_func"]
    assert (func.show_error_metrics_plot, func.save_error_metrics_plot) == (False, str(tmp_path))


# ---- generated scripts import only stable public paths ------------------------------------------

_PUBLIC_MODULES = {"poly.onnx", "poly.trt", "poly.compare", "poly.core", "poly.comparator"}


def _is_public(module: str) -> bool:
    return module in _PUBLIC_MODULES or module.startswith("poly.backend.")


def _script_flag_sets(tmp_path, model):
    network = tmp_path / "net.py"
    network.write_text("def load_network():\n    pass\n\ndef postprocess(network):\n    pass\n")
    compare = tmp_path / "cmp.py"
    compare.write_text("def compare_outputs(a, b):\n    return {}\n")
    saved = tmp_path / "golden.json"
    _results([1.0], names=("golden",)).save(str(saved))
    inputs = tmp_path / "inputs.json"
    inputs.write_text("[]")
    return [
        [model, "--onnxrt", "--onnx-ref"],
        [model, "--onnxrt", "--onnx-outputs", "mark", "all", "--load-inputs", inputs, "--load-outputs", saved,
         "--validate", "--postprocess", "top-1", "--fail-fast", "--check-average"],
        [model, "--onnxrt", "--onnx-ref", "--compare", "simple", "indices", "l2", "cosine_similarity",
         "distance_metrics", "psnr", "snr", "quality_metrics", "--atol", "1e-3", "--check-error-stat", "max"],
        [model, "--onnxrt", "--onnx-ref", "--show-heatmaps", "--show-error-metrics-plot", "--save-heatmaps",
         tmp_path / "maps"],
        [model, "--onnxrt", "--onnx-ref", "--compare-func-script", compare],
        [model, "--onnxrt", "--input-shapes", "x:[1,3,32,32]", "--seed", "1", "--val-range", "[0,1]",
         "--save-onnx", tmp_path / "saved.onnx"],
        [model, "--trt", "--onnxrt", "--fp16", "--layer-precisions", "x:float16", "--trt-network-postprocess-script",
         network, "--trt-min-shapes", "x:[1,3,32,32]", "--trt-opt-shapes", "x:[1,3,32,32]",
         "--trt-max-shapes", "x:[2,3,32,32]", "--save-engine", tmp_path / "m.engine"],
        [f"{network}:load_network", "--model-type", "trt-network-script", "--trt"],
        ["--load-outputs", saved, saved],
    ]


def test_generated_scripts_import_only_public_paths(poly, tmp_path):
    from poly.cli import main

    model = pathlib.Path(main.__file__).parent / "examples" / "example_cnn.onnx"
    seen = set()
    for flags in _script_flag_sets(tmp_path, model):
        result = poly("run", *flags, "--gen-script", "-")
        assert result.exit_code == 0, (flags, result.output)
        tree = ast.parse(result.output)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert _is_public(node.module), f"{node.module} is not a public path: {flags}"
                module = importlib.import_module(node.module)
                for alias in node.names:
                    assert hasattr(module, alias.name), f"{node.module} has no {alias.name}"
                    seen.add(f"{node.module}:{alias.name}")
            elif isinstance(node, ast.Import):
                assert all(not alias.name.startswith("poly") for alias in node.names), flags
    # the flag sets reach the names that once came from internal paths
    assert {"poly.backend.common:InvokeFromScript", "poly.compare:resolve_display", "poly.trt:trt",
            "poly.compare:RunResults", "poly.compare:CompareFunc"} <= seen


# ---- help order ---------------------------------------------------------------------------------

_HELP_ORDER = ["--save-outputs", "--load-outputs", "--atol", "--rtol", "--check-error-stat", "--error-quantile",
               "--infinities-compare-equal", "--no-shape-check", "--compare", "--index-tolerance", "--l2-threshold",
               "--cosine-similarity-threshold", "--psnr-threshold", "--snr-threshold", "--lpips-threshold",
               "--fail-fast", "--check-average", "--save-heatmaps", "--save-error-metrics-plot", "--show-heatmaps",
               "--show-error-metrics-plot", "--compare-func-script", "--validate"]
"""The comparison flags in the order `poly run --help` listed them before they were derived."""


def _help_flags(decorator):
    @click.command()
    @decorator
    def command(**kwargs):
        pass

    return [line.split()[0].rstrip(",") for line in CliRunner().invoke(command, ["--help"]).output.splitlines()
            if line.startswith("  --") and not line.startswith("  --help")]


def test_the_comparison_flags_keep_their_help_order():
    assert _help_flags(ComparisonArgs.options()) == _HELP_ORDER
    assert _help_flags(ComparisonArgs.tolerance_options()) == _HELP_ORDER[2:8]


def test_every_declared_flag_has_a_place_in_the_help_order():
    listed = [*_VERDICT_FLAGS, *_FAIL_FAST_FLAG, *_PLOT_FLAGS]
    declared = [d.name for d in SimpleCompareOptions.declarations() if d.flag is not None]
    assert sorted(listed) == sorted(declared) and len(set(listed)) == len(listed)
    assert set(_VERDICT_FLAGS) == {d.name for d in SimpleCompareOptions.declarations() if d.decides_verdict}
