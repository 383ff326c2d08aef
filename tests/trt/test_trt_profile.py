"""Profile: validation, defaults from a network, conversion to TensorRT, several profiles."""

from __future__ import annotations

import pytest

from poly.core import PolyException


def test_add_validates_min_opt_max():
    from poly.trt import Profile, ShapeTuple

    profile = Profile().add("x", (1, 3), (2, 3), (4, 3))
    assert profile["x"] == ShapeTuple((1, 3), (2, 3), (4, 3))
    with pytest.raises(PolyException, match=r"input 'x'.*dimension 0.*min <= opt <= max.*4, 2, 8"):
        Profile().add("x", (4, 3), (2, 3), (8, 3))
    with pytest.raises(PolyException, match="same rank"):
        Profile().add("x", (1, 3), (1, 3, 1), (1, 3))
    with pytest.raises(PolyException, match="no -1"):
        Profile().add("x", (-1, 3), (1, 3), (1, 3))
    with pytest.raises(PolyException, match="no shapes for input 'y'"):
        Profile().add("x", (1,), (1,), (1,))["y"]


def test_fill_defaults_from_network(trt_mod, trt_models):
    from poly.trt import NetworkFromOnnxPath, Profile

    _, network, _ = NetworkFromOnnxPath(trt_models["dynamic_identity"])()
    profile = Profile().fill_defaults(network)
    assert list(profile["X"]) == [(1, 1, 1, 1)] * 3
    profile = Profile().fill_defaults(network, default_shape_value=5)
    assert profile["X"].opt == (5, 1, 5, 5)
    _, static, _ = NetworkFromOnnxPath(trt_models["identity"])()
    assert Profile().fill_defaults(static)["x"].max == (1, 1, 2, 2)


def test_to_trt_sets_the_shapes(trt_mod, trt_models):
    from poly.trt import NetworkFromOnnxPath, Profile

    builder, network, _ = NetworkFromOnnxPath(trt_models["dynamic_identity"])()
    trt_profile = Profile().add("X", (1, 1, 2, 2), (2, 1, 4, 4), (4, 1, 8, 8)).to_trt(builder, network)
    assert [tuple(s) for s in trt_profile.get_shape("X")] == [(1, 1, 2, 2), (2, 1, 4, 4), (4, 1, 8, 8)]


def test_to_trt_checks_names_ranks_and_static_dims(trt_mod, trt_models):
    from poly.trt import NetworkFromOnnxPath, Profile

    builder, network, _ = NetworkFromOnnxPath(trt_models["dynamic_identity"])()
    with pytest.raises(PolyException, match=r"\['nope'\].*inputs are: \['X'\]"):
        Profile().add("nope", (1,), (1,), (1,)).to_trt(builder, network)
    with pytest.raises(PolyException, match="rank 3"):
        Profile().add("X", (1, 1, 1), (1, 1, 1), (1, 1, 1)).to_trt(builder, network)
    with pytest.raises(PolyException, match="static dimension 1"):
        Profile().add("X", (1, 2, 1, 1), (1, 2, 1, 1), (1, 2, 1, 1)).to_trt(builder, network)


def test_several_profiles_reach_the_config_and_the_engine_builds(trt_mod, trt_models):
    from poly.trt import CreateConfig, EngineBytesFromNetwork, NetworkFromOnnxPath, Profile

    profiles = [Profile().add("X", (1, 1, 2, 2), (1, 1, 4, 4), (2, 1, 8, 8)),
                Profile().add("X", (4, 1, 8, 8), (8, 1, 16, 16), (16, 1, 32, 32))]
    builder, network, parser = NetworkFromOnnxPath(trt_models["dynamic_identity"])()
    config = CreateConfig(profiles=profiles)(builder, network)
    assert config.num_optimization_profiles == 2
    data = EngineBytesFromNetwork((builder, network, parser), config=CreateConfig(profiles=profiles))()
    assert data.nbytes > 0


def test_dynamic_network_without_profile_gets_a_default(trt_mod, trt_models):
    from poly.trt import CreateConfig, NetworkFromOnnxPath

    builder, network, _ = NetworkFromOnnxPath(trt_models["mlp"])()
    assert CreateConfig()(builder, network).num_optimization_profiles == 1
    builder, network, _ = NetworkFromOnnxPath(trt_models["identity"])()
    assert CreateConfig()(builder, network).num_optimization_profiles == 0


def test_a_defaulted_dynamic_input_points_to_the_flags_and_to_sanitize(trt_mod, trt_models, capsys):
    # the user sees, before any TensorRT message about the dimension, both ways to give it a value,
    # the second as a command line to paste (no spaces in the shape)
    from poly.trt import NetworkFromOnnxPath, Profile

    _, network, _ = NetworkFromOnnxPath(trt_models["dynamic_identity"])()
    Profile().fill_defaults(network)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "Input 'X' has dynamic shape [-1, 1, -1, -1] and no profile entry" in text
    assert "--trt-min/opt/max-shapes" in text
    assert "poly surgeon sanitize MODEL --override-input-shapes X:[1,1,1,1] -o fixed.onnx" in text
