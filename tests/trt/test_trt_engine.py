"""Building serialized engines, saving and reading them, and what happens without a GPU."""

from __future__ import annotations

import pytest

from poly.core import cuda


def test_build_save_and_read_back(trt_mod, trt_models, tmp_path):
    from poly.trt import BytesFromPath, EngineBytesFromNetwork, NetworkFromOnnxPath, SaveEngine, save_engine

    built = EngineBytesFromNetwork(NetworkFromOnnxPath(trt_models["mlp"]))()
    path = tmp_path / "mlp.engine"
    assert SaveEngine(lambda: built, path)() is built
    assert BytesFromPath(path)() == bytes(built)
    save_engine(bytes(built), tmp_path / "again.engine")
    assert (tmp_path / "again.engine").read_bytes() == bytes(built)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.engine", "mlp.engine"]


def test_immediate_functions_exist(trt_mod, trt_models):
    from poly.trt import engine_bytes_from_network, network_from_onnx_path

    data = engine_bytes_from_network(network_from_onnx_path(trt_models["identity"]))
    assert data.nbytes > 0


def test_bytes_from_missing_path(tmp_path):
    from poly.trt import BytesFromPath, EngineLoadError

    with pytest.raises(EngineLoadError, match="missing.engine"):
        BytesFromPath(tmp_path / "missing.engine", what="engine")()


@pytest.mark.skipif(cuda.cuda_available(), reason="a CUDA driver is present: the no-GPU path cannot be shown")
def test_without_a_gpu_engines_do_not_load_and_the_runner_says_why(trt_mod, trt_models, tmp_path):
    from poly.core import PolyException
    from poly.trt import (
        EngineBytesFromNetwork,
        EngineFromBytes,
        NetworkFromOnnxPath,
        NoCudaDeviceError,
        SaveEngine,
        TrtRunner,
    )

    with pytest.raises(NoCudaDeviceError, match="no NVIDIA driver or GPU"):
        EngineFromBytes(EngineBytesFromNetwork(NetworkFromOnnxPath(trt_models["identity"])))()
    saved = tmp_path / "built.engine"
    runner = TrtRunner(EngineFromBytes(SaveEngine(EngineBytesFromNetwork(NetworkFromOnnxPath(trt_models["identity"])),
                                                  saved)))
    with pytest.raises(PolyException, match="TrtRunner needs an NVIDIA GPU") as info:
        runner.activate()
    assert "\n" not in str(info.value)
    assert saved.stat().st_size > 0  # the engine was built and saved before activation stopped
    assert not runner.is_active
