"""Polygraphy's TensorRT builder, network and runtime flags (--tactic-sources, --version-compatible,
--layer-precisions, --tensor-formats, --plugins, --load-runtime, --weight-streaming-budget...):
each reaches the builder config, the parsed network or the runner; what the installed flavour
lacks ends in one line naming full TensorRT; bad values are usage errors naming the flag; and
``--help`` lists each flag with its group, as Polygraphy does."""

from __future__ import annotations

import shutil
import subprocess

import click
import pytest
from fixtures.cli_helpers import POLY, error_lines, run_cli, run_poly

from poly.cli.args.trt.config import TrtConfigArgs
from poly.cli.args.trt.network import TrtNetworkArgs, strongly_typed_option
from poly.cli.args.trt.runtime import ALLOCATION_STRATEGY_CHOICES, TrtRuntimeArgs
from poly.cli.multi_option import stack_options


@pytest.fixture(scope="module")
def trt_mod():
    try:
        from poly.trt.tensorrt_module import trt

        return trt.load()
    except Exception as err:
        pytest.skip(f"no TensorRT flavour is installed ({err}); the dev group installs TensorRT-RTX on Linux x86_64")


def parse(group, *args, options=None):
    """The group's typed value for ``args``, as a command with only its options parses them."""

    @click.command()
    @(options or group.options())
    def command(**kwargs):
        return group.from_kwargs(kwargs)

    return command.main([str(arg) for arg in args], standalone_mode=False)


def network_args(*args, tensor_formats=False):
    options = stack_options([TrtNetworkArgs.options(tensor_formats=tensor_formats), strongly_typed_option()])
    return parse(TrtNetworkArgs, *args, options=options)


# ---- builder config ------------------------------------------------------------------------------


def test_builder_flags_reach_the_builder_config(trt_mod, models):
    from poly.trt import NetworkFromOnnxPath, is_rtx

    config_args = parse(TrtConfigArgs, "--sparse-weights", "--version-compatible", "--exclude-lean-runtime",
                        "--error-on-timing-cache-miss", "--disable-compilation-cache", "--refittable", "--strip-plan",
                        "--weight-streaming", "--tactic-sources", "JIT_convolutions", "--preview-features",
                        "runtime_activation_resize_10_10", "--max-aux-streams", "2", "--runtime-platform",
                        "same_as_build", "--tiling-optimization-level", "fast", "--hardware-compatibility-level",
                        "ampere_plus", "--allow-gpu-fallback")
    loader = config_args.create_config()
    assert loader.tactic_sources == ["JIT_CONVOLUTIONS"]
    assert loader.hardware_compatibility_level == "AMPERE_PLUS"
    builder, network, _ = NetworkFromOnnxPath(models["multi"])()
    config = loader(builder, network)
    flag = trt_mod.BuilderFlag
    for name in ("SPARSE_WEIGHTS", "VERSION_COMPATIBLE", "EXCLUDE_LEAN_RUNTIME", "ERROR_ON_TIMING_CACHE_MISS",
                 "DISABLE_COMPILATION_CACHE", "REFIT", "STRIP_PLAN", "WEIGHT_STREAMING", "GPU_FALLBACK"):
        assert config.get_flag(getattr(flag, name)), name
    assert not config.get_flag(flag.TF32) and not config.get_flag(flag.DIRECT_IO)
    assert config.get_tactic_sources() == 1 << int(trt_mod.TacticSource.JIT_CONVOLUTIONS)
    assert config.get_preview_feature(trt_mod.PreviewFeature.RUNTIME_ACTIVATION_RESIZE_10_10)
    assert config.max_aux_streams == 2
    assert config.runtime_platform == trt_mod.RuntimePlatform.SAME_AS_BUILD
    assert config.tiling_optimization_level == trt_mod.TilingOptimizationLevel.FAST
    if not is_rtx():  # TensorRT-RTX accepts the level but ignores it ("unsupported in TensorRT-RTX")
        assert config.hardware_compatibility_level == trt_mod.HardwareCompatibilityLevel.AMPERE_PLUS


