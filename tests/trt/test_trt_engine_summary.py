"""`poly inspect model ENGINE`'s description, on the engine double (tests/fixtures/trt_double.py):
no machine here can deserialize a real engine (TensorRT-RTX needs a GPU of compute capability
8.0/8.6/8.9/12.x), so the formatting of I/O, profiles and inspector layers is tested on the
double's answers to the same API calls (the inspector's JSON as TensorRT documents it)."""

from __future__ import annotations

from fixtures.trt_double import FakeEngine, ShapeTensorEngine

from poly.trt.inspection.engine_summary import describe_engine, engine_layers


def test_engine_description(tensorrt_double):
    text = describe_engine(FakeEngine(), show={"layers", "attrs"})
    assert "Name: fake-engine | 2 Optimization Profile(s)" in text
    assert "---- 1 Engine Input(s) ----\n{x [dtype=float32, shape=(-1, 4)]}" in text
    assert "{y [dtype=float32, shape=(-1, 4)], nz [dtype=int64, shape=(-1,)]}" in text
    assert "Device Memory: 4096 bytes" in text
    assert "- Profile: 1" in text and "Shapes: min=(8, 4), opt=(16, 4), max=(64, 4)" in text
    # per-tensor records of the inspector's JSON become the tensors' dtype and shape
    assert (
        "Layer 1    | nonzero [Op: NonZero]\n"
        "    {x [dtype=float32, shape=(-1, 4)]}\n"
        "     -> {nz [dtype=int64, shape=(-1,)]}\n"
        "    ---- Attributes ----\n"
        "    ParameterType = NonZero\n"
        "    TacticValue = 0x0000000000000000"
    ) in text
    assert "Inputs =" not in text and "'Format/Datatype'" not in text


def test_layers_without_attributes_and_shape_tensors(tensorrt_double):
    text = describe_engine(ShapeTensorEngine(), show={"layers"})
    assert (
        "Layer 0    | reshape [Op: Shuffle]\n"
        "    {x [dtype=float32, shape=(-1, 4)], target [dtype=int32, shape=(2,)]}\n"
        "     -> {r [dtype=float32, shape=(-1, -1)]}"
    ) in text
    assert "---- Attributes ----" not in text
    # a shape tensor has no shape profile of its own to show
    assert "Tensor: target" in text and "Shapes: min=(2,)" not in text


def test_layer_names_only_verbosity(tensorrt_double):
    engine = FakeEngine(profiling_verbosity="LAYER_NAMES_ONLY")
    assert engine_layers(engine) == ["scale_shift", "nonzero"]
    text = describe_engine(engine, show={"layers", "attrs"})
    assert "Layer 0    | scale_shift\nLayer 1    | nonzero" in text


def test_split_format_fields_of_later_versions(tensorrt_double):
    """Later TensorRT versions write "Datatype" and "Format" apart instead of "Format/Datatype"."""
    import json

    class Inspector:
        def get_engine_information(self, fmt):
            tensor = {"Name": "a", "Dimensions": [1, 8], "Datatype": "Half", "Format": "Row major linear"}
            return json.dumps({"Layers": [{"Name": "l", "LayerType": "Op", "Inputs": [tensor], "Outputs": []}]})

    engine = FakeEngine()
    engine.create_engine_inspector = Inspector
    assert "    {a [dtype=float16, shape=(1, 8)]}\n     -> {}" in describe_engine(engine, show={"layers"})


def test_layers_only_on_request(tensorrt_double):
    text = describe_engine(FakeEngine())
    assert "---- 2 Layer(s) ----" in text and "scale_shift" not in text
