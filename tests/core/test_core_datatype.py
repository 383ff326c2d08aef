import copy
import pickle
import subprocess
import sys

import numpy as np
import pytest

from poly.core import DataType, DataTypeConversionException, DataTypeEntry, PolyException

NUMPY_BUILTIN = {
    "FLOAT64": np.float64,
    "FLOAT32": np.float32,
    "FLOAT16": np.float16,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "INT64": np.int64,
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
    "UINT64": np.uint64,
    "BOOL": np.bool_,
}

ONNX_VALUES = {
    "FLOAT32": 1,
    "UINT8": 2,
    "INT8": 3,
    "UINT16": 4,
    "INT16": 5,
    "INT32": 6,
    "INT64": 7,
    "STRING": 8,
    "BOOL": 9,
    "FLOAT16": 10,
    "FLOAT64": 11,
    "UINT32": 12,
    "UINT64": 13,
    "BFLOAT16": 16,
    "FLOAT8E4M3FN": 17,
    "FLOAT8E4M3FNUZ": 18,
    "FLOAT8E5M2": 19,
    "FLOAT8E5M2FNUZ": 20,
    "INT4": 22,
}


def test_members_and_properties():
    assert DataType.FLOAT32.name == "float32" and DataType.FLOAT32.itemsize == 4
    assert DataType.BFLOAT16.name == "bfloat16" and DataType.BFLOAT16.itemsize == 2
    assert DataType.FLOAT8E4M3FN.name == "float8e4m3fn" and DataType.FLOAT8E4M3FN.itemsize == 1
    assert DataType.INT4.itemsize == 0.5
    assert DataType.FLOAT16.is_floating and not DataType.FLOAT16.is_integral
    assert DataType.UINT64.is_integral and not DataType.UINT64.is_floating
    assert not DataType.BOOL.is_floating and not DataType.BOOL.is_integral
    assert str(DataType.INT64) == "int64" and repr(DataType.INT64) == "DataType.INT64"
    for member, entry in DataType.__members__.items():
        assert getattr(DataType, member) is entry and isinstance(entry, DataTypeEntry)


@pytest.mark.parametrize("member", list(NUMPY_BUILTIN))
def test_numpy_round_trip(member):
    entry = getattr(DataType, member)
    np_type = NUMPY_BUILTIN[member]
    assert DataType.from_dtype(np_type) is entry
    assert DataType.from_dtype(np.dtype(np_type)) is entry
    assert DataType.from_dtype(np.dtype(np_type), "numpy") is entry
    assert DataType.to_dtype(entry, "numpy") == np.dtype(np_type)
    assert entry.numpy() == np.dtype(np_type)
    assert DataType.from_dtype(np.zeros(1, dtype=np_type).dtype) is entry
    assert DataType.from_dtype(entry.name) is entry
    assert DataType.from_dtype(member) is entry


def test_python_types_and_numpy_strings():
    assert DataType.from_dtype(float) is DataType.FLOAT64
    assert DataType.from_dtype(bool) is DataType.BOOL
    assert DataType.from_dtype("f4") is DataType.FLOAT32
    assert DataType.from_dtype("half") is DataType.FLOAT16
    assert DataType.from_dtype("float8_e4m3fn") is DataType.FLOAT8E4M3FN
    assert DataType.from_dtype("float8e5m2") is DataType.FLOAT8E5M2
    assert DataType.from_dtype(np.dtype("<U3")) is DataType.STRING
    assert DataType.to_dtype(DataType.STRING, "numpy") == np.dtype(np.str_)


def test_target_alias_and_default():
    assert DataType.to_dtype(DataType.INT8) == np.dtype(np.int8)
    assert DataType.to_dtype(DataType.INT8, target="onnx") == 3
    assert DataType.from_dtype(3, source="onnx") is DataType.INT8


@pytest.mark.parametrize("member, value", list(ONNX_VALUES.items()))
def test_onnx_values_without_onnx(member, value):
    entry = getattr(DataType, member)
    assert DataType.to_dtype(entry, "onnx") == value
    assert DataType.from_dtype(value) is entry
    assert DataType.from_dtype(value, source_module="onnx") is entry
    assert DataType.from_dtype(np.int32(value), "onnx") is entry


def test_onnx_names():
    assert DataType.from_dtype("FLOAT", "onnx") is DataType.FLOAT32
    assert DataType.from_dtype("DOUBLE", "onnx") is DataType.FLOAT64


def test_onnx_mapping_matches_onnx():
    onnx = pytest.importorskip("onnx")
    names = dict(onnx.TensorProto.DataType.items())
    for entry in DataType.__members__.values():
        value = DataType.to_dtype(entry, "onnx")
        assert value in names.values(), entry
        assert DataType.from_dtype(value, "onnx") is entry
    assert DataType.from_dtype(onnx.TensorProto.FLOAT) is DataType.FLOAT32
    assert DataType.to_dtype(DataType.BFLOAT16, "onnx") == onnx.TensorProto.BFLOAT16
    assert onnx.helper.tensor_dtype_to_np_dtype(DataType.FLOAT16.onnx()) == np.float16


def test_onnxruntime_strings():
    assert DataType.from_dtype("tensor(float)") is DataType.FLOAT32
    assert DataType.from_dtype("tensor(double)") is DataType.FLOAT64
    assert DataType.from_dtype("tensor(bfloat16)", "onnxruntime") is DataType.BFLOAT16
    assert DataType.to_dtype(DataType.FLOAT32, "onnxruntime") == "tensor(float)"
    assert DataType.INT64.onnxruntime() == "tensor(int64)"
    for entry in DataType.__members__.values():
        assert DataType.from_dtype(entry.onnxruntime()) is entry