def test_flags_given_alone_disable_all_and_absent_flags_keep_defaults(trt_mod, models):
    from poly.trt import NetworkFromOnnxPath

    builder, network, _ = NetworkFromOnnxPath(models["multi"])()
    default = parse(TrtConfigArgs).create_config()(builder, network).get_tactic_sources()
    assert default != 0
    loader = parse(TrtConfigArgs, "--tactic-sources", "--preview-features", "--quantization-flags").create_config()
    assert (loader.tactic_sources, loader.preview_features, loader.quantization_flags) == ([], [], [])
    assert loader.use_dla is False
    loader.quantization_flags = None  # the flavour may lack quantization flags: see the next tests
    config = loader(builder, network)
    assert config.get_tactic_sources() == 0
    assert not any(config.get_preview_feature(getattr(trt_mod.PreviewFeature, name))
                   for name in dir(trt_mod.PreviewFeature) if name.isupper())
    untouched = parse(TrtConfigArgs).create_config()
    assert (untouched.tactic_sources, untouched.preview_features, untouched.quantization_flags) == (None, None, None)


def test_convert_builds_an_engine_with_the_builder_flags(trt_mod, models, tmp_path):
    engine = tmp_path / "flags.engine"
    proc = run_poly("convert", models["multi"], "-o", engine, "--sparse-weights", "--refittable", "--strip-plan",
                   "--version-compatible", "--exclude-lean-runtime", "--error-on-timing-cache-miss",
                   "--disable-compilation-cache", "--tactic-sources", "--preview-features", "--max-aux-streams", "1",
                   "--weight-streaming", "--tiling-optimization-level", "fast", "--runtime-platform",
                   "same_as_build", "--mark-debug", "r", "--mark-unfused-tensors-as-debug-tensors",
                   "--onnx-flags", "native_instancenorm", "--tensor-formats", "x:[linear]", "--direct-io")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert engine.stat().st_size > 1000


@pytest.mark.parametrize("args, feature", [
    (["--use-dla"], "use_dla (DLA)"),
    (["--use-dla", "--allow-gpu-fallback"], "use_dla (DLA)"),
    (["--quantization-flags", "calibrate_before_fusion"], "quantization_flags"),
])
def test_features_the_flavour_lacks_fail_in_one_line(trt_mod, models, tmp_path, args, feature):
    from poly.trt import is_rtx

    if not is_rtx():
        pytest.skip("full TensorRT has DLA and quantization flags (tests/trt tests the calls on the double)")
    proc = run_poly("convert", models["multi"], "-o", tmp_path / "x.engine", *args)
    assert proc.returncode == 1
    lines = error_lines(proc)
    assert len(lines) == 1 and feature in lines[0] and "full TensorRT" in lines[0], lines
    assert not (tmp_path / "x.engine").exists()


