"""Binding tensors to an execution context, without a GPU: TensorRT's False answers to
``set_input_shape`` / ``set_tensor_address`` become one error naming the tensor
(poly.trt.execution.tensor_binding, used by TrtRunner), on the execution-context double
(tests/fixtures/trt_double.py), whose answers follow TensorRT's documentation; and the
``stream`` key of device inputs' ``__cuda_array_interface__`` (poly.trt.execution.device_arrays)."""

from __future__ import annotations

import numpy as np
import pytest
from fixtures.trt_double import FakeEngine, ShapeTensorEngine

from poly.core import PolyException
from poly.trt.execution.device_arrays import device_view
from poly.trt.execution.tensor_binding import set_input_shape, set_tensor_address


def test_the_double_answers_set_input_shape_as_tensorrt_does(tensorrt_double):
    context = FakeEngine().create_execution_context()
    assert context.set_input_shape("x", (2, 4)) is True
    assert context.set_input_shape("x", (9, 4)) is False  # outside profile 0's max (8, 4)
    assert context.set_input_shape("x", (2, 5)) is False  # a static dimension disagrees
    assert context.set_input_shape("x", (2, 4, 1)) is False  # rank
    assert context.set_input_shape("y", (2, 4)) is False  # an output
    assert context.set_input_shape("nope", (2, 4)) is False
    assert context.shapes == {"x": (2, 4)}
    assert context.set_optimization_profile_async(1, 0) is True
    assert context.set_input_shape("x", (9, 4)) is True  # profile 1 allows 8..64


def test_the_double_answers_set_tensor_address_as_tensorrt_does(tensorrt_double):
    context = FakeEngine().create_execution_context()
    assert context.set_tensor_address("x", 0x7F0000000000) is True
    assert context.set_tensor_address("y", 0x7F0000000100 + 4) is False  # not 256-byte aligned
    assert context.set_tensor_address("nope", 0x7F0000000000) is False
    assert context.addresses == {"x": 0x7F0000000000}


def test_shape_tensor_inputs_are_read_from_host_memory(tensorrt_double):
    engine = ShapeTensorEngine()
    assert engine.is_shape_inference_io("target") and not engine.is_shape_inference_io("x")
    assert engine.get_tensor_location("target") == "HOST"
    context = engine.create_execution_context()
    assert context.get_tensor_shape("r") == (-1, -1)  # values unknown until the address is set
    target = np.array([4, 2], np.int32)
    assert context.set_input_shape("target", (2,)) is True
    assert context.set_input_shape("target", (3,)) is False  # its own shape is static
    assert context.set_tensor_address("target", target.ctypes.data) is True  # host memory: no alignment rule
    assert context.get_tensor_shape("r") == (4, 2)
    target[:] = [8, 1]  # read when needed, not copied at set_tensor_address
    assert context.get_tensor_shape("r") == (8, 1)


def test_inspector_json_has_tensorrts_shape(tensorrt_double):
    import json

    engine = ShapeTensorEngine()
    info = json.loads(engine.create_engine_inspector().get_engine_information("JSON"))
    assert info["Bindings"] == ["x", "target", "r"]
    (layer,) = info["Layers"]
    assert layer["Name"] == "reshape" and layer["LayerType"] == "Shuffle"
    assert [t["Name"] for t in layer["Inputs"]] == ["x", "target"]
    for tensor in layer["Inputs"] + layer["Outputs"]:
        assert {"Name", "Dimensions", "Format/Datatype", "Location"} <= set(tensor)
    assert layer["Inputs"][1]["Location"] == "Host" and layer["Inputs"][1]["Dimensions"] == [2]
    names_only = ShapeTensorEngine(profiling_verbosity="LAYER_NAMES_ONLY")
    assert json.loads(names_only.create_engine_inspector().get_engine_information("JSON"))["Layers"] == ["reshape"]


def test_refused_shapes_name_the_tensor_and_the_profile(tensorrt_double):
    engine = FakeEngine()
    context = engine.create_execution_context()
    set_input_shape(context, engine, "x", (3, 4), 0)
    with pytest.raises(PolyException, match=r"^runner \| Input tensor: x \| TensorRT refused shape \(20, 4\) "
                                            r"\(profile 0 allows \(1, 4\) to \(8, 4\)\)$"):
        set_input_shape(context, engine, "x", (20, 4), 0, prefix="runner | ")
    with pytest.raises(PolyException, match=r"Input tensor: z \| TensorRT refused shape \(1,\) \(the engine has no such"):
        set_input_shape(context, engine, "z", (1,), 0)
    shape_engine = ShapeTensorEngine()
    with pytest.raises(PolyException, match=r"Input tensor: target \| TensorRT refused shape \(3,\) "
                                            r"\(the shape tensor's shape is \(2,\)\)$"):
        set_input_shape(shape_engine.create_execution_context(), shape_engine, "target", (3,), 0)


def test_refused_addresses_name_the_tensor(tensorrt_double):
    context = FakeEngine().create_execution_context()
    set_tensor_address(context, "x", 0x10000)
    with pytest.raises(PolyException, match=r"^Output tensor: y \| TensorRT refused address 0x10004 "
                                            r"\(set_tensor_address returned False: .*256 bytes"):
        set_tensor_address(context, "y", 0x10004, kind="Output")


class _CudaArray:
    def __init__(self, **extra):
        self.__cuda_array_interface__ = {"shape": (2, 3), "typestr": "<f4", "data": (4096, False),
                                         "version": 3, **extra}


def test_device_inputs_carry_their_producer_stream():
    assert device_view("x", np.zeros(3)) is None
    view = device_view("x", _CudaArray())
    assert (view.ptr, view.shape, view.stream) == (4096, (2, 3), None)  # version 2: no key, nothing to wait for
    assert device_view("x", _CudaArray(stream=None)).stream is None
    assert device_view("x", _CudaArray(stream=1)).stream == 1  # legacy default stream
    assert device_view("x", _CudaArray(stream=2)).stream == 2  # per-thread default stream
    assert device_view("x", _CudaArray(stream=0x55D0C0DE)).stream == 0x55D0C0DE


def test_stream_zero_and_non_integers_are_refused():
    with pytest.raises(PolyException, match=r"Input tensor: x \| __cuda_array_interface__ 'stream' is 0, "
                                            r"which version 3 of the interface disallows"):
        device_view("x", _CudaArray(stream=0))
    with pytest.raises(PolyException, match=r"Input tensor: x \| .*'stream' must be None or an int, got 'a'"):
        device_view("x", _CudaArray(stream="a"))
