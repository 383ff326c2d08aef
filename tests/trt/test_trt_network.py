"""Parsing ONNX into TensorRT networks with the installed flavour (TensorRT-RTX in CI)."""

from __future__ import annotations

import onnx
import pytest
from fixtures import onnx_models
from onnx import TensorProto, helper

from poly.core import PolyException
from poly.core.func import extend


def _unknown_op_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 2])
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="ok_relu"),
             helper.make_node("FrobnicateOp", ["y"], ["z"], name="the_bad_node")]
    return helper.make_model(helper.make_graph(nodes, "g", [x], [z]), opset_imports=[helper.make_opsetid("", 17)])


def test_parse_path_gives_builder_network_parser(trt_mod, trt_models):
    from poly.trt import NetworkFromOnnxPath

    builder, network, parser = NetworkFromOnnxPath(trt_models["multi_output"])()
    assert isinstance(network, trt_mod.INetworkDefinition)
    assert [network.get_input(i).name for i in range(network.num_inputs)] == ["x"]
    assert sorted(network.get_output(i).name for i in range(network.num_outputs)) == ["r", "sum"]
    assert len(network) == network.num_layers >= 3
    assert parser.num_errors == 0


def test_parse_bytes_and_model_proto_agree(trt_mod, trt_models):
    from poly.trt import NetworkFromOnnxBytes

    model = onnx_models.mlp()
    from_proto = NetworkFromOnnxBytes(model)()[1]
    from_bytes = NetworkFromOnnxBytes(lambda: model.SerializeToString())()[1]
    assert from_proto.num_layers == from_bytes.num_layers
    assert tuple(from_proto.get_input(0).shape) == (-1, 8)  # the dynamic batch survives parsing


def test_parser_errors_name_the_node_and_operator(trt_mod):
    from poly.trt import NetworkFromOnnxBytes, OnnxParseError

    with pytest.raises(OnnxParseError) as info:
        NetworkFromOnnxBytes(_unknown_op_model())()
    message = str(info.value)
    assert "node 'the_bad_node' (FrobnicateOp" in message
    assert "\n" not in message


def test_missing_file_is_one_clear_line(trt_mod, tmp_path):
    from poly.trt import NetworkFromOnnxPath, OnnxParseError

    with pytest.raises(OnnxParseError, match="nope.onnx.*does not exist"):
        NetworkFromOnnxPath(tmp_path / "nope.onnx")()


def test_garbage_bytes_are_refused(trt_mod):
    from poly.trt import NetworkFromOnnxBytes, OnnxParseError

    with pytest.raises(OnnxParseError, match="ONNX parser failed"):
        NetworkFromOnnxBytes(b"\x08\x07garbage")()


def test_create_network_strongly_typed(trt_mod):
    from poly.trt import CreateNetwork

    flag = trt_mod.NetworkDefinitionCreationFlag.STRONGLY_TYPED
    builder, network = CreateNetwork(strongly_typed=True)()
    assert network.get_flag(flag) and network.num_layers == 0
    inp = network.add_input("x", trt_mod.float32, (1, 4))
    network.mark_output(network.add_activation(inp, trt_mod.ActivationType.RELU).get_output(0))
    assert network.num_outputs == 1


def test_func_extend_modifies_a_loaded_network(trt_mod, trt_models):
    """The seed-004 pattern: extend a loader to change the network it returns."""
    from poly.trt import NetworkFromOnnxPath

    seen = {}

    @extend(NetworkFromOnnxPath(trt_models["multi_output"]))
    def load_network(builder, network, parser):
        seen["layers"] = network.num_layers
        network.unmark_output(network.get_output(1))

    builder, network, parser = load_network()
    assert seen["layers"] == network.num_layers and network.num_outputs == 1


@pytest.mark.parametrize("name", ["light_squeezenet", "light_inception_v1"])
def test_real_architectures_parse(trt_mod, name):
    from poly.trt import NetworkFromOnnxPath

    path = onnx_models.light_model_dir() / f"{name}.onnx"
    model = onnx.load(str(path), load_external_data=False)
    _, network, _ = NetworkFromOnnxPath(path)()
    assert network.num_layers >= len(model.graph.node) // 2
    assert [network.get_output(i).name for i in range(network.num_outputs)] == [o.name for o in model.graph.output]


def test_missing_tensorrt_is_one_line(monkeypatch):
    """With no TensorRT module importable, the error names the pip install."""
    import sys

    from poly.trt import TensorRTMissingError
    from poly.trt.tensorrt_module import trt

    for name in trt.candidates():
        monkeypatch.setitem(sys.modules, name, None)  # none of them imports
    trt.reset()
    try:
        with pytest.raises(PolyException, match="pip install tensorrt") as info:
            trt.Builder  # noqa: B018 (the first use imports)
    finally:
        trt.reset()
    message = str(info.value)
    assert isinstance(info.value, TensorRTMissingError) and "\n" not in message
    assert "pip install tensorrt-rtx-cu13-bindings tensorrt-rtx-cu13-libs" in message


def test_importing_poly_trt_imports_no_tensorrt():
    import subprocess
    import sys

    code = ("import sys, poly.trt, poly.backend.trt; "
            "print(sorted(m for m in sys.modules if m.startswith(('tensorrt', 'onnx'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_plugin_instancenorm_chooses_the_parser_flag(trt_mod, trt_models):
    from poly.trt import NetworkFromOnnxPath

    native = trt_mod.OnnxParserFlag.NATIVE_INSTANCENORM
    flags = {value: NetworkFromOnnxPath(trt_models["identity"], plugin_instancenorm=value)()[2].get_flag(native)
             for value in (True, False)}
    assert flags == {True: False, False: True}
