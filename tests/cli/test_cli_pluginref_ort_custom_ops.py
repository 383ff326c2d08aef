"""`poly run --pluginref` (Polygraphy's plugin CPU reference runner on an ONNX model) and
`--ort-custom-op-libs` (custom-op libraries registered on the ONNX-Runtime sessions of every
command of the ONNX-Runtime flag group)."""

import os
import shutil

import numpy as np
import onnx
import pytest
from fixtures import onnx_models
from fixtures.cli_helpers import error_lines, run_poly
from onnx import TensorProto, helper, numpy_helper

import poly.onnx.runners.session as session_module
from poly.core import PolyException
from poly.onnx import SessionFromOnnx

NO_CUSTOM_OP_LIBRARY = ("no ONNX-Runtime custom-op library can be built here (the onnxruntime wheel ships no C API "
                        "headers): a model with a custom operator is not run for real")
ORT_CAPI = os.path.join(os.path.dirname(onnx.__file__), "..", "onnxruntime", "capi")


def instance_norm_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])
    scale = numpy_helper.from_array(np.array([1.0, 2.0, 0.5], np.float32), "scale")
    bias = numpy_helper.from_array(np.array([0.0, 1.0, -1.0], np.float32), "bias")
    node = helper.make_node("InstanceNormalization", ["x", "scale", "bias"], ["n"], epsilon=1e-5)
    ident = helper.make_node("Identity", ["n"], ["y"])
    graph = helper.make_graph([node, ident], "g", [x], [y], [scale, bias])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.fixture
def inorm(tmp_path):
    path = tmp_path / "inorm.onnx"
    onnx.save(instance_norm_model(), path)
    return path


@pytest.fixture(autouse=True)
def _no_leftover_default_libs():
    yield
    assert SessionFromOnnx.DEFAULT_CUSTOM_OP_LIBS == ()  # a command's libraries end with it
    SessionFromOnnx.DEFAULT_CUSTOM_OP_LIBS = ()


# ---- --pluginref ---------------------------------------------------------------------------------

def test_pluginref_is_in_run_help_and_only_there():
    assert "--pluginref" in run_poly("run", "--help").stdout
    assert "--pluginref" not in run_poly("validate", "--help").stdout  # Polygraphy has it on run only


def test_run_pluginref_against_onnxrt_passes(inorm):
    proc = run_poly("run", inorm, "--pluginref", "--onnxrt")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert "pluginref-runner" in out and "onnxrt-runner" in out
    assert "PASSED | Runtime" in out


