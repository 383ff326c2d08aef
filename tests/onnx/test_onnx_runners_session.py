"""SessionFromOnnx: model sources, providers, options, IR-version lowering and clear errors."""

import inspect
import os
import re
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from fixtures import onnx_models
from onnx import TensorProto, helper

from poly.core import PolyException
from poly.onnx.model.errors import ModelLoadError, UnsupportedModelError
from poly.onnx.runners.onnxrt_runner import OnnxrtRunner
from poly.onnx.runners.ref_runner import OnnxRefRunner
from poly.onnx.runners.session import SessionFromOnnx, ort_error_message, resolve_providers, session_from_onnx

X = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)


def ort_max_ir():
    """The newest IR version the installed ONNX-Runtime reads, or None when it reads onnx's newest."""
    model = onnx_models.identity()
    model.ir_version = onnx.IR_VERSION
    try:
        onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception as err:
        match = re.search(r"max supported IR version: (\d+)", str(err))
        assert match, f"unexpected refusal: {err}"
        return int(match.group(1))
    return None


MAX_IR = ort_max_ir()
needs_ir_refusal = pytest.mark.skipif(
    MAX_IR is None, reason=f"the installed onnxruntime reads IR version {onnx.IR_VERSION}: nothing to lower"
)


def run_identity(sess):
    with OnnxrtRunner(sess) as runner:
        return runner.infer({"x": X})["y"]


# -- model sources ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["str", "pathlike", "bytes", "proto", "callable-proto", "callable-path"])
def test_model_sources(kind, tmp_path):
    model = onnx_models.identity()
    path = onnx_models.save(model, tmp_path / "identity.onnx")
    source = {
        "str": str(path),
        "pathlike": Path(path),
        "bytes": model.SerializeToString(),
        "proto": model,
        "callable-proto": lambda: model,
        "callable-path": lambda: str(path),
    }[kind]
    loader = SessionFromOnnx(source)
    sess = loader()
    assert isinstance(sess, onnxruntime.InferenceSession)
    np.testing.assert_array_equal(run_identity(SessionFromOnnx(source)), X)


def test_loader_is_lazy():
    calls = []
    loader = SessionFromOnnx(lambda: calls.append(1) or onnx_models.identity())
    assert calls == []
    loader()
    loader()
    assert calls == [1, 1]


def test_immediately_evaluated_twin():
    params = inspect.signature(session_from_onnx).parameters
    assert list(params) == ["model_bytes", "providers", "graph_optimization_level", "session_options",
                            "custom_op_libs"]
    sess = session_from_onnx(onnx_models.identity().SerializeToString(), providers=["cpu"])
    assert sess.get_providers() == ["CPUExecutionProvider"]


def test_rejects_other_objects():
    with pytest.raises(PolyException, match=r"path, serialized bytes, an onnx.ModelProto.*got: int"):
        SessionFromOnnx(42)()


# -- providers and options ----------------------------------------------------------------


@pytest.mark.parametrize(
    "requested", [None, ["cpu"], ["CPU"], ["CPUExecutionProvider"], "cpu", [("cpu", {})]]
)
def test_cpu_provider_names(requested):
    sess = SessionFromOnnx(onnx_models.identity(), providers=requested)()
    assert sess.get_providers() == ["CPUExecutionProvider"]


def test_short_provider_names_map_to_ort_names():
    available = onnxruntime.get_available_providers()
    assert resolve_providers(["cpu"]) == ["CPUExecutionProvider"]
    assert resolve_providers([("cpu", {"arena_extend_strategy": "kSameAsRequested"})]) == [
        ("CPUExecutionProvider", {"arena_extend_strategy": "kSameAsRequested"})
    ]
    for short, full in [("cuda", "CUDAExecutionProvider"), ("trt", "TensorrtExecutionProvider")]:
        if full in available:
            assert resolve_providers([short]) == [full]
        else:
            with pytest.raises(
                PolyException, match=rf"'{short}'.*available providers are: .*onnxruntime-gpu"
            ):
                resolve_providers([short])


def test_unknown_provider_is_a_clear_error():
    with pytest.raises(PolyException, match=r"execution provider: 'warp-drive'; available providers are: \["):
        SessionFromOnnx(onnx_models.identity(), providers=["warp-drive"])()


