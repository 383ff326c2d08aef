"""poly.onnx.model.io: loading and saving models (external data included) and the clear errors of bad files."""

import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from fixtures import onnx_models
from onnx import numpy_helper

from poly import func
from poly.core import PolyException
from poly.onnx.model.errors import ModelLoadError
from poly.onnx.model.io import (
    BytesFromOnnx,
    OnnxFromBytes,
    OnnxFromPath,
    SaveOnnx,
    bytes_from_onnx,
    onnx_from_bytes,
    onnx_from_path,
    save_onnx,
)


def _weights(model):
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def _big_mlp():
    """The fixture MLP with weights large enough to cross the external-data thresholds."""
    model = onnx_models.mlp()
    rng = np.random.default_rng(1)
    replaced = []
    for tensor in model.graph.initializer:
        array = numpy_helper.to_array(tensor)
        replaced.append(
            numpy_helper.from_array(rng.standard_normal(array.shape).astype(np.float32), tensor.name)
        )
    del model.graph.initializer[:]
    model.graph.initializer.extend(replaced)
    return model


def _run(model_or_path, feeds):
    source = model_or_path if isinstance(model_or_path, str) else model_or_path.SerializeToString()
    return ort.InferenceSession(source, providers=["CPUExecutionProvider"]).run(None, feeds)


def test_onnx_from_path_and_twin(tmp_path):
    path = onnx_models.save(onnx_models.branches(), tmp_path / "branches.onnx")
    lazy = OnnxFromPath(str(path))
    model = lazy()
    assert isinstance(model, onnx.ModelProto)
    assert model.SerializeToString() == onnx_models.branches().SerializeToString()
    # Lazy loaders can be called again and produce a fresh model each time.
    assert lazy() is not model
    assert onnx_from_path(path).SerializeToString() == model.SerializeToString()


def test_bytes_round_trip():
    model = onnx_models.multi_output()
    data = BytesFromOnnx(model)()
    assert data == model.SerializeToString()
    assert bytes_from_onnx(lambda: model) == data
    assert OnnxFromBytes(data)() == model
    assert onnx_from_bytes(lambda: data) == model
    # Chaining loaders: bytes -> model -> bytes.
    assert BytesFromOnnx(OnnxFromBytes(BytesFromOnnx(model)))() == data


def test_save_without_external_data_is_atomic(tmp_path):
    model = onnx_models.mlp()
    path = tmp_path / "sub" / "mlp.onnx"
    assert SaveOnnx(model, str(path))() is model
    assert os.listdir(path.parent) == ["mlp.onnx"]
    assert onnx.load(str(path)) == model
    # Overwriting leaves no temporary file behind either.
    save_onnx(onnx_models.branches(), path)
    assert os.listdir(path.parent) == ["mlp.onnx"]
    assert onnx.load(str(path)) == onnx_models.branches()


@pytest.mark.parametrize("location", ["", "weights.bin", "data/weights.bin"])
def test_save_external_data_one_file_round_trip(tmp_path, location):
    model = _big_mlp()
    before = model.SerializeToString()
    path = tmp_path / "model.onnx"
    SaveOnnx(model, str(path), external_data_path=location, size_threshold=0)()

    # The in-memory model is left exactly as it was.
    assert model.SerializeToString() == before
    data_path = tmp_path / (location or "model.onnx.data")
    assert data_path.is_file()
    total = sum(numpy_helper.to_array(t).nbytes for t in model.graph.initializer)
    assert data_path.stat().st_size >= total
    assert path.stat().st_size < total  # the weights are not in the model file

    structure = onnx.load(str(path), load_external_data=False)
    assert all(t.data_location == onnx.TensorProto.EXTERNAL for t in structure.graph.initializer)
    loaded = onnx_from_path(path)
    for name, array in _weights(model).items():
        np.testing.assert_array_equal(_weights(loaded)[name], array)

    # ONNX-Runtime reads the saved model with its external data, and computes the same.
    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    np.testing.assert_array_equal(_run(str(path), {"x": x})[0], _run(model, {"x": x})[0])


