"""poly.trt's loaders with Polygraphy's names: network and config postprocessing, debug tensors,
I/O formats and types, plugins, runtimes, engine buffers and files, the ONNX-like view, the
TensorRT-RTX config, and the legacy calibrator's questions. TensorRT-RTX's builder runs here
(no GPU needed); what needs an engine to run is tested on the lent GPU machine."""

from __future__ import annotations

import ctypes.util

import pytest

from poly.core import PolyException


def test_postprocess_network_passes_the_network_by_keyword(trt_mod, trt_models):
    from poly.backend.trt import NetworkFromOnnxPath, PostprocessNetwork, postprocess_network

    seen = []

    def rename(**kwargs):
        seen.append(kwargs["network"])
        kwargs["network"].name = "renamed"

    builder, network, parser = PostprocessNetwork(NetworkFromOnnxPath(trt_models["identity"]), rename)()
    assert seen == [network] and network.name == "renamed" and isinstance(network, trt_mod.INetworkDefinition)
    assert len(postprocess_network((builder, network), lambda network: None)) == 2, "no parser given, none returned"
    with pytest.raises(PolyException, match="is not a callable"):
        PostprocessNetwork((builder, network), None)


def test_set_tensor_formats_sets_the_allowed_format_masks(trt_mod, trt_models):
    from poly.backend.trt import NetworkFromOnnxPath, set_tensor_formats

    fmt = trt_mod.TensorFormat
    _, network, _ = set_tensor_formats(NetworkFromOnnxPath(trt_models["identity"]),
                                       {"x": [fmt.LINEAR, fmt.CHW4], "y": ["hwc8"]})
    assert network.get_input(0).allowed_formats == (1 << int(fmt.LINEAR)) | (1 << int(fmt.CHW4))
    assert network.get_output(0).allowed_formats == 1 << int(fmt.HWC8)
    with pytest.raises(PolyException, match=r"no tensor\(s\) \['z'\]"):
        set_tensor_formats(NetworkFromOnnxPath(trt_models["identity"]), {"z": [fmt.LINEAR]})


class _Tensor:
    def __init__(self, name):
        self.name, self.dtype = name, None


class _Network:
    """A recording stand-in: TensorRT-RTX networks are strongly typed and refuse new I/O types."""

    def __init__(self):
        self.inputs, self.outputs = [_Tensor("x")], [_Tensor("y")]
        self.num_inputs, self.num_outputs = 1, 1

    def get_input(self, i):
        return self.inputs[i]

    def get_output(self, i):
        return self.outputs[i]


def test_set_tensor_datatypes_converts_any_dtype_spelling(trt_mod):
    from poly.backend.trt import SetTensorDatatypes
    from poly.datatype import DataType

    net = _Network()
    SetTensorDatatypes((object(), net), {"x": DataType.FLOAT16, "y": "int32"})()
    assert net.inputs[0].dtype == trt_mod.float16 and net.outputs[0].dtype == trt_mod.int32
    SetTensorDatatypes((object(), net), trt_mod.float32)()
    assert net.inputs[0].dtype == net.outputs[0].dtype == trt_mod.float32


def test_mark_debug_marks_tensors_and_names_unknown_ones(trt_mod, trt_models):
    from poly.backend.trt import MarkDebug, NetworkFromOnnxPath
    from poly.backend.trt.util import get_all_tensors

    _, network, _ = MarkDebug(NetworkFromOnnxPath(trt_models["mlp"]), ["x"])()
    tensors = get_all_tensors(network)
    assert network.is_debug_tensor(tensors["x"])
    assert not any(network.is_debug_tensor(t) for name, t in tensors.items() if name != "x")
    with pytest.raises(PolyException, match=r"MarkDebug: no tensor\(s\) \['nope'\]"):
        MarkDebug(NetworkFromOnnxPath(trt_models["mlp"]), ["nope"])()


def test_postprocess_config_modifies_the_created_config(trt_mod, trt_models):
    from poly.backend.trt import CreateConfig, NetworkFromOnnxPath, PostprocessConfig

    builder, network, _ = NetworkFromOnnxPath(trt_models["identity"])()
    calls = []

    def tune(builder_arg, network_arg, config):
        calls.append((builder_arg, network_arg))
        config.builder_optimization_level = 1

    config = PostprocessConfig(CreateConfig(), tune)(builder, network)
    assert calls == [(builder, network)] and config.builder_optimization_level == 1
    with pytest.raises(PolyException, match="is not a callable"):
        PostprocessConfig(CreateConfig(), "not a function")


