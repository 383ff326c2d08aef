"""`poly inspect model ENGINE`'s description, on the engine double (tests/fixtures/trt_double.py):
no machine here can deserialize a real engine (TensorRT-RTX needs a GPU of compute capability
8.0/8.6/8.9/12.x), so the formatting of I/O, profiles and inspector layers is tested on the
double's answers to the same API calls."""

from __future__ import annotations

from fixtures.trt_double import FakeEngine

from poly.trt.engine_summary import describe_engine


def test_engine_description(tensorrt_double):
    text = describe_engine(FakeEngine(), show={"layers", "attrs"})
    assert "Name: fake-engine | 2 Optimization Profile(s)" in text
    assert "---- 1 Engine Input(s) ----\n{x [dtype=float32, shape=(-1, 4)]}" in text
    assert "{y [dtype=float32, shape=(-1, 4)], nz [dtype=int64, shape=(-1,)]}" in text
    assert "Device Memory: 4096 bytes" in text
    assert "- Profile: 1" in text and "Shapes: min=(8, 4), opt=(16, 4), max=(64, 4)" in text
    assert "Layer 1    | nonzero [Op: NonZero]" in text and "    Inputs = ['x']" in text


def test_layers_only_on_request(tensorrt_double):
    text = describe_engine(FakeEngine())
    assert "---- 2 Layer(s) ----" in text and "scale_shift" not in text