@pytest.mark.parametrize(
    "level, expected",
    [
        ("disable", "ORT_DISABLE_ALL"),
        ("basic", "ORT_ENABLE_BASIC"),
        ("extended", "ORT_ENABLE_EXTENDED"),
        ("ORT_ENABLE_ALL", "ORT_ENABLE_ALL"),
        (onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC, "ORT_ENABLE_BASIC"),
    ],
)
def test_graph_optimization_level(level, expected):
    sess = SessionFromOnnx(onnx_models.constant_foldable(), graph_optimization_level=level)()
    assert sess.get_session_options().graph_optimization_level == getattr(
        onnxruntime.GraphOptimizationLevel, expected
    )


def test_unknown_graph_optimization_level():
    with pytest.raises(PolyException, match="Unknown graph optimization level: 'ludicrous'"):
        SessionFromOnnx(onnx_models.identity(), graph_optimization_level="ludicrous")()


def test_session_options_are_used():
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.enable_profiling = False
    sess = SessionFromOnnx(
        onnx_models.identity(), session_options=options, graph_optimization_level="basic"
    )()
    used = sess.get_session_options()
    assert used.intra_op_num_threads == 1
    assert used.graph_optimization_level == onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC


def test_session_options_as_a_dict_are_set_over_the_defaults_and_pickle():
    import pickle

    loader = SessionFromOnnx(onnx_models.identity(), session_options={"intra_op_num_threads": 1,
                                                                      "inter_op_num_threads": 1})
    used = pickle.loads(pickle.dumps(loader))().get_session_options()
    assert (used.intra_op_num_threads, used.inter_op_num_threads) == (1, 1)
    # the defaults the dict does not name are kept (ONNX-Runtime's own warnings stay quiet)
    assert used.log_severity_level == 3


def test_session_options_dict_with_an_unknown_option_names_it():
    with pytest.raises(PolyException, match="no option 'intra_threads'"):
        SessionFromOnnx(onnx_models.identity(), session_options={"intra_threads": 1})()


def test_default_threads_follow_cpu_affinity():
    sess = SessionFromOnnx(onnx_models.identity())()
    assert sess.get_session_options().intra_op_num_threads == len(os.sched_getaffinity(0))


# -- IR version lowering -------------------------------------------------------------------


@needs_ir_refusal
def test_newest_ir_version_is_lowered_with_a_warning(capsys):
    model = onnx_models.identity()
    model.ir_version = onnx.IR_VERSION
    np.testing.assert_array_equal(run_identity(SessionFromOnnx(model)), X)
    out = capsys.readouterr().out
    assert re.search(
        rf"\[W\] The ONNX model \(graph 'identity'\) has IR version {onnx.IR_VERSION}, newer than "
        rf"ONNX-Runtime .* \(at most {MAX_IR}\); loading it as IR version {MAX_IR}",
        out,
    ), out
    # The caller's model is left as it was.
    assert model.ir_version == onnx.IR_VERSION


@needs_ir_refusal
@pytest.mark.parametrize("kind", ["path", "bytes"])
def test_newest_ir_version_from_path_and_bytes(kind, tmp_path, capsys):
    model = onnx_models.mlp()
    model.ir_version = onnx.IR_VERSION
    path = onnx_models.save(model, tmp_path / "new_ir.onnx")
    source = str(path) if kind == "path" else model.SerializeToString()
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    with OnnxrtRunner(SessionFromOnnx(source)) as runner:
        lowered = runner.infer({"x": x})["probs"]
    with OnnxRefRunner(source) as runner:
        reference = runner.infer({"x": x})["probs"]
    assert np.max(np.abs(lowered - reference)) <= 1e-5
    out = capsys.readouterr().out
    label = f"'{path}'" if kind == "path" else "The serialized ONNX model"
    assert (
        f"[W] {label}" in out
        and f"loading it as IR version {MAX_IR}, which its opsets and data types allow" in out
    )
    assert onnx.load(str(path)).ir_version == onnx.IR_VERSION  # the file is not rewritten


@needs_ir_refusal
def test_new_ir_with_external_data_is_lowered(tmp_path):
    model = onnx_models.mlp()
    model.ir_version = onnx.IR_VERSION
    path = tmp_path / "ext" / "model.onnx"
    path.parent.mkdir()
    onnx.save_model(model, str(path), save_as_external_data=True, location="weights.bin", size_threshold=0)
    assert (path.parent / "weights.bin").exists()
    x = np.ones((2, 8), np.float32)
    with OnnxrtRunner(SessionFromOnnx(str(path))) as runner:
        out = runner.infer({"x": x})["probs"]
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-6)


