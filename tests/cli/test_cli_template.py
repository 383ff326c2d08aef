"""`poly template trt-network / trt-config / onnx-gs`: the scripts written are edited the way a
user would, then run by poly (as a network-script MODEL, through --trt-config-script) or by
Python (the ONNX-GraphSurgeon script); TensorRT parts with the installed flavour
(TensorRT-RTX builds engines without a GPU)."""

from __future__ import annotations

import subprocess
import sys

import onnx
import pytest
from fixtures.cli_helpers import error_lines, require_tensorrt, run_poly

TODO_NETWORK = "    pass  # TODO: Set up the network here. This function should not return anything."
TODO_CONFIG = "    pass  # TODO: Set up the builder configuration here. This function should not return anything."


@pytest.fixture
def needs_tensorrt():
    require_tensorrt()


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, text
    path.write_text(text.replace(old, new))


def _template(tmp_path, *args):
    proc = run_poly("template", *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_trt_network_from_scratch_is_edited_built_and_inspected(tmp_path, needs_tensorrt):
    script = tmp_path / "my_define_network.py"
    _template(tmp_path, "trt-network", "-o", script.name)
    text = script.read_text()
    assert "@func.extend(create_network)\ndef load_network(builder, network):" in text
    _edit(script, TODO_NETWORK, (
        "    x = network.add_input(name='x', dtype=trt.float32, shape=(2, 3))\n"
        "    relu = network.add_activation(x, trt.ActivationType.RELU)\n"
        "    relu.get_output(0).name = 'y'\n"
        "    network.mark_output(relu.get_output(0))\n"))
    shown = run_poly("inspect", "model", script, "--show", "layers")
    assert shown.returncode == 0, shown.stderr
    assert "{x [dtype=float32, shape=(2, 3)]}" in shown.stdout
    assert "[Op: LayerType.ACTIVATION]" in shown.stdout and "-> {y [dtype=float32, shape=(2, 3)]}" in shown.stdout
    engine = tmp_path / "net.engine"
    built = run_poly("convert", script, "-o", engine)
    assert built.returncode == 0, built.stderr
    assert "1 input(s), 1 output(s), 1 layer(s)" in built.stdout and engine.stat().st_size > 0


def test_trt_network_from_a_model_keeps_the_parsed_network(models, tmp_path, needs_tensorrt):
    script = tmp_path / "from_model.py"
    _template(tmp_path, "trt-network", models["multi"], "-o", script.name, "--trt-outputs", "mark", "all")
    text = script.read_text()
    assert f"NetworkFromOnnxPath({models['multi']!r})" in text and "outputs=MARK_ALL" in text
    assert "def load_network(builder, network, parser):" in text
    parsed = run_poly("inspect", "model", models["multi"], "--display-as", "trt", "--show", "layers")
    script_view = run_poly("inspect", "model", script, "--show", "layers")
    assert script_view.returncode == 0, script_view.stderr
    assert "---- 2 Network Output(s) ----" in parsed.stdout  # as parsed; every tensor marked in the script:
    assert "---- 3 Network Output(s) ----" in script_view.stdout
    layers = parsed.stdout.split("Layer(s) ----", 1)[1]
    assert layers == script_view.stdout.split("Layer(s) ----", 1)[1] and "[Op: LayerType." in layers
    _edit(script, TODO_NETWORK, "    network.name = 'Edited'\n")
    edited = run_poly("inspect", "model", script)
    assert "Name: Edited" in edited.stdout
    only_trt = run_poly("run", script, "--trt", "--onnxrt")
    assert only_trt.returncode == 2 and "only --trt can run it" in error_lines(only_trt)[0]


def test_trt_config_writes_the_builder_flags_and_runs_as_a_config_script(models, tmp_path, needs_tensorrt):
    script = tmp_path / "my_create_config.py"
    _template(tmp_path, "trt-config", "--builder-optimization-level", "1", "--pool-limit", "workspace:1M",
              "--trt-min-shapes", "X:[1,1,2,2]", "--trt-opt-shapes", "X:[2,1,4,4]", "--trt-max-shapes", "X:[4,1,8,8]",
              "-o", script.name)
    text = script.read_text()
    assert "builder_optimization_level=1," in text and "memory_pool_limits={'workspace': 1048576}," in text
    assert ".add('X', min=[1, 1, 2, 2], opt=[2, 1, 4, 4], max=[4, 1, 8, 8])" in text
    assert "def load_config(builder, network, config):" in text
    _edit(script, TODO_CONFIG, (
        "    print('level', config.builder_optimization_level, 'profiles', config.num_optimization_profiles)\n"
        "    config.builder_optimization_level = 0\n"))
    engine = tmp_path / "dyn.engine"
    built = run_poly("convert", models["dynamic"], "-o", engine, "--trt-config-script", script)
    assert built.returncode == 0, built.stderr
    assert "level 1 profiles 1" in built.stdout and engine.stat().st_size > 0


def test_trt_config_precision_and_calibration_flags(tmp_path, needs_tensorrt, models):
    script = tmp_path / "int8_config.py"
    loader = tmp_path / "data_loader.py"
    loader.write_text("def load_data():\n    return []\n")
    _template(tmp_path, "trt-config", "--fp16", "--int8", "--data-loader-script", f"{loader}:load_data",
              "--calibration-cache", "c.cache", "--calib-base-cls", "IInt8MinMaxCalibrator", "-o", script.name)
    text = script.read_text()
    assert "fp16=True," in text and "int8=True," in text
    assert f"data_loader=DataLoaderFromScript({str(loader) + ':load_data'!r})," in text
    assert "cache='c.cache'," in text and "algo='minmax'," in text
    compile(text, str(script), "exec")
    from poly.trt import is_rtx

    if is_rtx():  # TensorRT-RTX has neither: the script's config fails in one line
        proc = run_poly("convert", models["identity"], "-o", tmp_path / "x.engine", "--trt-config-script", script)
        assert proc.returncode == 1
        lines = error_lines(proc)
        assert len(lines) == 1 and "not available in TensorRT-RTX" in lines[0]


def test_onnx_gs_script_edits_and_saves_the_model(models, tmp_path):
    model = tmp_path / "model.onnx"
    model.write_bytes(open(models["identity"], "rb").read())
    script = tmp_path / "edit.py"
    _template(tmp_path, "onnx-gs", model.name, "-o", script.name)
    text = script.read_text()
    assert "graph = load_gs()" in text and "onnx.save(gs.export_onnx(graph), 'model_updated.onnx')" in text
    _edit(script, "graph.cleanup().toposort()", "graph.outputs[0].name = 'renamed'\ngraph.cleanup().toposort()")
    proc = subprocess.run([sys.executable, script.name], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    edited = onnx.load(str(tmp_path / "model_updated.onnx"))
    assert [o.name for o in edited.graph.output] == ["renamed"]
    assert [n.op_type for n in edited.graph.node] == ["Identity"]


@pytest.mark.parametrize("args, needle", [
    (["onnx-gs", "missing.onnx", "-o", "e.py"], "'missing.onnx' does not exist"),
    (["onnx-gs", "-o", "e.py"], "Missing argument 'MODEL'"),
    (["trt-network", "model.engine", "-o", "n.py"], "'model.engine' is not an ONNX model"),
    (["trt-config", "--pool-limit", "workspace:lots", "-o", "c.py"], "--pool-limit"),
    (["trt-config", "-o", "."], "'-o'"),
])
def test_template_errors_are_one_line(tmp_path, args, needle):
    (tmp_path / "model.engine").write_bytes(b"not an engine")
    proc = run_poly("template", *args, cwd=tmp_path)
    assert proc.returncode == 2
    lines = error_lines(proc)
    assert len(lines) == 1 and needle in lines[0], lines
