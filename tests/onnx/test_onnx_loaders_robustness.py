"""IR-version lowering for the installed ONNX-Runtime, unknown ops, and ONNX-Runtime errors in one line."""

import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from fixtures import onnx_models
from onnx import TensorProto, helper

from poly.core import PolyException
from poly.onnx.model.errors import (
    ModelLoadError,
    UnsupportedModelError,
    check_known_ops,
    explain_onnxruntime_error,
    find_unknown_ops,
)
from poly.onnx.model.io import OnnxFromPath, save_onnx
from poly.onnx.model.ir_version import (
    LowerIrVersion,
    lower_ir_version,
    onnxruntime_max_ir_version,
    onnxruntime_max_opset,
    required_ir_version,
)


def _relu(ir_version, opset, op="Relu", domain=""):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    node = helper.make_node(op, ["x"], ["y"], name="the_node", domain=domain)
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(helper.make_graph([node], "g", [x], [y]), opset_imports=opsets)
    model.ir_version = ir_version
    return model


def _session(model):
    options = ort.SessionOptions()
    options.log_severity_level = 4
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


X = np.array([-1.0, 0.0, 2.0], np.float32)


def test_onnxruntime_limits_are_read_from_onnxruntime():
    max_ir = onnxruntime_max_ir_version()
    max_opset = onnxruntime_max_opset()
    assert 7 <= max_ir <= onnx.IR_VERSION and 13 <= max_opset <= onnx.defs.onnx_opset_version()
    _session(_relu(max_ir, max_opset))  # accepted
    if max_ir < onnx.IR_VERSION:
        with pytest.raises(Exception, match="IR version"):
            _session(_relu(max_ir + 1, 17))


def test_newest_ir_version_is_lowered_with_a_warning(tmp_path, capsys):
    model = _relu(onnx.IR_VERSION, 17)  # what onnx.helper.make_model writes by default
    if onnx.IR_VERSION <= onnxruntime_max_ir_version():
        pytest.skip("the installed ONNX-Runtime reads the newest IR version")
    with pytest.raises(Exception, match="Unsupported model IR version"):
        _session(model)

    path = tmp_path / "new_ir.onnx"
    save_onnx(model, path)
    lowered = LowerIrVersion(OnnxFromPath(str(path)))()
    out = capsys.readouterr().out
    assert f"Lowering the model's IR version from {onnx.IR_VERSION} to {onnxruntime_max_ir_version()}" in out
    assert "[W]" in out
    assert lowered.ir_version == onnxruntime_max_ir_version()
    np.testing.assert_array_equal(_session(lowered).run(None, {"x": X})[0], np.maximum(X, 0))
    assert model.ir_version == onnx.IR_VERSION  # copied by default
    assert lower_ir_version(model, copy=False) is model and model.ir_version == onnxruntime_max_ir_version()


def test_model_within_limits_is_untouched(capsys):
    model = onnx_models.identity()
    assert lower_ir_version(model) == model
    assert "[W]" not in capsys.readouterr().out


def test_opset_too_new_for_onnxruntime_is_one_clear_error():
    too_new = onnxruntime_max_opset() + 1
    if too_new > onnx.defs.onnx_opset_version():
        pytest.skip("the installed ONNX-Runtime supports every opset onnx knows")
    with pytest.raises(UnsupportedModelError) as err:
        lower_ir_version(_relu(onnx.IR_VERSION, too_new))
    message = str(err.value)
    assert "\n" not in message
    assert f"opset {too_new}" in message and f"at most opset {onnxruntime_max_opset()}" in message
    assert ort.__version__ in message


def test_lowering_respects_what_opsets_and_types_need():
    # opset 17 was released with IR 8.
    assert required_ir_version(_relu(onnx.IR_VERSION, 17))[0] == 8
    assert lower_ir_version(_relu(onnx.IR_VERSION, 17), max_ir_version=8).ir_version == 8
    with pytest.raises(UnsupportedModelError, match="opset 17 of domain 'ai.onnx' needs IR version 8"):
        lower_ir_version(_relu(onnx.IR_VERSION, 17), max_ir_version=7)

    # A float8 initializer needs IR 9 whatever the opset.
    model = _relu(onnx.IR_VERSION, 17)
    model.graph.initializer.append(helper.make_tensor("f8", TensorProto.FLOAT8E4M3FN, [1], [1.0]))
    assert required_ir_version(model) == (9, "data type FLOAT8E4M3FN")
    with pytest.raises(UnsupportedModelError, match="data type FLOAT8E4M3FN needs IR version 9"):
        lower_ir_version(model, max_ir_version=8)
    assert required_ir_version(onnx_models.bf16_identity())[0] == 8  # bf16 (IR 4) < opset 17 (IR 8)
    light = OnnxFromPath(str(onnx_models.light_model_dir() / "light_resnet50.onnx"))()
    assert required_ir_version(light)[0] == 4  # opset 9