def test_save_external_data_threshold_and_file_per_tensor(tmp_path):
    model = _big_mlp()
    sizes = {t.name: numpy_helper.to_array(t).nbytes for t in model.graph.initializer}
    assert sizes == {"w1": 512, "b1": 64, "w2": 256}
    path = tmp_path / "model.onnx"
    save_onnx(model, path, external_data_path="", size_threshold=200, all_tensors_to_one_file=False)

    structure = onnx.load(str(path), load_external_data=False)
    external = {t.name for t in structure.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL}
    assert external == {"w1", "w2"}  # b1 (64 bytes) is under the threshold and stays inline
    assert sorted(os.listdir(tmp_path)) == ["model.onnx", "w1", "w2"]
    assert (tmp_path / "w1").stat().st_size == 512
    assert (tmp_path / "w2").stat().st_size == 256
    loaded = onnx_from_path(path)
    for name, array in _weights(model).items():
        np.testing.assert_array_equal(_weights(loaded)[name], array)


def test_external_data_dir_and_ignore_external_data(tmp_path):
    model = _big_mlp()
    save_onnx(model, tmp_path / "model.onnx", external_data_path="w.data", size_threshold=0)
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    os.replace(tmp_path / "model.onnx", moved / "model.onnx")

    structure = onnx_from_path(moved / "model.onnx", ignore_external_data=True)
    assert all(t.data_location == onnx.TensorProto.EXTERNAL for t in structure.graph.initializer)

    loaded = onnx_from_path(moved / "model.onnx", external_data_dir=str(tmp_path))
    for name, array in _weights(model).items():
        np.testing.assert_array_equal(_weights(loaded)[name], array)


def test_external_data_must_stay_in_model_directory(tmp_path):
    with pytest.raises(PolyException, match="inside the model's directory"):
        save_onnx(_big_mlp(), tmp_path / "m.onnx", external_data_path="../outside.data")


def test_saved_model_overwrites_stale_external_data(tmp_path):
    path = tmp_path / "model.onnx"
    save_onnx(_big_mlp(), path, external_data_path="w.data", size_threshold=0)
    model = onnx_models.mlp()
    save_onnx(model, path, external_data_path="w.data", size_threshold=0)
    for name, array in _weights(model).items():
        np.testing.assert_array_equal(_weights(onnx_from_path(path))[name], array)
    assert sorted(os.listdir(tmp_path)) == ["model.onnx", "w.data"]


# -- clear errors -------------------------------------------------------------------------------


def _one_line(err):
    message = str(err.value)
    assert "\n" not in message
    return message


def test_missing_file(tmp_path):
    path = tmp_path / "nope.onnx"
    with pytest.raises(ModelLoadError) as err:
        onnx_from_path(path)
    assert str(path) in _one_line(err) and "does not exist" in str(err.value)


def test_truncated_file(tmp_path):
    data = onnx_models.mlp().SerializeToString()
    path = tmp_path / "truncated.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelLoadError) as err:
        onnx_from_path(path)
    assert str(path) in _one_line(err) and "truncated" in str(err.value)


def test_file_cut_between_fields_is_still_rejected(tmp_path):
    # Cut right after the graph: protobuf parses it, but the opset imports are gone.
    model = onnx_models.mlp()
    data = model.SerializeToString()
    opsets = b"".join(b"\x42" + bytes([o.ByteSize()]) + o.SerializeToString() for o in model.opset_import)
    assert data.endswith(opsets)
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: -len(opsets)])
    with pytest.raises(ModelLoadError, match="truncated") as err:
        onnx_from_path(path)
    assert str(path) in _one_line(err)


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"hello, this is certainly not a model\n" * 20, "not an ONNX model"),
        (b'{"inputs": [1, 2, 3]}', "JSON"),
        (b"", "it is empty"),
        (bytes(range(256)) * 8, "not an ONNX model"),
    ],
)
def test_non_onnx_file(tmp_path, content, expected):
    path = tmp_path / "garbage.onnx"
    path.write_bytes(content)
    with pytest.raises(ModelLoadError) as err:
        onnx_from_path(path)
    assert str(path) in _one_line(err) and expected in str(err.value)


def test_non_onnx_bytes():
    with pytest.raises(ModelLoadError, match="not an ONNX model"):
        onnx_from_bytes(b"\x00\x01garbage" * 10)


def test_missing_external_data_file(tmp_path):
    path = tmp_path / "model.onnx"
    save_onnx(_big_mlp(), path, external_data_path="weights.data", size_threshold=0)
    os.remove(tmp_path / "weights.data")
    with pytest.raises(ModelLoadError) as err:
        onnx_from_path(path)
    message = _one_line(err)
    assert str(path) in message and "weights.data" in message and "does not exist" in message
    # Without the weights the structure still loads.
    assert len(onnx_from_path(path, ignore_external_data=True).graph.node) == 5


