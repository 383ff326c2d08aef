"""TensorRT workflows from the command line, with the installed TensorRT flavour (TensorRT-RTX
builds engines without a GPU): --input-shapes as the optimization profile, the data loader
flags feeding the INT8 calibrator, network-script MODELs, network and config scripts."""

from __future__ import annotations

import textwrap

import pytest
from fixtures.cli_helpers import error_lines, require_tensorrt, run_poly
from fixtures.trt_double import tensorrt_double  # noqa: F401 (fixture)

from poly.core import cuda


@pytest.fixture(scope="module", autouse=True)
def _needs_tensorrt():
    require_tensorrt()


def _script(path, text):
    path.write_text(textwrap.dedent(text))
    return path


def _rtx():
    from poly.trt import is_rtx

    return is_rtx()


def _parsed(command, args):
    """The click parameters of a real command line of ``command``."""
    return command.make_context(command.name, [str(a) for a in args]).params


# --input-shapes as the optimization profile


@pytest.mark.parametrize("command", ["convert", "debug-build"])
def test_input_shapes_are_the_profile_without_trt_shapes(models, tmp_path, command):
    profile = "Optimization profile 0: {X (min=[2, 1, 4, 6], opt=[2, 1, 4, 6], max=[2, 1, 4, 6])}"
    if command == "convert":
        proc = run_poly("convert", models["dynamic"], "-o", tmp_path / "d.engine", "--input-shapes", "X:[2,1,4,6]",
                       "-v")
    else:
        proc = run_poly("debug", "build", models["dynamic"], "--until", "1", "--input-shapes", "X:[2,1,4,6]",
                       "-v", "--check", "true", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert profile in proc.stdout
    assert "no profile entry" not in proc.stdout + proc.stderr  # no dimension fell back to 1


def test_input_shapes_fill_inputs_the_trt_shapes_leave_out():
    from poly.cli.args.trt.config import TrtConfigArgs
    from poly.cli.commands.convert import convert

    kwargs = _parsed(convert, ["m.onnx", "-o", "m.engine", "--input-shapes", "a:[1,batch,3]", "b:[2,2]",
                               "--trt-min-shapes", "b:[1,2]", "--trt-opt-shapes", "b:[2,2]", "--trt-max-shapes", "b:[4,2]"])
    (profile,) = TrtConfigArgs.from_kwargs(kwargs).profiles
    assert tuple(profile["a"]) == ((1, 1, 3),) * 3  # a named dimension becomes 1
    assert tuple(profile["b"]) == ((1, 2), (2, 2), (4, 2))


def test_input_shapes_profile_is_built_into_the_config(models):
    from poly.cli.args.trt.config import TrtConfigArgs
    from poly.cli.commands.convert import convert
    from poly.trt import NetworkFromOnnxPath

    kwargs = _parsed(convert, [models["dynamic"], "-o", "d.engine", "--input-shapes", "X:[2,1,4,6]"])
    (profile,) = TrtConfigArgs.from_kwargs(kwargs).profiles
    builder, network, _parser = NetworkFromOnnxPath(models["dynamic"])()
    trt_profile = profile.to_trt(builder, network)
    assert [tuple(s) for s in trt_profile.get_shape("X")] == [(2, 1, 4, 6)] * 3


@pytest.mark.skipif(cuda.cuda_available(), reason="a GPU is present: the no-GPU path cannot be shown")
def test_run_builds_the_input_shapes_profile_then_stops_without_gpu(models, tmp_path):
    engine = tmp_path / "d.engine"
    proc = run_poly("run", models["dynamic"], "--trt", "--onnxrt", "--input-shapes", "X:[2,1,4,6]",
                   "--save-engine", engine, "-v")
    assert proc.returncode == 1
    assert "Optimization profile 0: {X (min=[2, 1, 4, 6], opt=[2, 1, 4, 6], max=[2, 1, 4, 6])}" in proc.stdout
    assert "TrtRunner needs an NVIDIA GPU" in proc.stderr  # -v adds its traceback
    assert engine.stat().st_size > 0


# INT8 calibration data


def test_int8_calibration_needs_full_tensorrt_in_one_line(models, tmp_path):
    if not _rtx():
        pytest.skip("full TensorRT calibrates")
    loader = _script(tmp_path / "data_loader.py", """
        import numpy as np

        def load_data():
            for _ in range(5):
                yield {"x": np.ones((1, 1, 2, 2), dtype=np.float32)}
        """)
    for command, check in ((["convert", models["identity"], "-o", tmp_path / "x.engine"], []),
                           (["debug", "build", models["identity"], "--until", "1"], ["--check", "true"])):
        proc = run_poly(*command, "--int8", "--data-loader-script", loader, "--calibration-cache",
                       tmp_path / "c.cache", *check, cwd=tmp_path)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        lines = error_lines(proc)
        assert len(lines) == 1 and "INT8 calibration is not available in TensorRT-RTX" in lines[0]
        assert "full TensorRT" in lines[0]
    assert not (tmp_path / "x.engine").exists()


@pytest.mark.parametrize("args, flag", [
    (["--data-loader-script", "missing.py"], "--data-loader-script"),
    (["--data-loader-script", "missing.py:calib_data"], "--data-loader-script"),
    (["--input-shapes", "X:[1.5,2]"], "--input-shapes"),
])
def test_bad_data_loader_flags_name_the_flag(models, tmp_path, args, flag):
    for command, check in ((["convert", models["identity"], "-o", tmp_path / "x.engine"], []),
                           (["debug", "precision", models["identity"]], ["--check", "true"])):
        proc = run_poly(*command, "--int8", *args, *check, cwd=tmp_path)
        assert proc.returncode == 2
        lines = error_lines(proc)
        assert len(lines) == 1 and flag in lines[0], lines


@pytest.mark.parametrize("command_name", ["convert", "debug-build", "debug-precision"])
def test_the_calibrator_gets_the_data_loader_scripts_batches(tmp_path, tensorrt_double, command_name):  # noqa: F811
    # Device addresses in the feed dicts go to TensorRT as they are: the batches TensorRT is handed
    # are exactly the script's data, in the order TensorRT names the inputs.
    from poly.cli.args.data.data_loader import DataLoaderArgs
    from poly.cli.args.trt.config import TrtConfigArgs
    from poly.cli.commands.convert import convert
    from poly.cli.commands.debug.build import build
    from poly.cli.commands.debug.precision import precision

    script = _script(tmp_path / "calib.py", """
        def calib_data():
            for step in range(3):
                yield {"x": 4096 * (step + 1), "y": 256 * (step + 1)}
        """)
    model = tmp_path / "m.onnx"
    model.write_bytes(b"")
    common = [model, "--int8", "--data-loader-script", f"{script}:calib_data", "--calibration-cache",
              tmp_path / "c.cache", "--calib-base-cls", "IInt8MinMaxCalibrator"]
    command, extra = {"convert": (convert, ["-o", tmp_path / "m.engine"]), "debug-build": (build, ["--until", "1"]),
                      "debug-precision": (precision, [])}[command_name]
    kwargs = _parsed(command, common + extra)
    data, config = DataLoaderArgs.from_kwargs(kwargs), TrtConfigArgs.from_kwargs(kwargs)
    calibrator = config.create_config(data.calibration_data(config.int8)).calibrator
    assert isinstance(calibrator, tensorrt_double.IInt8MinMaxCalibrator)
    batches = []
    while (batch := calibrator.get_batch(["y", "x"])) is not None:
        batches.append(batch)
    assert batches == [[256, 4096], [512, 8192], [768, 12288]]
    assert calibrator.read_calibration_cache() is None  # no cache yet: TensorRT calibrates
    calibrator.write_calibration_cache(b"TRT-1001-MinMaxCalibration\nx: 3c010a14\n")
    assert (tmp_path / "c.cache").read_bytes().startswith(b"TRT-1001")


# Network scripts


NETWORK_SCRIPT = """
    from poly import func
    from poly.trt import NetworkFromOnnxPath

    @func.extend(NetworkFromOnnxPath({model!r}))
    def load_network(builder, network, parser):
        out = network.get_output(0)
        network.unmark_output(out)
        extra = network.add_identity(out).get_output(0)
        extra.name = "appended"
        network.mark_output(extra)

    def other_network():
        builder, network, parser = NetworkFromOnnxPath({model!r})()
        network.name = "OtherNetwork"
        return builder, network, parser
    """


def test_network_script_model_is_built_and_inspected(models, tmp_path):
    script = _script(tmp_path / "define_network.py", NETWORK_SCRIPT.format(model=models["identity"]))
    engine = tmp_path / "n.engine"
    proc = run_poly("convert", script, "-o", engine)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 input(s), 1 output(s), 2 layer(s)" in proc.stdout and engine.stat().st_size > 0
    shown = run_poly("inspect", "model", script, "--show", "layers")
    assert shown.returncode == 0, shown.stderr
    assert "---- 2 Layer(s) ----" in shown.stdout and "{appended [dtype=float32" in shown.stdout
    by_type = run_poly("convert", script, "--model-type", "trt-network-script", "-o", engine)
    assert by_type.returncode == 0, by_type.stderr


@pytest.mark.parametrize("how", [["{script}:other_network"], ["{script}", "--trt-network-func", "other_network"],
                                 ["{script}", "--trt-network-func-name", "other_network"]])
def test_network_script_function_by_name(models, tmp_path, how):
    script = _script(tmp_path / "nets.py", NETWORK_SCRIPT.format(model=models["identity"]))
    args = [a.format(script=script) for a in how]
    proc = run_poly("inspect", "model", *args, "--show", "layers")
    assert proc.returncode == 0, proc.stderr
    assert "Name: OtherNetwork" in proc.stdout and "---- 1 Layer(s) ----" in proc.stdout


def test_network_script_errors_are_one_line(models, tmp_path):
    script = _script(tmp_path / "nets.py", NETWORK_SCRIPT.format(model=models["identity"]))
    with_onnxrt = run_poly("run", script, "--trt", "--onnxrt")
    assert with_onnxrt.returncode == 2
    assert "is a TensorRT network script; only --trt can run it (not --onnxrt)" in error_lines(with_onnxrt)[0]
    not_py = run_poly("convert", models["identity"], "--model-type", "trt-network-script", "-o", tmp_path / "x")
    assert not_py.returncode == 2 and "a TensorRT network script must be a '.py' file" in error_lines(not_py)[0]
    to_onnx = run_poly("convert", script, "-o", tmp_path / "x.onnx")
    assert to_onnx.returncode == 2 and "converts to a TensorRT engine only" in error_lines(to_onnx)[0]
    no_func = run_poly("convert", f"{script}:missing", "-o", tmp_path / "x.engine")
    assert no_func.returncode == 1 and "Could not import symbol: missing" in error_lines(no_func)[0]


POSTPROCESS_SCRIPT = """
    def postprocess(network):
        network.name = (network.name if network.name.startswith("A") else "") + "A"

    def append_b(network):
        network.name += "B"
        out = network.get_output(0)
        network.unmark_output(out)
        network.mark_output(network.add_identity(out).get_output(0))
    """


def test_network_postprocess_scripts_run_in_order(models, tmp_path):
    script = _script(tmp_path / "pp.py", POSTPROCESS_SCRIPT)
    proc = run_poly("inspect", "model", models["identity"], "--display-as", "trt",
                   "--trt-npps", script, f"{script}:append_b", "--trt-network-postprocess-script", f"{script}:append_b")
    assert proc.returncode == 0, proc.stderr
    assert "Name: ABB" in proc.stdout and "---- 3 Layer(s) ----" in proc.stdout
    built = run_poly("convert", models["identity"], "-o", tmp_path / "x.engine", "--trt-npps", f"{script}:append_b")
    assert built.returncode == 0, built.stderr
    assert "2 layer(s)" in built.stdout
    missing = run_poly("convert", models["identity"], "-o", tmp_path / "x.engine", "--trt-npps", "nope.py")
    assert missing.returncode == 2 and "--trt-network-postprocess-script" in error_lines(missing)[0]


# Config scripts


CONFIG_SCRIPT = """
    from poly import func
    from poly.trt import CreateConfig

    @func.extend(CreateConfig(builder_optimization_level=1))
    def load_config(config):
        print("load_config level", config.builder_optimization_level)

    def my_config(builder, network):
        config = builder.create_builder_config()
        config.builder_optimization_level = 0
        print("my_config level", config.builder_optimization_level, network.num_inputs)
        return config

    def postprocess_config(builder, network, config):
        print("postprocess level", config.builder_optimization_level)
    """


@pytest.mark.parametrize("args, printed", [
    (["--trt-config-script", "{script}"], ["load_config level 1"]),
    (["--trt-config-script", "{script}:my_config"], ["my_config level 0 1"]),
    (["--trt-config-script", "{script}", "--trt-config-func-name", "my_config"], ["my_config level 0 1"]),
    (["--builder-optimization-level", "2", "--trt-cpps", "{script}"], ["postprocess level 2"]),
    (["--trt-config-script", "{script}:my_config", "--trt-config-postprocess-script", "{script}"],
     ["my_config level 0 1", "postprocess level 0"]),
])
def test_config_scripts_create_or_change_the_config(models, tmp_path, args, printed):
    script = _script(tmp_path / "create_config.py", CONFIG_SCRIPT)
    engine = tmp_path / "c.engine"
    proc = run_poly("convert", models["identity"], "-o", engine, *[a.format(script=script) for a in args])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [line for line in proc.stdout.splitlines() if " level " in line] == printed
    assert engine.stat().st_size > 0


def test_config_script_replaces_the_builder_flags(models, tmp_path):
    if not _rtx():
        pytest.skip("full TensorRT has --fp16: the flag alone would not fail")
    script = _script(tmp_path / "create_config.py", CONFIG_SCRIPT)
    alone = run_poly("convert", models["identity"], "-o", tmp_path / "a.engine", "--fp16")
    assert alone.returncode == 1 and "fp16 is not available" in error_lines(alone)[0]
    scripted = run_poly("convert", models["identity"], "-o", tmp_path / "b.engine", "--fp16",
                       "--trt-config-script", script)
    assert scripted.returncode == 0, scripted.stderr  # the script's config is used, --fp16 ignored


def test_config_script_flag_errors(models, tmp_path):
    base = ["convert", models["identity"], "-o", tmp_path / "x.engine"]
    missing = run_poly(*base, "--trt-config-script", "nope.py")
    assert missing.returncode == 2 and "--trt-config-script" in error_lines(missing)[0]
    missing_pp = run_poly(*base, "--trt-cpps", "nope.py:f")
    assert missing_pp.returncode == 2 and "--trt-config-postprocess-script" in error_lines(missing_pp)[0]
    alone = run_poly(*base, "--trt-config-func-name", "f")
    assert alone.returncode == 2 and "--trt-config-func-name needs --trt-config-script" in error_lines(alone)[0]