def test_debug_build_builds_with_the_new_flags(trt_mod, models, tmp_path):
    import sys

    check = "import os, sys; sys.exit(0 if os.path.getsize('polygraphy_debug.engine') > 1000 else 1)"
    proc = run_poly("debug", "build", models["multi"], "--until", "1", "--tactic-sources", "jit_convolutions",
                   "--refittable", "--mark-debug", "r", "--check", sys.executable, "-c", check, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Passed: 1/1" in proc.stdout + proc.stderr


# ---- network -------------------------------------------------------------------------------------


def test_network_flags_reach_the_parsed_network(trt_mod, models):
    from poly.trt import MarkDebug
    from poly.trt.networks.network_postprocess import all_tensors

    args = network_args("--onnx-flags", "native_instancenorm", "--tensor-formats", "x:[linear,CHW4]", "sum:[hwc8]",
                        "--mark-debug", "r", "s", "--mark-unfused-tensors-as-debug-tensors", tensor_formats=True)
    loader = args.load_network(models["multi"])
    assert isinstance(loader, MarkDebug) and loader.mark_debug == ["r", "s"]
    _, network, parser = loader()
    fmt = trt_mod.TensorFormat
    tensors = all_tensors(network)
    assert tensors["x"].allowed_formats == (1 << int(fmt.LINEAR)) | (1 << int(fmt.CHW4))
    assert tensors["sum"].allowed_formats == 1 << int(fmt.HWC8)
    assert [name for name, tensor in tensors.items() if network.is_debug_tensor(tensor)] == ["r", "s"]
    assert parser.get_flag(trt_mod.OnnxParserFlag.NATIVE_INSTANCENORM)
    assert args.edits.parser_kwargs() == {"flags": ["NATIVE_INSTANCENORM"],
                                          "mark_unfused_tensors_as_debug_tensors": True}


def test_plugin_instancenorm_clears_the_native_flag(trt_mod, models):
    _, _, parser = network_args("--plugin-instancenorm").load_network(models["multi"])()
    assert not parser.get_flag(trt_mod.OnnxParserFlag.NATIVE_INSTANCENORM)
    _, _, parser = network_args().load_network(models["multi"])()
    assert parser.get_flag(trt_mod.OnnxParserFlag.NATIVE_INSTANCENORM)  # on by default since TensorRT 10


def test_layer_precisions_and_tensor_dtypes_become_their_loaders(trt_mod, models):
    from poly.trt import SetLayerPrecisions, SetTensorDatatypes

    args = network_args("--layer-precisions", "relu:float16", "add:float32", "--tensor-datatypes", "x:float16")
    assert args.edits.layer_precisions == {"relu": "float16", "add": "float32"}
    loader = args.load_network(models["multi"])
    assert isinstance(loader, SetTensorDatatypes) and loader.tensor_datatypes == {"x": trt_mod.float16}
    precisions = network_args("--layer-precisions", "relu:float16", "add:float32").load_network(models["multi"])
    assert isinstance(precisions, SetLayerPrecisions)
    assert precisions.layer_precisions == {"relu": trt_mod.float16, "add": trt_mod.float32}


def test_layer_precisions_and_tensor_dtypes_on_the_installed_flavour(trt_mod, models, tmp_path):
    from poly.trt import NetworkFromOnnxPath, is_rtx

    if not is_rtx():
        _, network, _ = network_args("--layer-precisions", "relu:float16",
                                     "--tensor-dtypes", "x:float16").load_network(models["multi"])()
        relu = next(network.get_layer(i) for i in range(network.num_layers) if network.get_layer(i).name == "relu")
        assert relu.precision == trt_mod.float16 and network.get_input(0).dtype == trt_mod.float16
        return
    _, network, _ = NetworkFromOnnxPath(models["multi"])()
    relu = [network.get_layer(i).name for i in range(network.num_layers)]
    for args, needle in [(["--layer-precisions", f"{relu[0]}:float16", "--precision-constraints", "prefer"],
                          "Per-layer precisions are not available in TensorRT-RTX"),
                         (["--tensor-dtypes", "x:float16"], "cannot change the data type of tensor x")]:
        proc = run_poly("convert", models["multi"], "-o", tmp_path / "x.engine", *args)
        assert proc.returncode == 1
        lines = error_lines(proc)
        assert len(lines) == 1 and needle in lines[0] and "full TensorRT" in lines[0], lines


def test_plugins_are_loaded_before_the_network_is_parsed(trt_mod, models, tmp_path):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler on this machine to build a plugin library")
    marker = tmp_path / "loaded.txt"
    source = tmp_path / "plugin.c"
    source.write_text('#include <stdio.h>\n__attribute__((constructor)) static void on_load(void) {\n'
                      f'  FILE *f = fopen("{marker}", "w"); if (f) {{ fputs("loaded", f); fclose(f); }}\n}}\n')
    library = tmp_path / "libplugin.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", library, source], check=True, timeout=60)
    engine = tmp_path / "x.engine"
    # real processes: a library loads once a process, and its constructor writes the marker then
    proc = run_cli(POLY, "convert", models["multi"], "-o", engine, "--plugins", library)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert marker.read_text() == "loaded" and engine.exists()
    assert f"Loading plugin library: {library}" in proc.stdout + proc.stderr
    marker.unlink()  # an engine MODEL: the libraries load before the engine file is read
    proc = run_cli(POLY, "run", engine, "--trt", "--plugins", library)
    assert marker.read_text() == "loaded", proc.stdout + proc.stderr


