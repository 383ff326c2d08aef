"""CreateConfig: the flags the installed flavour has are set, the ones it lacks are refused
in one line, and the other options reach the builder config."""

from __future__ import annotations

import pytest

from poly.core import PolyException


@pytest.fixture
def network(trt_mod, trt_models):
    from poly.trt import NetworkFromOnnxPath

    return NetworkFromOnnxPath(trt_models["mlp"])()


def test_tf32_and_boolean_flags(trt_mod, network):
    from poly.trt import CreateConfig

    builder, net, _ = network
    config = CreateConfig(tf32=True, refittable=True, strict_nans=True)(builder, net)
    assert config.get_flag(trt_mod.BuilderFlag.TF32)
    assert config.get_flag(trt_mod.BuilderFlag.REFIT)
    assert not CreateConfig()(builder, net).get_flag(trt_mod.BuilderFlag.TF32)


@pytest.mark.parametrize("option", ["fp16", "int8", "bf16", "fp8"])
def test_precisions_the_flavour_lacks_are_refused(trt_mod, network, option):
    from poly.trt import CreateConfig

    flag = {"fp16": "FP16", "int8": "INT8", "bf16": "BF16", "fp8": "FP8"}[option]
    if hasattr(trt_mod.BuilderFlag, flag):
        builder, net, _ = network
        assert CreateConfig(**{option: True})(builder, net).get_flag(getattr(trt_mod.BuilderFlag, flag))
        return
    builder, net, _ = network
    with pytest.raises(PolyException, match=f"{option} is not available in TensorRT-RTX"):
        CreateConfig(**{option: True})(builder, net)


def test_unknown_keyword_is_a_type_error():
    from poly.trt import CreateConfig

    with pytest.raises(TypeError, match="fp17"):
        CreateConfig(fp17=True)


def test_pools_level_verbosity(trt_mod, network):
    from poly.trt import CreateConfig

    builder, net, _ = network
    config = CreateConfig(memory_pool_limits={"workspace": 32 << 20}, builder_optimization_level=1,
                          profiling_verbosity="detailed", max_aux_streams=2)(builder, net)
    assert config.get_memory_pool_limit(trt_mod.MemoryPoolType.WORKSPACE) == 32 << 20
    assert config.builder_optimization_level == 1
    assert config.profiling_verbosity == trt_mod.ProfilingVerbosity.DETAILED
    assert config.max_aux_streams == 2
    with pytest.raises(PolyException, match="between 0 and 5"):
        CreateConfig(builder_optimization_level=9)(builder, net)
    with pytest.raises(PolyException, match="Unknown profiling verbosity 'chatty'"):
        CreateConfig(profiling_verbosity="chatty")(builder, net)


def test_precision_constraints_values():
    from poly.trt import CreateConfig

    with pytest.raises(PolyException, match="obey"):
        CreateConfig(precision_constraints="always")


def test_compute_capabilities_on_rtx(trt_mod, network):
    from poly.trt import CreateConfig, is_rtx

    if not is_rtx():
        pytest.skip("compute capabilities are a TensorRT-RTX build option")
    builder, net, _ = network
    config = CreateConfig(compute_capabilities=["SM86", "SM89"])(builder, net)
    assert config.num_compute_capabilities == 2
    assert config.get_compute_capability(1) == trt_mod.ComputeCapability.SM89


def test_calibrator_needs_full_tensorrt(trt_mod, network):
    from poly.trt import Calibrator, is_rtx

    if not is_rtx():
        pytest.skip("full TensorRT has INT8 calibrators")
    with pytest.raises(PolyException, match="INT8 calibration is not available in TensorRT-RTX"):
        Calibrator([], cache=None)


def test_timing_cache_round_trip(trt_mod, trt_models, tmp_path):
    """A build saves its timing cache; a later build loads it; saving again merges into the file."""
    from poly.trt import CreateConfig, EngineBytesFromNetwork, NetworkFromOnnxPath

    cache = tmp_path / "timing.cache"
    EngineBytesFromNetwork(NetworkFromOnnxPath(trt_models["mlp"]), save_timing_cache=cache)()
    first = cache.read_bytes()
    assert len(first) > 0
    builder, net, parser = NetworkFromOnnxPath(trt_models["mlp"])()
    config = CreateConfig(load_timing_cache=cache)(builder, net)
    from poly.trt.builder.timing_cache import quiet_timing_cache_api

    with quiet_timing_cache_api():
        loaded = bytes(config.get_timing_cache().serialize())
    assert len(loaded) > 0
    EngineBytesFromNetwork((builder, net, parser), config=CreateConfig(load_timing_cache=cache),
                           save_timing_cache=cache)()
    assert cache.exists() and len(cache.read_bytes()) >= len(first) and not list(tmp_path.glob("*.tmp*"))


def test_layer_precisions_on_the_installed_flavour(trt_mod, trt_models):
    from poly.trt import NetworkFromOnnxPath, SetLayerPrecisions
    from poly.trt.networks.layer_precisions import supports_layer_precisions

    loader = NetworkFromOnnxPath(trt_models["mlp"])
    _, network, _ = loader()
    if not supports_layer_precisions(network):
        with pytest.raises(PolyException, match="Per-layer precisions are not available in TensorRT-RTX"):
            SetLayerPrecisions(loader, {network.get_layer(0).name: "float32"})()
        pytest.skip("TensorRT-RTX has no per-layer precision; the setting path needs full TensorRT")
    name = network.get_layer(0).name
    _, changed, _ = SetLayerPrecisions(loader, {name: "float16"})()
    assert changed.get_layer(0).precision == trt_mod.DataType.HALF
    with pytest.raises(PolyException, match="no such layer"):
        SetLayerPrecisions(loader, {"nope": "float32"})()


def test_tactic_selectors_need_algorithm_selectors(trt_mod, tmp_path):
    from poly.trt import TacticRecorder

    if hasattr(trt_mod, "IAlgorithmSelector"):
        recorder = TacticRecorder(tmp_path / "replay.json")
        assert recorder.select_algorithms(None, [1, 2, 3]) == [0, 1, 2]
        pytest.skip("recording real tactics needs a GPU build with full TensorRT")
    with pytest.raises(PolyException, match="IAlgorithmSelector"):
        TacticRecorder(tmp_path / "replay.json")