@needs_ir_refusal
def test_ir_version_that_cannot_be_lowered_is_one_clear_error():
    # An opset newer than any that the readable IR versions define cannot be lowered.
    opset = next(
        (
            ops
            for ops in range(1, onnx.defs.onnx_opset_version() + 1)
            if helper.find_min_ir_version_for([helper.make_opsetid("", ops)], ignore_unknown=True) > MAX_IR
        ),
        None,
    )
    if opset is None:
        pytest.skip(f"every opset onnx knows exists in IR version {MAX_IR}")
    needed = helper.find_min_ir_version_for([helper.make_opsetid("", opset)])
    model = onnx_models.identity()
    model.ir_version = onnx.IR_VERSION
    model.opset_import[0].version = opset
    with pytest.raises(
        UnsupportedModelError,
        match=rf"has IR version {onnx.IR_VERSION}, but ONNX-Runtime .* reads at most IR version {MAX_IR}, "
        rf"and the model cannot be lowered to it: opset {opset} of domain 'ai.onnx' needs IR version "
        rf"{needed}\. Upgrade ONNX-Runtime",
    ):
        SessionFromOnnx(model)()


@needs_ir_refusal
def test_opset_unknown_to_onnx_is_not_lowered():
    model = onnx_models.identity()
    model.ir_version = onnx.IR_VERSION
    model.opset_import[0].version = 999
    with pytest.raises(
        UnsupportedModelError, match=r"cannot be lowered to it: opset 999 of domain 'ai.onnx'"
    ):
        SessionFromOnnx(model)()


# -- bad models -----------------------------------------------------------------------------


@pytest.mark.parametrize("runner_kind", ["onnxrt", "onnx-ref"])
@pytest.mark.parametrize("payload", [b"garbage", b"\x00\x01\x02\xff" * 64, b"ir_version: 7\ngraph {}\n"])
def test_garbage_bytes_are_one_clear_error(runner_kind, payload):
    make = {"onnxrt": lambda m: OnnxrtRunner(SessionFromOnnx(m)), "onnx-ref": OnnxRefRunner}[runner_kind]
    with pytest.raises(
        ModelLoadError, match=r"^The serialized ONNX model \(\d+ bytes\) is not a valid ONNX model"
    ):
        make(payload).activate()