# ---- runtime -------------------------------------------------------------------------------------


def test_runtime_flags_configure_the_trt_runner(tmp_path):
    from poly.trt import ALLOCATION_STRATEGIES, EngineFromBytes, LoadRuntime, TrtRunner

    assert ALLOCATION_STRATEGY_CHOICES == ALLOCATION_STRATEGIES
    lean = tmp_path / "libnvinfer_lean.so"
    lean.write_bytes(b"")
    runtime = parse(TrtRuntimeArgs, "--load-runtime", lean, "--optimization-profile", "1",
                    "--allocation-strategy", "runtime", "--weight-streaming-budget", "50%")
    runner = runtime.create_runner(b"engine bytes")
    assert isinstance(runner, TrtRunner)
    assert (runner.optimization_profile, runner.allocation_strategy) == (1, "runtime")
    assert (runner.weight_streaming_budget, runner.weight_streaming_percent) == (None, 50.0)
    engine = runtime.load_engine(b"engine bytes")
    assert isinstance(engine, EngineFromBytes) and isinstance(engine.runtime, LoadRuntime)
    assert engine.runtime.path == str(lean)
    assert parse(TrtRuntimeArgs).load_engine(b"").runtime is None
    for value, expected in [("1G", (1 << 30, None)), ("-1", (-1, None)), ("-2", (-2, None)), ("0%", (None, 0.0))]:
        parsed = parse(TrtRuntimeArgs, "--weight-streaming-budget", value)
        assert (parsed.weight_streaming_budget, parsed.weight_streaming_percent) == expected, value


def test_run_passes_the_runtime_flags_to_its_trt_runner(trt_mod, models):
    from poly.cli.args.model import ModelArgs
    from poly.cli.args.onnx.load import OnnxLoadArgs
    from poly.cli.args.onnx.onnxrt import OnnxrtArgs
    from poly.cli.args.runners import RunnerArgs

    runner_args = parse(RunnerArgs, "--trt", options=RunnerArgs.trt_options())
    runtime = TrtRuntimeArgs(optimization_profile=0, allocation_strategy="profile", weight_streaming_budget=-1)
    (runner,) = runner_args.create_runners(ModelArgs(models["multi"]), OnnxLoadArgs(), OnnxrtArgs(),
                                           TrtNetworkArgs(), parse(TrtConfigArgs), trt_runtime=runtime)
    assert (runner.optimization_profile, runner.allocation_strategy, runner.weight_streaming_budget) == (
        0, "profile", -1)


# ---- bad values ----------------------------------------------------------------------------------


@pytest.mark.parametrize("args, flag", [
    (["--tactic-sources", "cudnn_please"], "--tactic-sources"),
    (["--preview-features", "time_travel"], "--preview-features"),
    (["--hardware-compatibility-level", "everything"], "--hardware-compatibility-level"),
    (["--runtime-platform", "amiga"], "--runtime-platform"),
    (["--tiling-optimization-level", "max"], "--tiling-optimization-level"),
    (["--max-aux-streams", "-1"], "--max-aux-streams"),
    (["--exclude-lean-runtime"], "--exclude-lean-runtime"),
    (["--layer-precisions", "relu:float99"], "--layer-precisions"),
    (["--layer-precisions", "relu"], "--layer-precisions"),
    (["--tensor-dtypes", "x:half-ish"], "--tensor-dtypes"),
    (["--tensor-datatypes", "x:float99"], "--tensor-dtypes"),
    (["--tensor-formats", "x:[hwc99]"], "--tensor-formats"),
    (["--tensor-formats", "x:linear"], "--tensor-formats"),
    (["--onnx-flags", "parse_faster"], "--onnx-flags"),
    (["--plugins", "no_such_plugin.so"], "--plugins"),
])
def test_bad_values_are_one_line_usage_errors_naming_the_flag(trt_mod, poly, models, tmp_path, args, flag):
    result = poly("convert", models["multi"], "-o", tmp_path / "x.engine", *args)
    assert result.exit_code == 2, result.output
    lines = error_lines(result)
    assert len(lines) == 1 and lines[0].startswith("[!] Error: ") and flag in lines[0], lines
    assert not (tmp_path / "x.engine").exists()