def test_run_pluginref_with_a_changed_model_and_save_outputs(inorm, tmp_path):
    # --onnx-outputs mark all: the loader chain, not the path, reaches GsFromOnnx
    proc = run_poly("run", inorm, "--onnxrt", "--pluginref", "--onnx-outputs", "mark", "all",
                    "--save-outputs", tmp_path / "out.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    from poly.compare import RunResults

    results = RunResults.load(str(tmp_path / "out.json"))
    names = [name for name, _ in results.items()]
    assert names[1].startswith("pluginref-runner")
    assert set(results[names[1]][0].keys()) == {"n", "y"}


def test_pluginref_on_an_operator_without_reference_is_one_error(tmp_path):
    path = tmp_path / "mlp.onnx"
    onnx.save(onnx_models.mlp(), path)
    proc = run_poly("run", path, "--pluginref")
    assert proc.returncode == 1
    lines = error_lines(proc)
    assert any("does not have a reference implementation" in line for line in lines), proc.stderr


def test_gen_script_writes_the_pluginref_runner_and_the_script_passes(inorm, tmp_path):
    script = tmp_path / "run.py"
    proc = run_poly("run", inorm, "--pluginref", "--onnxrt", "--gen-script", script)
    assert proc.returncode == 0, proc.stderr
    text = script.read_text()
    assert "PluginRefRunner(pluginref_graph)" in text and "GsFromOnnx(OnnxFromPath(onnx_model))" in text
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


# ---- --ort-custom-op-libs ------------------------------------------------------------------------

COMMANDS_WITH_ORT_FLAGS = [("run",), ("validate",), ("check", "lint"), ("debug", "localize"), ("convert",),
                           ("debug", "precision")]


@pytest.mark.parametrize("command", COMMANDS_WITH_ORT_FLAGS, ids=" ".join)
def test_every_command_of_the_onnxrt_group_has_the_flag(command):
    assert "--ort-custom-op-libs PATH [PATH ...]" in run_poly(*command, "--help").stdout


def test_a_missing_library_is_one_line_naming_the_flag_and_the_path(inorm, tmp_path):
    missing = tmp_path / "libnothere.so"
    proc = run_poly("run", inorm, "--onnxrt", "--ort-custom-op-libs", missing)
    assert proc.returncode == 2
    lines = error_lines(proc)
    assert len(lines) == 1 and "--ort-custom-op-libs" in lines[0] and str(missing) in lines[0], lines


def test_check_lint_reports_a_missing_library_the_same_way(inorm, tmp_path):
    proc = run_poly("check", "lint", inorm, "--ort-custom-op-libs", tmp_path / "nope.so")
    assert proc.returncode == 2
    assert "--ort-custom-op-libs" in error_lines(proc)[0]


def test_the_paths_reach_session_options_register_custom_ops_library(inorm, tmp_path, monkeypatch):
    libs = [tmp_path / "libone.so", tmp_path / "libtwo.so"]
    for lib in libs:
        lib.write_bytes(b"")
    registered = []
    real = session_module.onnxrt.SessionOptions

    class RecordingOptions:
        """SessionOptions whose register_custom_ops_library records the path (the files are empty)."""

        def __init__(self):
            self.__dict__["_real"] = real()

        def register_custom_ops_library(self, path):
            registered.append(path)

        def __getattr__(self, name):
            return getattr(self._real, name)

        def __setattr__(self, name, value):
            setattr(self._real, name, value)

    monkeypatch.setattr(session_module.onnxrt, "SessionOptions", RecordingOptions)
    def no_session(model, sess_options=None, providers=None):
        raise RuntimeError("stop here")  # no session: the libraries are empty files

    monkeypatch.setattr(session_module.onnxrt, "InferenceSession", no_session)
    with pytest.raises(PolyException, match="stop here"):
        SessionFromOnnx(str(inorm), custom_op_libs=[str(lib) for lib in libs])()
    assert registered == [str(lib) for lib in libs]

    registered.clear()
    proc = run_poly("run", inorm, "--onnxrt", "--ort-custom-op-libs", *libs)
    assert proc.returncode == 1 and "stop here" in proc.stderr  # the session failed after registering
    assert registered == [str(lib) for lib in libs]


def test_a_file_that_is_not_a_custom_op_library_is_reported_by_onnxruntime(inorm, tmp_path):
    # A real shared library without RegisterCustomOps: the path really reaches ONNX-Runtime.
    candidates = [os.path.join(ORT_CAPI, name) for name in os.listdir(ORT_CAPI) if name.endswith(".so")] \
        if os.path.isdir(ORT_CAPI) else []
    lib = next((c for c in candidates if "providers_shared" in c), None)
    if lib is None:
        pytest.skip("ONNX-Runtime's libonnxruntime_providers_shared.so is not where it is usually installed")
    copy = tmp_path / "libnotops.so"
    shutil.copy(lib, copy)
    with pytest.raises(PolyException, match="could not load the custom-op library .*libnotops.so.*RegisterCustomOps"):
        SessionFromOnnx(str(inorm), custom_op_libs=[copy])()
    proc = run_poly("run", inorm, "--onnxrt", "--ort-custom-op-libs", copy)
    assert proc.returncode == 1
    lines = error_lines(proc)
    assert len(lines) == 1 and "libnotops.so" in lines[0] and "RegisterCustomOps" in lines[0], lines


def test_the_api_reports_a_missing_file_naming_the_argument(inorm, tmp_path):
    with pytest.raises(PolyException, match="custom_op_libs: no such custom-op library file: .*nope.so"):
        SessionFromOnnx(str(inorm), custom_op_libs=str(tmp_path / "nope.so"))()


def test_gen_script_passes_the_libraries_to_the_session(inorm, tmp_path):
    lib = tmp_path / "libops.so"
    lib.write_bytes(b"")
    proc = run_poly("run", inorm, "--onnxrt", "--ort-custom-op-libs", lib, "--gen-script", "-")
    assert proc.returncode == 0, proc.stderr
    assert f"custom_op_libs=[{str(lib)!r}]" in proc.stdout


@pytest.mark.skip(reason=NO_CUSTOM_OP_LIBRARY)
def test_a_model_with_a_custom_operator_runs_with_its_library():
    """Would build a custom-op library against onnxruntime_c_api.h and run a model using its
    operator with `poly run --onnxrt --ort-custom-op-libs`; the headers are not available here."""