def test_truncated_external_data_file(tmp_path):
    path = tmp_path / "model.onnx"
    save_onnx(_big_mlp(), path, external_data_path="weights.data", size_threshold=0)
    data_path = tmp_path / "weights.data"
    data_path.write_bytes(data_path.read_bytes()[:100])
    with pytest.raises(ModelLoadError, match="truncated") as err:
        onnx_from_path(path)
    assert "weights.data" in _one_line(err)


# -- composition and packaging ------------------------------------------------------------------


def test_func_extend_on_loader(tmp_path):
    path = onnx_models.save(onnx_models.identity(), tmp_path / "identity.onnx")

    @func.extend(OnnxFromPath(str(path)))
    def load_model(model):
        model.graph.name = "MyIdentity"  # returns None: the loader's model is passed on

    model = load_model()
    assert isinstance(model, onnx.ModelProto)
    assert model.graph.name == "MyIdentity"

    @func.extend(BytesFromOnnx(load_model))
    def size_of(data):
        return len(data)

    assert size_of() == len(model.SerializeToString())


def test_import_is_lazy_and_polygraphy_paths_work():
    code = (
        "import sys\n"
        "import poly.onnx, poly.backend.onnx, poly.backend.onnxrt\n"
        "heavy = [m for m in ('onnx', 'onnxruntime', 'onnx_graphsurgeon') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "from poly.backend.onnx import ModifyOutputs, OnnxFromPath, gs_from_onnx, FoldConstants, InferShapes\n"
        "from poly.backend.onnxrt import OnnxrtRunner, SessionFromOnnx, session_from_onnx\n"
        "from poly.onnx import ModifyOutputs as M2, OnnxRefRunner\n"
        "assert M2 is ModifyOutputs\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_func_extend_works_on_every_loader(tmp_path):
    from poly.onnx import (
        BytesFromOnnx,
        ConvertToFp16,
        ExtractSubgraph,
        FoldConstants,
        GsFromOnnx,
        InferShapes,
        LowerIrVersion,
        ModifyOutputs,
        OnnxFromBytes,
        OnnxFromGs,
        OnnxFromPath,
        SaveOnnx,
    )

    model = onnx_models.branches()
    path = onnx_models.save(model, tmp_path / "m.onnx")
    loaders = [
        OnnxFromPath(str(path)),
        OnnxFromBytes(model.SerializeToString()),
        BytesFromOnnx(model),
        SaveOnnx(model, str(tmp_path / "saved.onnx")),
        GsFromOnnx(model),
        OnnxFromGs(GsFromOnnx(model)),
        ModifyOutputs(model, outputs=["a"]),
        InferShapes(model),
        FoldConstants(model),
        ExtractSubgraph(model, ["a"], ["a2"]),
        ConvertToFp16(model),
        LowerIrVersion(model),
    ]
    seen = []
    for loader in loaders:
        seen.clear()

        @func.extend(loader)
        def extended(result):
            seen.append(result)

        result = extended()
        assert seen == [result] and result is not None, type(loader).__name__

        @func.extend(loader)
        def replaced(result):
            return "replaced"

        assert replaced() == "replaced"


def test_models_over_the_protobuf_limit(tmp_path, monkeypatch, capsys):
    from poly.onnx.model import io as onnx_io

    # Pretend the limit is tiny: saving then goes to external data by itself, with a warning.
    monkeypatch.setattr(onnx_io, "PROTOBUF_THRESHOLD", 100)
    model = _big_mlp()
    save_onnx(model, tmp_path / "huge.onnx")
    assert "exceeds the protobuf limit" in capsys.readouterr().out
    assert sorted(os.listdir(tmp_path)) == ["huge.onnx", "huge.onnx.data"]
    for name, array in _weights(model).items():
        np.testing.assert_array_equal(_weights(onnx_from_path(tmp_path / "huge.onnx"))[name], array)

    monkeypatch.setattr(onnx_io, "model_size", lambda m: 3 * 2**30)
    with pytest.raises(PolyException, match="Cannot serialize an ONNX model of 3.00 GiB to bytes"):
        bytes_from_onnx(model)
