"""The option groups of poly.cli.args used directly: flags parsed into each group's typed value,
the poly loaders built from it, usage errors naming the flag; and the layout rules of poly.cli
(lazy subcommands that resolve, no import cycles, no private imports)."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import click
import numpy as np
import pytest

from poly.cli.args.comparison import ComparisonArgs
from poly.cli.args.data.data_loader import DataLoaderArgs
from poly.cli.args.debug.debugger import DebugCommand, DebuggerArgs
from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.load import OnnxLoadArgs
from poly.cli.args.onnx.onnxrt import OnnxrtArgs
from poly.cli.args.onnx.save import OnnxSaveArgs
from poly.cli.args.runners import RunnerArgs
from poly.cli.args.trt.config import TrtConfigArgs
from poly.cli.args.trt.network import TrtNetworkArgs, strongly_typed_option
from poly.cli.multi_option import stack_options

CLI_ROOT = Path(importlib.import_module("poly.cli").__file__).parent


def parse(group, *args, options=None, command_class=click.Command, **from_kwargs):
    """Parses ``args`` as a command with only ``group``'s options would, and returns the group's
    typed value (click errors are raised, not printed)."""

    @click.command(cls=command_class)
    @(options or group.options())
    def command(**kwargs):
        return group.from_kwargs(kwargs, **from_kwargs)

    return command.main([str(arg) for arg in args], standalone_mode=False)


# ---- TensorRT config -------------------------------------------------------------------------------


def test_trt_config_flags_become_create_config_arguments(tmp_path):
    from poly.trt import CreateConfig

    config = parse(TrtConfigArgs, "--tf32", "--precision-constraints", "prefer",
                   "--trt-min-shapes", "x:[1,3]", "y:[1]", "--trt-opt-shapes", "x:[2,3]", "y:[2]",
                   "--trt-max-shapes", "x:[4,3]", "y:[3]",
                   "--trt-min-shapes", "x:[8,3]", "--trt-opt-shapes", "x:[8,3]", "--trt-max-shapes", "x:[16,3]",
                   "--pool-limit", "workspace:1G", "tactic_shared_memory:64K", "--builder-optimization-level", "2",
                   "--profiling-verbosity", "detailed", "--calib-base-cls", "IInt8MinMaxCalibrator",
                   "--load-timing-cache", tmp_path / "t.cache", "--save-timing-cache", tmp_path / "u.cache")
    assert isinstance(config, TrtConfigArgs)
    assert config.tf32 and not (config.fp16 or config.int8)
    assert config.pool_limits == {"workspace": 1 << 30, "tactic_shared_memory": 64 << 10}
    assert config.calibration_algo == "minmax"
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.fp16 = True

    loader = config.create_config()
    assert isinstance(loader, CreateConfig)
    assert loader.bool_flags["tf32"] is True and loader.bool_flags["fp16"] is None
    assert [{name: tuple(shapes) for name, shapes in profile.items()} for profile in loader.profiles] == [
        {"x": ((1, 3), (2, 3), (4, 3)), "y": ((1,), (2,), (3,))},
        {"x": ((8, 3), (8, 3), (16, 3))},
    ]
    assert loader.memory_pool_limits == {"workspace": 1 << 30, "tactic_shared_memory": 64 << 10}
    assert (loader.builder_optimization_level, loader.profiling_verbosity) == (2, "detailed")
    assert loader.precision_constraints == "prefer"
    assert loader.load_timing_cache == str(tmp_path / "t.cache")
    assert loader.calibrator is None and loader.algorithm_selector is None
    assert config.with_precision_constraints("obey").precision_constraints == "prefer"


def test_trt_config_defaults_leave_create_config_defaults():
    loader = parse(TrtConfigArgs).create_config()
    assert set(loader.bool_flags.values()) == {None}
    assert loader.profiles == [] and loader.memory_pool_limits == {}
    assert loader.precision_constraints is None and loader.builder_optimization_level is None
    assert parse(TrtConfigArgs).with_precision_constraints("obey").precision_constraints == "obey"


@pytest.mark.parametrize("args, error, needle", [
    (["--pool-limit", "workspace:huge"], click.BadParameter, "'huge' is not a number of bytes"),
    (["--pool-limit", "workspace"], click.BadParameter, "expected POOL:SIZE"),
    (["--trt-min-shapes", "x:[1]", "--trt-opt-shapes", "x:[1]"], click.UsageError, "--trt-max-shapes"),
    (["--trt-min-shapes", "x:[2]", "--trt-opt-shapes", "x:[1]", "--trt-max-shapes", "x:[3]"], click.UsageError,
     "min <= opt <= max"),
    (["--trt-min-shapes", "x:[1", "--trt-opt-shapes", "x:[1]", "--trt-max-shapes", "x:[1]"], click.BadParameter,
     "--trt-min-shapes"),
])
def test_bad_trt_config_values_are_usage_errors(args, error, needle):
    with pytest.raises(error) as caught:
        parse(TrtConfigArgs, *args)
    text = caught.value.format_message() + str(getattr(caught.value, "param_hint", ""))
    assert needle in text


def test_conflicting_tactic_flags_fail_when_the_config_is_created(tmp_path):
    replay = tmp_path / "replay.json"
    replay.write_text("{}")
    config = parse(TrtConfigArgs, "--save-tactics", tmp_path / "new.json", "--load-tactics", replay)
    with pytest.raises(click.UsageError, match="--save-tactics and --load-tactics cannot be used together"):
        config.create_config()


def test_bad_flag_value_is_a_one_line_usage_error(poly, models, tmp_path):
    for args, flag in [(["--pool-limit", "workspace:huge"], "--pool-limit"),
                       (["--builder-optimization-level", "9"], "--builder-optimization-level")]:
        result = poly("convert", models["identity"], "-o", tmp_path / "x.engine", *args)
        assert result.exit_code == 2, result.output
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("[!] Error: ") and flag in lines[0], result.stderr
        assert "Traceback" not in result.output
        assert not (tmp_path / "x.engine").exists()


# ---- TensorRT network, ONNX loading and saving, ONNX-Runtime ----------------------------------------


def test_trt_network_flags_become_network_loaders(models):
    from poly.core import MARK_ALL
    from poly.trt import ModifyNetworkOutputs, NetworkFromOnnxPath

    options = stack_options([TrtNetworkArgs.options(), strongly_typed_option()])
    plain = parse(TrtNetworkArgs, "--strongly-typed", options=options).load_network(models["identity"])
    assert isinstance(plain, NetworkFromOnnxPath)
    assert plain.path == models["identity"] and plain.strongly_typed

    network = parse(TrtNetworkArgs, "--trt-outputs", "mark", "all", "--trt-exclude-outputs", "y", options=options)
    assert (network.outputs, network.exclude_outputs, network.strongly_typed) == (MARK_ALL, ("y",), False)
    loader = network.load_network(models["identity"])
    assert isinstance(loader, ModifyNetworkOutputs)
    assert loader.outputs == MARK_ALL and loader.exclude_outputs == ["y"]


def test_onnx_load_flags_become_onnx_loaders(models):
    from poly.core import MARK_ALL
    from poly.onnx import ModifyOutputs

    options = OnnxLoadArgs.options(shape_inference=True)
    assert parse(OnnxLoadArgs, options=options).load_onnx(models["multi"]) == models["multi"]
    onnx = parse(OnnxLoadArgs, "--onnx-outputs", "mark", "all", "--shape-inference", options=options)
    assert onnx.outputs == MARK_ALL and onnx.shape_inference
    model = onnx.load_onnx(models["multi"])
    assert isinstance(model, ModifyOutputs)
    assert {output.name for output in model().graph.output} == {"r", "s", "sum"}
    named = parse(OnnxLoadArgs, "--onnx-outputs", "r", options=options)
    assert named.outputs == ("r",)
    assert [output.name for output in named.load_onnx(models["multi"])().graph.output] == ["r"]


def test_onnx_save_flags_become_save_onnx(models, tmp_path):
    from poly.onnx import OnnxFromPath, SaveOnnx

    save = parse(OnnxSaveArgs, "--save-external-data", "--external-data-size-threshold", "0")
    assert save == OnnxSaveArgs(external_data_path="", size_threshold=0, all_tensors_to_one_file=None)
    out = tmp_path / "saved.onnx"
    saver = save.save_onnx(OnnxFromPath(models["mlp"]), str(out))
    assert isinstance(saver, SaveOnnx) and not out.exists()
    saver()
    assert out.exists() and (tmp_path / "saved.onnx.data").exists()


def test_onnxrt_providers():
    from poly.onnx import SessionFromOnnx

    onnxrt = parse(OnnxrtArgs, "--providers", "cpu")
    assert onnxrt.providers == ("cpu",) and onnxrt.cpu_only
    assert isinstance(onnxrt.create_session("model.onnx"), SessionFromOnnx)
    assert not parse(OnnxrtArgs, "--providers", "cuda", "cpu").cpu_only


# ---- model, runners, data, comparison ---------------------------------------------------------------


def test_model_args(models, tmp_path):
    from poly.cli.args.model import example_model_path

    options = ModelArgs.options(required=False, example=True, model_type=True)
    assert parse(ModelArgs, "--example", options=options) == ModelArgs(example_model_path(), None)
    assert parse(ModelArgs, options=options, required=False) == ModelArgs(None, None)
    with pytest.raises(click.UsageError, match="Missing argument 'MODEL'"):
        parse(ModelArgs, options=options)
    assert not parse(ModelArgs, models["identity"], options=options).is_engine
    assert parse(ModelArgs, models["identity"], "--model-type", "engine", options=options).is_engine
    engine = tmp_path / "model.plan"
    engine.write_bytes(b"")
    assert parse(ModelArgs, engine, options=options).is_engine
    with pytest.raises(click.BadParameter) as caught:
        parse(ModelArgs, tmp_path / "missing.onnx", options=options)
    assert caught.value.param_hint == "'MODEL'"


def test_runners_keep_command_line_order_and_build_runners(models, tmp_path):
    from poly.onnx import OnnxRefRunner, OnnxrtRunner

    options = stack_options([RunnerArgs.options(), RunnerArgs.trt_options()])
    assert parse(RunnerArgs, "--trt", "--onnx-ref", "--onnxrt", options=options).names == ("trt", "onnx_ref", "onnxrt")
    runners = parse(RunnerArgs, "--onnx-ref", "--onnxrt", options=options)
    model = ModelArgs(models["identity"])
    built = runners.create_runners(model, OnnxLoadArgs(), OnnxrtArgs(), TrtNetworkArgs(), None)
    assert [type(runner) for runner in built] == [OnnxRefRunner, OnnxrtRunner]
    with built[1] as runner:
        assert list(runner.infer({"x": np.ones((1, 1, 2, 2), np.float32)})) == ["y"]

    engine = ModelArgs(str(tmp_path / "model.engine"))
    with pytest.raises(click.UsageError, match=r"only --trt can run it \(not --onnx_ref\)"):
        runners.check_engine_model(engine)
    with pytest.raises(click.UsageError, match=r"only --trt can run it$"):
        runners.check_engine_model(engine, name_other=False)


def test_data_loader_args_build_the_data_loader(tmp_path):
    from poly.compare import DataLoader, DataLoaderFromScript

    data = parse(DataLoaderArgs, "--input-shapes", "X:[2,1,3,3]", "--seed", "7", "--iterations", "2",
                 "--val-range", "[0,1]", "X:[5,6]", "--save-inputs", tmp_path / "in.json")
    assert data.input_shapes == {"X": [2, 1, 3, 3]} and data.val_range == {"": (0, 1), "X": (5, 6)}
    assert data.save_inputs == str(tmp_path / "in.json")
    loader = data.create_data_loader()
    assert isinstance(loader, DataLoader)
    assert (loader.seed, loader.iterations, loader.val_range) == (7, 2, {"": (0, 1), "X": (5, 6)})
    assert tuple(loader.user_input_metadata["X"].shape) == (2, 1, 3, 3)

    script = tmp_path / "data.py"
    script.write_text("def feeds():\n    yield {}\n")
    scripted = parse(DataLoaderArgs, "--data-loader-script", script, "--data-loader-func-name", "feeds")
    assert scripted.script == f"{script}:feeds"
    assert isinstance(scripted.create_data_loader(), DataLoaderFromScript)
    with pytest.raises(click.BadParameter, match="MIN is larger than MAX"):
        parse(DataLoaderArgs, "--val-range", "[2,1]")


def test_comparison_args_build_the_compare_funcs():
    from poly.compare import L2CompareFunc, SimpleCompareFunc

    comparison = parse(ComparisonArgs, "--atol", "1e-3", "y:1e-2", "--rtol", "0.5", "--check-error-stat", "max",
                       "y:mean", "--compare", "simple", "l2", "--l2-threshold", "0.25", "--no-shape-check",
                       "--fail-fast")
    assert comparison.simple.atol == {"": 1e-3, "y": 1e-2} and comparison.simple.rtol == 0.5
    assert comparison.simple.check_error_stat == {"": "max", "y": "mean"}
    # flags not given stay None (the defaults are CompareFunc.simple's); --no-shape-check and --fail-fast set theirs
    assert comparison.simple.given() == {"check_shapes": False, "rtol": 0.5, "atol": {"": 1e-3, "y": 1e-2},
                                         "fail_fast": True, "check_error_stat": {"": "max", "y": "mean"}}
    assert (comparison.check_shapes, comparison.fail_fast) == (False, True)
    simple, l2 = comparison.create_compare_func()
    assert isinstance(simple, SimpleCompareFunc) and isinstance(l2, L2CompareFunc)
    assert (simple.atol, simple.rtol, simple.check_shapes, simple.fail_fast) == ({"": 1e-3, "y": 1e-2}, 0.5, False, True)
    assert comparison.tolerances() == {"atol": {"": 1e-3, "y": 1e-2}, "rtol": 0.5,
                                       "check_error_stat": {"": "max", "y": "mean"}, "error_quantile": None,
                                       "infinities_compare_equal": False, "check_shapes": False}
    assert isinstance(parse(ComparisonArgs).create_compare_func(), SimpleCompareFunc)
    with pytest.raises(click.BadParameter) as caught:
        parse(ComparisonArgs, "--check-error-stat", "worst")
    assert caught.value.param_hint == "'--check-error-stat'"
    # `poly validate` has only the tolerances; the other flags keep their defaults.
    tolerances = parse(ComparisonArgs, "--atol", "2", options=ComparisonArgs.tolerance_options())
    assert tolerances.simple.atol == 2 and tolerances.compare_funcs == () and tolerances.load_outputs == ()



def test_the_simple_comparisons_flags_are_made_from_its_declarations():
    from poly.compare import SimpleCompareOptions

    def flags(options):
        @click.command()
        @options
        def command(**kwargs):
            pass

        return {param.opts[0]: param for param in command.params}

    run_flags = flags(ComparisonArgs.options())
    declared = {d.flag: d for d in SimpleCompareOptions.declarations() if d.flag is not None}
    assert set(declared) <= set(run_flags) and len(declared) == 11
    assert run_flags["--atol"].help == "Absolute tolerance, optionally per output: `--atol 1e-5 out0:1e-3`."
    assert run_flags["--check-error-stat"].help == ("Error statistic to check (elemwise, max, mean, median, quantile), "
                                                   "optionally per output: `--check-error-stat max out0:mean`.")
    assert run_flags["--error-quantile"].help == "Error quantile to compare (0 to 1), optionally per output."
    assert run_flags["--no-shape-check"].help == "Disable checking that output shapes match exactly."
    assert run_flags["--show-heatmaps"].help == ("Show heatmaps of the absolute and relative error (needs matplotlib); "
                                                "with no display, they are saved to files and the log says where.")
    assert run_flags["--save-heatmaps"].type.file_okay is False and run_flags["--fail-fast"].is_flag
    # `poly validate` takes exactly the flags of the options that decide a verdict
    assert set(flags(ComparisonArgs.tolerance_options())) == {f for f, d in declared.items() if d.decides_verdict}
    with pytest.raises(click.BadParameter, match="'y:worst': choose from elemwise, max, mean, median, quantile"):
        parse(ComparisonArgs, "--check-error-stat", "y:worst")
    with pytest.raises(click.BadParameter, match="not a number"):
        parse(ComparisonArgs, "--error-quantile", "high")


# ---- debugger and logging ---------------------------------------------------------------------------


def test_debugger_args_build_the_iterative_debugger(tmp_path):
    from poly.debug import IterativeDebugger, Until

    options = DebuggerArgs.options(iter_artifact_default="polygraphy_debug.onnx", until_required=True)
    debugger = parse(DebuggerArgs, "--until", "3", "--fail-code", "1", "2", "--artifacts", "log.txt",
                     "--check", "python", "-c", "pass", options=options, command_class=DebugCommand)
    assert debugger.check == ("python", "-c", "pass") and debugger.fail_codes == (1, 2)
    assert debugger.artifacts == ("log.txt",) and debugger.iter_artifact == "polygraphy_debug.onnx"
    assert isinstance(debugger.until, Until)
    assert isinstance(debugger.create_debugger(), IterativeDebugger)
    with pytest.raises(click.UsageError, match="--fail-code and --ignore-fail-code"):
        parse(DebuggerArgs, "--until", "1", "--fail-code", "1", "--ignore-fail-code", "2", "--check", "true",
              options=options, command_class=DebugCommand)


def test_logging_args():
    from poly.core import G_LOGGER

    verbose = LoggingArgs().with_option("verbose", 1)
    assert verbose.severity == G_LOGGER.VERBOSE and verbose.traceback
    assert verbose.with_option("quiet", 2).severity == G_LOGGER.WARNING
    per_path = LoggingArgs().with_option("verbosity", ("WARNING", "backend/:VERBOSE"))
    assert per_path.severity == {"": G_LOGGER.WARNING, "backend/": G_LOGGER.VERBOSE} and per_path.traceback
    assert not LoggingArgs().with_option("verbosity", ("ERROR",)).traceback
    with pytest.raises(click.BadParameter):
        LoggingArgs().with_option("verbosity", ("LOUD",))
    LoggingArgs(severity=G_LOGGER.ERROR, log_format=("timestamp",)).apply()
    assert G_LOGGER.severity == G_LOGGER.ERROR and G_LOGGER.log_format == ["timestamp"]


# ---- layout -----------------------------------------------------------------------------------------


def test_lazy_subcommands_resolve():
    from poly.cli.commands.check.group import SUBCOMMANDS as CHECK
    from poly.cli.commands.data.group import SUBCOMMANDS as DATA
    from poly.cli.commands.debug.group import SUBCOMMANDS as DEBUG
    from poly.cli.commands.inspect.group import SUBCOMMANDS as INSPECT
    from poly.cli.commands.surgeon.group import SUBCOMMANDS as SURGEON
    from poly.cli.commands.template.group import SUBCOMMANDS as TEMPLATE
    from poly.cli.main import SUBCOMMANDS

    for table in (SUBCOMMANDS, INSPECT, SURGEON, DEBUG, TEMPLATE, CHECK, DATA):
        for target, _ in table.values():
            module, attribute = target.split(":")
            assert isinstance(getattr(importlib.import_module(module), attribute), click.Command), target


def test_data_loader_group_without_save_inputs():
    # `check lint` and `debug reduce` read inputs but save none: no --save-inputs flag there.
    data = parse(DataLoaderArgs, "--load-inputs", __file__, "--seed", "3",
                 options=DataLoaderArgs.options(save_inputs=False))
    assert data.load_inputs == (__file__,) and data.seed == 3 and data.save_inputs is None
    with pytest.raises(click.NoSuchOption):
        parse(DataLoaderArgs, "--save-inputs", "x.json", options=DataLoaderArgs.options(save_inputs=False))