@pytest.mark.parametrize("args", [["--weight-streaming-budget", "150%"], ["--weight-streaming-budget", "-3"],
                                  ["--weight-streaming-budget", "lots"], ["--load-runtime", "no_such_runtime.so"],
                                  ["--optimization-profile", "-1"], ["--allocation-strategy", "lazy"]])
def test_bad_runtime_values_are_usage_errors_naming_the_flag(poly, models, args):
    result = poly("run", models["multi"], "--onnxrt", *args)
    assert result.exit_code == 2, result.output
    lines = error_lines(result)
    assert len(lines) == 1 and args[0] in lines[0], lines


# ---- --help --------------------------------------------------------------------------------------


def _help_flags(*command):
    proc = run_poly(*command, "--help")
    assert proc.returncode == 0, proc.stderr
    return [line.split()[0].rstrip(",") for line in proc.stdout.splitlines() if line.startswith("  --")]


CONFIG_FLAGS = ["--sparse-weights", "--version-compatible", "--exclude-lean-runtime", "--error-on-timing-cache-miss",
                "--disable-compilation-cache", "--tactic-sources", "--refittable", "--strip-plan", "--use-dla",
                "--allow-gpu-fallback", "--preview-features", "--hardware-compatibility-level", "--max-aux-streams",
                "--quantization-flags", "--weight-streaming", "--runtime-platform", "--tiling-optimization-level"]
PARSER_FLAGS = ["--plugins", "--onnx-flags", "--plugin-instancenorm"]
NETWORK_FLAGS = ["--layer-precisions", "--tensor-dtypes", "--mark-debug", "--mark-unfused-tensors-as-debug-tensors"]
RUNTIME_FLAGS = ["--load-runtime", "--optimization-profile", "--allocation-strategy", "--weight-streaming-budget"]


@pytest.mark.parametrize("command", [("run",), ("convert",), ("debug", "build"), ("debug", "precision")])
def test_help_groups_the_flags_as_polygraphy_does(command):
    flags = _help_flags(*command)
    for group in (CONFIG_FLAGS, PARSER_FLAGS):
        positions = [flags.index(flag) for flag in group]
        assert positions == list(range(positions[0], positions[0] + len(group))), (command, group)
    # each block sits in its Polygraphy group: the builder flags after the other builder config flags,
    # the plugin and parser flags just before the network loading flags, which they precede
    assert flags.index("--sparse-weights") == flags.index("--load-tactics") + 1
    assert flags.index("--trt-outputs") == flags.index("--plugin-instancenorm") + 1
    assert flags.index("--layer-precisions") == flags.index("--trt-exclude-outputs") + 1
    network = [flags.index(flag) for flag in NETWORK_FLAGS]
    assert network == sorted(network) and network[-1] - network[0] <= len(NETWORK_FLAGS)
    formats = {"--tensor-formats", "--direct-io"} <= set(flags)
    assert formats == (command == ("convert",))
    if command == ("run",):
        runtime = [flags.index(flag) for flag in RUNTIME_FLAGS]
        assert runtime == list(range(runtime[0], runtime[0] + len(RUNTIME_FLAGS))) and runtime[0] > network[-1]
    else:
        assert not set(RUNTIME_FLAGS) & set(flags)