@pytest.mark.parametrize("runner_kind", ["onnxrt", "onnx-ref"])
@pytest.mark.parametrize("content", ["truncated", "text"])
def test_truncated_or_foreign_file_names_the_file(runner_kind, content, tmp_path):
    path = tmp_path / "broken.onnx"
    if content == "truncated":
        data = onnx_models.mlp().SerializeToString()
        path.write_bytes(data[: len(data) // 2])
    else:
        path.write_text("this is not an ONNX model\n" * 10)
    make = {"onnxrt": lambda m: OnnxrtRunner(SessionFromOnnx(m)), "onnx-ref": OnnxRefRunner}[runner_kind]
    with pytest.raises(ModelLoadError) as info:
        make(str(path)).activate()
    message = str(info.value)
    assert f"'{path}'" in message and "not a valid ONNX model" in message
    assert "\n" not in message and "[ONNXRuntimeError]" not in message


@pytest.mark.parametrize("runner_kind", ["onnxrt", "onnx-ref"])
def test_missing_file(runner_kind, tmp_path):
    make = {"onnxrt": lambda m: OnnxrtRunner(SessionFromOnnx(m)), "onnx-ref": OnnxRefRunner}[runner_kind]
    with pytest.raises(ModelLoadError, match=r"Model file not found: '.*nowhere\.onnx'"):
        make(str(tmp_path / "nowhere.onnx")).activate()


@pytest.mark.parametrize("runner_kind", ["onnxrt", "onnx-ref"])
def test_missing_external_data_file(runner_kind, tmp_path):
    path = tmp_path / "model.onnx"
    onnx.save_model(
        onnx_models.mlp(), str(path), save_as_external_data=True, location="w.bin", size_threshold=0
    )
    (tmp_path / "w.bin").unlink()
    make = {"onnxrt": lambda m: OnnxrtRunner(SessionFromOnnx(m)), "onnx-ref": OnnxRefRunner}[runner_kind]
    with pytest.raises(ModelLoadError) as info:
        make(str(path)).activate()
    message = str(info.value)
    assert f"'{path}'" in message and "w.bin" in message, message
    assert "\n" not in message


def unknown_op_model():
    graph = helper.make_graph(
        [helper.make_node("NoSuchOp", ["x"], ["y"], name="mystery")],
        "unknown_op",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    return model


def test_unknown_op_is_one_clear_error():
    with pytest.raises(PolyException) as info:
        SessionFromOnnx(unknown_op_model())()
    message = str(info.value)
    assert message.startswith(
        "ONNX-Runtime could not create a session for the ONNX model (graph 'unknown_op'): "
    )
    assert "NoSuchOp" in message and "\n" not in message and "/onnxruntime_src/" not in message
    with pytest.raises(
        UnsupportedModelError, match=r"reference evaluator cannot run the ONNX model .*NoSuchOp"
    ):
        OnnxRefRunner(unknown_op_model()).activate()


def test_ort_error_message_is_cleaned():
    raw = (
        "[ONNXRuntimeError] : 1 : FAIL : /onnxruntime_src/onnxruntime/core/graph/model.cc:256 "
        "onnxruntime::Model::Model(onnx::ModelProto&&, const onnxruntime::PathString&, "
        "const onnxruntime::IOnnxRuntimeOpSchemaRegistryList*, const onnxruntime::logging::Logger&, "
        "const onnxruntime::ModelOptions&) Unsupported model IR version: 14, max supported IR version: 13\n"
    )
    assert (
        ort_error_message(RuntimeError(raw))
        == "Unsupported model IR version: 14, max supported IR version: 13"
    )
    assert (
        ort_error_message(RuntimeError("[ONNXRuntimeError] : 7 : INVALID_PROTOBUF : Failed.\n")) == "Failed."
    )
    assert ort_error_message(RuntimeError("plain\nmulti-line\n")) == "plain multi-line"
    nested = (
        "[ONNXRuntimeError] : 1 : FAIL : Exception during initialization: /onnxruntime_src/onnxruntime/core/"
        "providers/cpu/nn/lrn.h:23 onnxruntime::LRN<T>::LRN(const onnxruntime::OpKernelInfo&) [with T = float] "
        "size_ % 2 == 1 was false. "
    )
    assert (
        ort_error_message(RuntimeError(nested))
        == "Exception during initialization: size_ % 2 == 1 was false."
    )


def test_model_too_large_to_serialize_goes_through_a_file(monkeypatch):
    # Models of 2 GiB or more cannot be serialized; lower the threshold to take that path here.
    import poly.onnx.runners.model_source as model_source

    monkeypatch.setattr(model_source, "PROTOBUF_LIMIT", 100)
    model = onnx_models.mlp()
    before = model.SerializeToString()
    x = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)
    with OnnxrtRunner(SessionFromOnnx(model)) as runner:
        through_file = runner.infer({"x": x})["probs"]
    monkeypatch.undo()
    with OnnxrtRunner(SessionFromOnnx(model)) as runner:
        np.testing.assert_array_equal(runner.infer({"x": x})["probs"], through_file)
    assert model.SerializeToString() == before  # the caller's tensors were not moved out


@pytest.mark.parametrize("source", ["bytes", "path"])
def test_a_session_loader_is_not_changed_by_being_called(source, tmp_path, monkeypatch):
    """With the internal correctness checks on, calling the loader must leave it as it was; the
    model's name for errors travels on the session instead."""
    from poly.core import config
    from poly.onnx.runners.session import session_model_label

    monkeypatch.setattr(config, "INTERNAL_CORRECTNESS_CHECKS", True)
    model = onnx_models.identity()
    if source == "path":
        model_arg = str(tmp_path / "identity.onnx")
        onnx.save(model, model_arg)
    else:
        model_arg = model.SerializeToString()
    loader = SessionFromOnnx(model_arg)
    before = dict(vars(loader))
    sess = loader()
    assert vars(loader) == before
    label = session_model_label(sess)
    assert label and ("identity.onnx" in label if source == "path" else "serialized" in label)
    with OnnxrtRunner(sess) as runner:
        assert runner.infer({"x": X})["y"].shape == X.shape
