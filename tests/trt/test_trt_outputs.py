"""ModifyNetworkOutputs: MARK_ALL, names, exclusions and their errors."""

from __future__ import annotations

import pytest

from poly.core import PolyException
from poly.core.constants import MARK_ALL


def _outputs(network):
    return [network.get_output(i).name for i in range(network.num_outputs)]


def test_mark_all_marks_every_layer_output(trt_mod, trt_models):
    from poly.trt import ModifyNetworkOutputs, NetworkFromOnnxPath
    from poly.trt.networks.modify_network import markable_tensors

    builder, network, parser = ModifyNetworkOutputs(NetworkFromOnnxPath(trt_models["multi_output"]), MARK_ALL)()
    marked = _outputs(network)
    every = [t.name for t in markable_tensors(network)]
    assert set(every) <= set(marked)
    assert {"r", "s", "sum"} <= set(marked)
    assert len(marked) == len(set(marked))


def test_mark_all_with_exclusions(trt_mod, trt_models):
    from poly.trt import ModifyNetworkOutputs, NetworkFromOnnxPath

    _, network, _ = ModifyNetworkOutputs(NetworkFromOnnxPath(trt_models["multi_output"]), MARK_ALL,
                                         exclude_outputs=["s", "r"])()
    marked = _outputs(network)
    assert "s" not in marked and "r" not in marked and "sum" in marked


def test_named_outputs_replace_the_current_ones(trt_mod, trt_models):
    from poly.trt import ModifyNetworkOutputs, NetworkFromOnnxPath

    _, network, _ = ModifyNetworkOutputs(NetworkFromOnnxPath(trt_models["multi_output"]), outputs=["s"])()
    assert _outputs(network) == ["s"]


def test_unknown_output_name_is_a_clear_error(trt_mod, trt_models):
    from poly.trt import ModifyNetworkOutputs, NetworkFromOnnxPath

    with pytest.raises(PolyException, match=r"Cannot mark \['nope'\]"):
        ModifyNetworkOutputs(NetworkFromOnnxPath(trt_models["multi_output"]), outputs=["nope"])()


def test_excluding_every_output_is_refused(trt_mod, trt_models):
    from poly.trt import ModifyNetworkOutputs, NetworkFromOnnxPath

    with pytest.raises(PolyException, match="no outputs"):
        ModifyNetworkOutputs(NetworkFromOnnxPath(trt_models["identity"]), exclude_outputs=["y"])()


def test_mark_all_network_builds(trt_mod, trt_models):
    from poly.trt import CreateConfig, EngineBytesFromNetwork, ModifyNetworkOutputs, NetworkFromOnnxPath

    loader = ModifyNetworkOutputs(NetworkFromOnnxPath(trt_models["multi_output"]), MARK_ALL)
    data = EngineBytesFromNetwork(loader, config=CreateConfig(builder_optimization_level=0))()
    assert data.nbytes > 1000