def test_create_config_rtx_targets(trt_mod, trt_models):
    from poly.backend.tensorrt_rtx import CreateConfigRTX
    from poly.trt import is_rtx, network_from_onnx_path

    if not is_rtx():
        pytest.skip("compute capabilities are a TensorRT-RTX option; full TensorRT is installed")
    builder, network, _ = network_from_onnx_path(trt_models["identity"])
    config = CreateConfigRTX(compute_capabilities=[(8, 6), (8, 9)])(builder, network)
    assert config.num_compute_capabilities == 2
    assert [config.get_compute_capability(i) for i in range(2)] == [trt_mod.ComputeCapability.SM86,
                                                                    trt_mod.ComputeCapability.SM89]
    current = CreateConfigRTX(use_gpu=True)(builder, network)
    assert current.get_compute_capability(0) == trt_mod.ComputeCapability.CURRENT
    with pytest.raises(PolyException, match="mutually exclusive"):
        CreateConfigRTX(use_gpu=True, compute_capabilities=[(8, 6)])
    with pytest.raises(PolyException, match=r"\['SM99'\] are not supported"):
        CreateConfigRTX(compute_capabilities=[(9, 9)])(builder, network)


def test_onnx_like_from_network_draws_every_layer(trt_mod, trt_models):
    import onnx

    from poly.backend.trt import NetworkFromOnnxPath, onnx_like_from_network

    _, network, _ = NetworkFromOnnxPath(trt_models["mlp"])()
    model = onnx_like_from_network(NetworkFromOnnxPath(trt_models["mlp"]))
    assert isinstance(model, onnx.ModelProto)
    assert len(model.graph.node) == network.num_layers
    assert [n.name for n in model.graph.node] == [network.get_layer(i).name for i in range(network.num_layers)]
    assert {n.domain for n in model.graph.node} == {"trt"}
    assert [i.name for i in model.graph.input] == [network.get_input(i).name for i in range(network.num_inputs)]
    first = network.get_layer(0)
    assert model.graph.node[0].op_type == str(first.type).split(".")[-1]


def test_buffer_from_engine_returns_what_serialize_returns():
    from poly.backend.trt import BufferFromEngine, buffer_from_engine

    class Engine:
        def serialize(self):
            return memoryview(b"plan")

    assert bytes(BufferFromEngine(Engine)()) == b"plan"
    assert bytes(buffer_from_engine(Engine())) == b"plan"


def test_load_runtime_names_a_missing_library(tmp_path):
    from poly.backend.trt import LoadRuntime

    with pytest.raises(PolyException, match="libnvinfer_lean.so.*does not exist"):
        LoadRuntime(str(tmp_path / "libnvinfer_lean.so"))()


def test_load_plugins_loads_libraries_then_calls_the_loader(tmp_path):
    from poly.backend.trt import LoadPlugins, load_plugins

    libm = ctypes.util.find_library("m")
    assert LoadPlugins([libm], lambda a, b=0: a + b)(2, b=3) == 5
    assert load_plugins([libm], obj="value") == "value"
    assert LoadPlugins()() is None
    with pytest.raises(PolyException, match="Cannot load plugin library .*nope.so"):
        LoadPlugins([str(tmp_path / "nope.so")])()


def test_file_reader_streams_the_file(trt_mod, tmp_path):
    from poly.backend.trt import FileReader

    path = tmp_path / "model.engine"
    path.write_bytes(b"0123456789")
    # TensorRT-RTX's IStreamReaderV2 opens the CUDA driver when constructed: the default base
    # class is exercised on the GPU machine (test_trt_context_memory.py); the reading logic here.
    with FileReader(str(path), BaseClass=object) as reader:
        assert reader.read(4) == b"0123"
        assert reader.seek(2, 0) == 2 and reader.read(3) == b"234"
        assert reader.seek(-1, 2) == 9 and reader.read(10) == b"9"
    assert reader.file.closed
    with pytest.raises(PolyException, match="missing.engine.*does not exist"):
        FileReader(str(tmp_path / "missing.engine"))


def test_calibrator_answers_the_legacy_algorithms_questions():
    from poly.backend.trt import Calibrator

    default = Calibrator([], BaseClass=object)
    assert default.get_quantile() == 0.5 and default.get_regression_cutoff() == 0.5
    tuned = Calibrator([], BaseClass=object, quantile=0.9, regression_cutoff=0.25)
    assert tuned.get_quantile() == 0.9 and tuned.get_regression_cutoff() == 0.25
    assert tuned.read_histogram_cache(16) is None
