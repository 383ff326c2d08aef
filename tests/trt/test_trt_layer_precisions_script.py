"""What `poly debug precision` hands over once it found the layers to run in higher precision:
the --layer-precisions arguments and a network postprocess script (``postprocess(network)``)
that sets them. The search, its build step (SetLayerPrecisions) and the hand-over run on the
TensorRT double's network (tests/fixtures/trt_double.py: ``ILayer.precision`` as TensorRT documents
it); building an engine that obeys per-layer precisions needs full TensorRT, which no machine here
has (TensorRT-RTX networks are strongly typed)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import types

import pytest

from poly.trt import layer_precisions_args, layer_precisions_script


class _Layer:
    def __init__(self, name):
        self.name = name
        self.precision = "default"


class _Network:
    def __init__(self, names):
        self.layers = [_Layer(name) for name in names]

    @property
    def num_layers(self):
        return len(self.layers)

    def get_layer(self, index):
        return self.layers[index]


@pytest.fixture
def fake_tensorrt(monkeypatch):
    """A ``tensorrt`` module whose precision names are the strings the script should look up."""
    module = types.ModuleType("tensorrt")
    for name in ("float32", "float16", "bfloat16", "int8"):
        setattr(module, name, f"trt.{name}")
    monkeypatch.setitem(sys.modules, "tensorrt", module)
    return module


def _load(text):
    namespace: dict = {}
    exec(compile(text, "layer_precisions.py", "exec"), namespace)  # noqa: S102 - the script under test
    return namespace


def test_the_script_sets_the_named_layers_and_no_other(fake_tensorrt):
    text = layer_precisions_script({"conv 1": "float32", "fc2": "float16"}, note="Written by a test.")
    assert text.startswith("# Written by a test.\n")
    network = _Network(["conv 1", "relu", "fc2"])
    assert _load(text)["postprocess"](network) is network
    assert [layer.precision for layer in network.layers] == ["trt.float32", "default", "trt.float16"]


def test_a_layer_the_network_lacks_is_named(fake_tensorrt):
    postprocess = _load(layer_precisions_script({"conv1": "float32", "gone": "float32"}))["postprocess"]
    with pytest.raises(ValueError, match=r"no layer named \['gone'\]"):
        postprocess(_Network(["conv1"]))


def test_an_unknown_precision_is_refused():
    with pytest.raises(ValueError, match="unknown precision"):
        layer_precisions_script({"conv1": "float33"})


def test_the_arguments_survive_a_shell():
    args = layer_precisions_args({"conv1": "float32", "fc 2": "float32", "it's": "float16"})
    assert args[0] == "--layer-precisions"
    assert shlex.split(" ".join(args)) == ["--layer-precisions", "conv1:float32", "fc 2:float32", "it's:float16"]
    assert layer_precisions_args({}) == []


def test_the_onnxrt_search_refuses_the_script_flag(tmp_path):
    from fixtures.cli_helpers import run_poly
    from fixtures.onnx_models import identity, save

    model = save(identity(), tmp_path / "identity.onnx")
    proc = run_poly("debug", "precision", model, "--onnxrt", "--layer-precisions-script", tmp_path / "s.py")
    assert proc.returncode == 2
    assert "--layer-precisions-script is for the TensorRT search" in proc.stderr


# ---- the TensorRT search end to end, against the TensorRT double --------------------------------

_CHECK_ADD_IN_FLOAT32 = ("import json, sys; precisions = json.load(open(sys.argv[1])); "
                         "sys.exit(0 if precisions.get('/shift/Add') == 'FLOAT' else 1)")


def _set_precisions(network):
    return {layer.name: layer.precision.name for layer in network.layers if layer.precision_is_set}


def test_the_search_hands_over_layers_that_rebuild_as_found(tensorrt_double, monkeypatch, tmp_path, capsys):
    """`debug precision`'s pieces on the double's network (x -> /scale/MatMul -> /shift/Add ->
    /act/Relu, and /shape/Shape): the candidates, a bisect search whose build step sets layer
    precisions with SetLayerPrecisions and whose check passes once /shift/Add runs in float32,
    then the hand-over: the script, applied to a fresh network, sets exactly those precisions,
    and the check passes on it; the logged arguments name them."""
    from fixtures.trt_double import DebugNetwork

    from poly.cli.commands.debug.precision import report_layer_precisions
    from poly.debug import IterativeDebugger, Precision, make_check
    from poly.trt import SetLayerPrecisions
    from poly.trt.networks.layer_precisions import precision_candidate_layers

    layers = precision_candidate_layers(DebugNetwork())
    assert layers == ["/scale/MatMul", "/shift/Add", "/act/Relu"]  # the Shape layer writes int64

    engine = tmp_path / "polygraphy_debug.engine"

    def build_engine(path, marked):
        network = DebugNetwork()
        SetLayerPrecisions((None, network), {name: "float32" for name in marked})()
        with open(path, "w") as f:
            json.dump(_set_precisions(network), f)

    debugger = IterativeDebugger(check=make_check([sys.executable, "-c", _CHECK_ADD_IN_FLOAT32, str(engine)]),
                                 iter_artifact_path=str(engine), save_debug_replay=None)
    result = Precision(debugger, layers, build_engine, mode="bisect", direction="forward").run()
    assert result.layers == ["/scale/MatMul", "/shift/Add"]

    script = tmp_path / "layer_precisions.py"
    report_layer_precisions({name: "float32" for name in result.layers}, "model.onnx", str(script))
    logged = capsys.readouterr().out
    assert "--layer-precisions /scale/MatMul:float32 /shift/Add:float32 --precision-constraints obey" in logged
    monkeypatch.setitem(sys.modules, "tensorrt", tensorrt_double)
    network = _load(script.read_text())["postprocess"](DebugNetwork())
    assert _set_precisions(network) == {"/scale/MatMul": "FLOAT", "/shift/Add": "FLOAT"}
    engine.write_text(json.dumps(_set_precisions(network)))
    assert subprocess.run([sys.executable, "-c", _CHECK_ADD_IN_FLOAT32, str(engine)]).returncode == 0
