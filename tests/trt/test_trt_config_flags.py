"""CreateConfig's DLA and quantization-flag options (full TensorRT: their calls are checked on the
TensorRT double; TensorRT-RTX refuses them in one line), preview features set exactly as given,
networks created with unfused tensors marked as debug tensors, and engines deserialized with a
runtime loader (``EngineFromBytes(runtime=LoadRuntime(...))``)."""

from __future__ import annotations

import pytest

from poly.core import PolyException


def test_use_dla_makes_dla_the_default_device(tensorrt_double):
    from fixtures.trt_double import FakeBuilder, FakeNetwork

    from poly.trt import CreateConfig

    builder = FakeBuilder()
    config = CreateConfig(use_dla=True, allow_gpu_fallback=True)(builder, FakeNetwork())
    assert (config.default_device_type, config.DLA_core) == ("DLA", 0)
    assert config.get_flag("GPU_FALLBACK") and not config.get_flag("TF32")
    plain = CreateConfig()(builder, FakeNetwork())
    assert (plain.default_device_type, plain.DLA_core) == ("GPU", -1)
    assert not [call for call in plain.calls if "quantization" in call[0]]


def test_quantization_flags_set_the_given_ones_and_clear_the_others(tensorrt_double):
    from fixtures.trt_double import FakeBuilder, FakeNetwork

    from poly.trt import CreateConfig

    config = CreateConfig(quantization_flags=["calibrate_before_fusion"])(FakeBuilder(), FakeNetwork())
    assert ("set_quantization_flag", "CALIBRATE_BEFORE_FUSION") in config.calls
    assert config.get_quantization_flag("CALIBRATE_BEFORE_FUSION")
    cleared = FakeBuilder().create_builder_config()
    cleared.quantization_flags.add("CALIBRATE_BEFORE_FUSION")
    builder = FakeBuilder()
    builder.create_builder_config = lambda: cleared
    CreateConfig(quantization_flags=[])(builder, FakeNetwork())
    assert ("clear_quantization_flag", "CALIBRATE_BEFORE_FUSION") in cleared.calls
    assert not cleared.get_quantization_flag("CALIBRATE_BEFORE_FUSION")
    with pytest.raises(PolyException, match="Unknown quantization flag 'sooner'"):
        CreateConfig(quantization_flags=["sooner"])(FakeBuilder(), FakeNetwork())


@pytest.mark.parametrize("kwargs, needle", [
    ({"use_dla": True}, r"use_dla \(DLA\) is not available in TensorRT-RTX"),
    ({"quantization_flags": []}, "quantization_flags are not available in TensorRT-RTX"),
])
def test_tensorrt_rtx_refuses_dla_and_quantization_flags(trt_mod, trt_models, kwargs, needle):
    from poly.trt import CreateConfig, NetworkFromOnnxPath, is_rtx

    if not is_rtx():
        pytest.skip("full TensorRT has DLA and quantization flags (tested on the double above)")
    builder, network, _ = NetworkFromOnnxPath(trt_models["identity"])()
    with pytest.raises(PolyException, match=needle) as caught:
        CreateConfig(**kwargs)(builder, network)
    assert "full TensorRT" in str(caught.value) and "\n" not in str(caught.value)


def test_preview_features_are_set_exactly_as_given(trt_mod, trt_models):
    from poly.trt import CreateConfig, NetworkFromOnnxPath

    builder, network, _ = NetworkFromOnnxPath(trt_models["identity"])()
    features = [getattr(trt_mod.PreviewFeature, n) for n in dir(trt_mod.PreviewFeature) if n.isupper()]
    config = CreateConfig(preview_features=features[:1])(builder, network)
    assert [config.get_preview_feature(f) for f in features] == [True] + [False] * (len(features) - 1)
    config = CreateConfig(preview_features=[])(builder, network)
    assert not any(config.get_preview_feature(f) for f in features)


def test_networks_with_unfused_tensors_marked_as_debug_tensors_build(trt_mod, trt_models):
    from poly.trt import CreateNetwork, EngineBytesFromNetwork, NetworkFromOnnxBytes, NetworkFromOnnxPath

    loader = NetworkFromOnnxPath(trt_models["branches"], mark_unfused_tensors_as_debug_tensors=True)
    assert loader.mark_unfused_tensors_as_debug_tensors
    assert EngineBytesFromNetwork(loader)().nbytes > 1000
    with open(trt_models["branches"], "rb") as f:
        _, network, _ = NetworkFromOnnxBytes(f.read(), mark_unfused_tensors_as_debug_tensors=True)()
    assert network.num_layers > 0
    assert CreateNetwork(mark_unfused_tensors_as_debug_tensors=True).mark_unfused_tensors_as_debug_tensors
    _, empty = CreateNetwork(mark_unfused_tensors_as_debug_tensors=True)()
    assert empty.num_layers == 0


class _Runtime:
    def __init__(self):
        self.deserialized = []

    def deserialize_cuda_engine(self, data):
        self.deserialized.append(bytes(data))
        return "engine"


def test_engine_from_bytes_deserializes_with_the_runtime_its_loader_returns(monkeypatch):
    """The runtime may be a loader (``LoadRuntime``): it is called, and the engine deserialized
    with what it returns (deserializing needs a GPU: the check for one is answered here)."""
    from poly.core import cuda
    from poly.trt import EngineFromBytes

    monkeypatch.setattr(cuda, "cuda_available", lambda: True)
    runtime = _Runtime()
    calls = []

    def load_runtime():
        calls.append("load")
        return runtime

    assert EngineFromBytes(b"plan", runtime=load_runtime)() == "engine"
    assert calls == ["load"] and runtime.deserialized == [b"plan"]
    assert EngineFromBytes(b"again", runtime=runtime)() == "engine" and runtime.deserialized[-1] == b"again"