# -- unknown ops --------------------------------------------------------------------------------


def test_unknown_op_is_one_clear_error():
    model = _relu(10, 17, op="FooBar")
    assert find_unknown_ops(model) == [("the_node", "FooBar", "ai.onnx", 17)]
    with pytest.raises(UnsupportedModelError) as err:
        check_known_ops(model, "'model.onnx'")
    message = str(err.value)
    assert "\n" not in message
    assert "Unknown op 'FooBar' at node 'the_node'" in message and "'model.onnx'" in message


def test_op_of_a_later_opset_is_reported_as_such():
    with pytest.raises(UnsupportedModelError, match="'Gelu'.*not part of opset 17 .*only of later opsets"):
        check_known_ops(_relu(10, 17, op="Gelu"))
    check_known_ops(_relu(10, 20, op="Gelu"))


def test_known_ops_of_other_registries_pass():
    check_known_ops(_relu(10, 17, op="Gelu", domain="com.microsoft"))  # an ONNX-Runtime contrib op
    check_known_ops(_relu(10, 17, op="MyPlugin", domain="my.plugins"))  # a backend plugin: not judged
    assert find_unknown_ops(_relu(10, 17, op="NoSuchContribOp", domain="com.microsoft"))
    for name in ("light_resnet50", "light_inception_v2"):
        check_known_ops(OnnxFromPath(str(onnx_models.light_model_dir() / f"{name}.onnx"))())
    # Ops in subgraphs are checked too.
    model = onnx_models.control_flow()
    next(a.g for a in model.graph.node[0].attribute if a.name == "then_branch").node[1].op_type = "Addd"
    with pytest.raises(UnsupportedModelError, match="Unknown op 'Addd'"):
        check_known_ops(model)


# -- ONNX-Runtime's errors, explained -----------------------------------------------------------


def _ort_error(source):
    options = ort.SessionOptions()
    options.log_severity_level = 4
    with pytest.raises(Exception) as err:
        ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    return err.value


def test_explain_onnxruntime_errors(tmp_path):
    unknown = explain_onnxruntime_error(
        _ort_error(_relu(10, 17, op="FooBar").SerializeToString()), "'m.onnx'"
    )
    assert isinstance(unknown, UnsupportedModelError)
    assert (
        str(unknown)
        == "Unknown op 'FooBar': ONNX-Runtime knows no such operator at opset 17 (model: 'm.onnx')"
    )

    if onnx.IR_VERSION > onnxruntime_max_ir_version():
        ir = explain_onnxruntime_error(_ort_error(_relu(onnx.IR_VERSION, 17).SerializeToString()))
        assert f"IR version {onnx.IR_VERSION} is newer than ONNX-Runtime supports" in str(ir)

    # The CPU provider has no int16 Relu.
    x = helper.make_tensor_value_info("x", TensorProto.INT16, [3])
    y = helper.make_tensor_value_info("y", TensorProto.INT16, [3])
    relu = onnx_models._model(
        helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "r", [x], [y])
    )
    kernel = explain_onnxruntime_error(_ort_error(relu.SerializeToString()))
    assert "no kernel for op 'Relu' (opset 14) at node 'r'" in str(kernel)

    truncated = tmp_path / "t.onnx"
    truncated.write_bytes(onnx_models.mlp().SerializeToString()[:100])
    assert isinstance(explain_onnxruntime_error(_ort_error(str(truncated))), ModelLoadError)

    big = onnx_models.mlp()
    save_onnx(big, tmp_path / "ext.onnx", external_data_path="ext.data", size_threshold=0)
    os.remove(tmp_path / "ext.data")
    missing = explain_onnxruntime_error(_ort_error(str(tmp_path / "ext.onnx")))
    assert isinstance(missing, ModelLoadError) and "ext.data" in str(missing)

    other = explain_onnxruntime_error(RuntimeError("[ONNXRuntimeError] : 1 : FAIL : something odd\nmore"))
    assert (
        type(other) is PolyException
        and str(other) == "ONNX-Runtime failed: [ONNXRuntimeError] : 1 : FAIL : something odd"
    )