def _fake(module, class_name, **attrs):
    cls = type(class_name, (), {"__module__": module, **attrs})
    return cls


def test_tensorrt_types_by_duck_typing():
    TrtDataType = _fake("tensorrt", "DataType", __str__=lambda self: f"DataType.{self.name}")

    def make(name):
        obj = TrtDataType()
        obj.name = name
        return obj

    assert DataType.from_dtype(make("FLOAT")) is DataType.FLOAT32
    assert DataType.from_dtype(make("HALF")) is DataType.FLOAT16
    assert DataType.from_dtype(make("BF16"), "tensorrt") is DataType.BFLOAT16
    assert DataType.from_dtype(make("FP8")) is DataType.FLOAT8E4M3FN
    RtxDataType = _fake("tensorrt_rtx_bindings.tensorrt", "DataType")
    rtx = RtxDataType()
    rtx.name = "INT64"
    assert DataType.from_dtype(rtx) is DataType.INT64
    assert DataType.from_dtype("DataType.INT32", "tensorrt") is DataType.INT32


@pytest.fixture
def fresh_lazy_modules():
    """The conversions' lazy modules choose their module anew inside the test (after it has put a
    substitute in sys.modules) and again after it (when sys.modules is restored)."""
    from poly.core.arrays import datatype

    lazy = (datatype.tensorrt, datatype.torch, datatype.ml_dtypes)
    for module in lazy:
        module.reset()
    yield
    for module in lazy:
        module.reset()


def test_to_tensorrt_without_tensorrt(monkeypatch, fresh_lazy_modules):
    for name in ("tensorrt", "tensorrt_rtx", "tensorrt_rtx_bindings"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(DataTypeConversionException, match="pip install tensorrt"):
        DataType.to_dtype(DataType.FLOAT32, "tensorrt")


def test_to_tensorrt_with_a_stub_module(monkeypatch, fresh_lazy_modules):
    stub = type(sys)("tensorrt")
    stub.DataType = type("DataType", (), {"FLOAT": "trt-float", "HALF": "trt-half"})
    monkeypatch.setitem(sys.modules, "tensorrt", stub)
    monkeypatch.delenv("POLY_USE_TENSORRT_RTX", raising=False)  # the stub stands for full TensorRT
    assert DataType.FLOAT32.tensorrt() == "trt-float"
    assert DataType.to_dtype(DataType.FLOAT16, "tensorrt") == "trt-half"
    with pytest.raises(DataTypeConversionException):
        DataType.to_dtype(DataType.FLOAT64, "tensorrt")  # TensorRT has no float64


def test_torch_types_by_duck_typing(monkeypatch, fresh_lazy_modules):
    TorchDtype = _fake("torch", "dtype", __str__=lambda self: self.text)

    def make(text):
        obj = TorchDtype()
        obj.text = text
        return obj

    assert DataType.from_dtype(make("torch.float32")) is DataType.FLOAT32
    assert DataType.from_dtype(make("torch.bfloat16")) is DataType.BFLOAT16
    assert DataType.from_dtype("torch.float16", "torch") is DataType.FLOAT16
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(DataTypeConversionException, match="pip install torch"):
        DataType.FLOAT32.torch()


def test_bfloat16_numpy_needs_ml_dtypes():
    script = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "from poly.core import DataType, DataTypeConversionException\n"
        "try:\n    DataType.BFLOAT16.numpy()\nexcept DataTypeConversionException as err:\n    print(err)\n"
    )
    env = {"PYTHONPATH": ":".join(p for p in sys.path if p)}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert "pip install ml-dtypes" in out


@pytest.mark.parametrize(
    "name, member",
    [
        ("bfloat16", "BFLOAT16"),
        ("float8_e4m3fn", "FLOAT8E4M3FN"),
        ("float8_e5m2", "FLOAT8E5M2"),
        ("float8_e4m3fnuz", "FLOAT8E4M3FNUZ"),
        ("float8_e5m2fnuz", "FLOAT8E5M2FNUZ"),
        ("int4", "INT4"),
        ("float8_e8m0fnu", "FLOAT8E8M0"),
        ("float4_e2m1fn", "FLOAT4"),
    ],
)
def test_ml_dtypes_round_trip(name, member):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    if not hasattr(ml_dtypes, name):
        pytest.skip(f"ml_dtypes has no {name}")
    entry = getattr(DataType, member)
    np_dtype = np.dtype(getattr(ml_dtypes, name))
    assert DataType.from_dtype(np_dtype) is entry
    assert DataType.from_dtype(getattr(ml_dtypes, name)) is entry
    assert DataType.to_dtype(entry, "numpy") == np_dtype


def test_unknown_types_are_returned_unchanged_with_a_warning(capsys):
    assert DataType.from_dtype(np.complex64) is np.complex64
    assert DataType.from_dtype("no-such-type") == "no-such-type"
    assert "Could not convert" in capsys.readouterr().out


def test_errors():
    with pytest.raises(PolyException):
        DataType.from_dtype(None)
    with pytest.raises(PolyException, match="Unknown source module"):
        DataType.from_dtype(np.float32, "jax")
    with pytest.raises(PolyException, match="Unknown target module"):
        DataType.to_dtype(DataType.FLOAT32, "jax")
    assert DataType.to_dtype(np.float32, "numpy") is np.float32  # not a DataType: unchanged


def test_entries_are_singletons():
    entry = DataType.BFLOAT16
    assert copy.copy(entry) is entry
    assert copy.deepcopy([entry])[0] is entry
    assert pickle.loads(pickle.dumps(entry)) is entry
    assert DataType.from_dtype(entry) is entry
