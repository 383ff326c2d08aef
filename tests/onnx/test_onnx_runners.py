"""OnnxrtRunner and OnnxRefRunner: agreement on the fixture models, the runner interface, input checks."""

import numpy as np
import onnx
import pytest
from fixtures import onnx_models
from onnx import TensorProto, helper

from poly.core import DataType, PolyException, TensorMetadata
from poly.onnx.runners.onnxrt_runner import OnnxrtRunner
from poly.onnx.runners.ref_runner import OnnxRefRunner
from poly.onnx.runners.session import SessionFromOnnx

RUNNERS = {
    "onnxrt": lambda model: OnnxrtRunner(SessionFromOnnx(model)),
    "onnx-ref": OnnxRefRunner,
}


def random_feed(meta, dims=None, seed=0):
    """Data for every input of ``meta``; dynamic dimensions take their value from ``dims`` (default 2)."""
    rng = np.random.default_rng(seed)
    dims = dims or {}
    feed = {}
    for name, (dtype, shape) in meta.items():
        concrete = [dim if isinstance(dim, int) and dim >= 0 else dims.get(dim, 2) for dim in shape]
        np_dtype = dtype.numpy()
        if np_dtype == np.bool_:
            feed[name] = rng.random(concrete) > 0.5
        elif dtype.is_integral:
            feed[name] = rng.integers(-5, 5, size=concrete).astype(np_dtype)
        else:
            feed[name] = rng.standard_normal(concrete).astype(np.float32).astype(np_dtype)
    return feed


def run_both(model, feed):
    outputs = {}
    for key, make in RUNNERS.items():
        with make(model) as runner:
            outputs[key] = runner.infer(feed)
    return outputs["onnxrt"], outputs["onnx-ref"]


def max_abs_diff(a, b):
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0


# Model -> (absolute tolerance between ORT and the reference, dynamic dimension sizes to try).
# 0 means bitwise equal. Measured with onnxruntime 1.31 / onnx 1.23: every model is bitwise
# equal except branches (tanh, 6e-8), mlp (9e-8) and fp16_mlp (4.9e-4, one fp16 ulp in [0.5, 1)),
# worst over 5 seeds.
AGREEMENT = {
    "identity": (0, [{}]),
    "dynamic_identity": (0, [{"N": 1, "H": 2, "W": 2}, {"N": 3, "H": 5, "W": 7}, {"N": 2, "H": 1, "W": 1}]),
    "multi_output": (1e-6, [{}]),
    "branches": (1e-6, [{}]),
    "control_flow": (0, [{}]),
    "constant_foldable": (0, [{}]),
    "mlp": (1e-5, [{"batch": 1}, {"batch": 5}]),
    "fp16_mlp": (1e-2, [{"batch": 1}, {"batch": 5}]),
    "bf16_identity": (0, [{}]),
}


@pytest.mark.parametrize("model_name", list(AGREEMENT))
def test_ort_and_reference_agree_on_fixture_models(model_name):
    model = onnx_models.ALL[model_name]()
    tolerance, dim_sets = AGREEMENT[model_name]
    expected_names = [out.name for out in model.graph.output]
    for seed, dims in enumerate(dim_sets):
        with OnnxrtRunner(SessionFromOnnx(model)) as runner:
            feed = random_feed(runner.get_input_metadata(use_numpy_dtypes=False), dims, seed=seed)
            ort_out = runner.infer(feed)
        with OnnxRefRunner(model) as runner:
            ref_out = runner.infer(feed)
        assert list(ort_out) == expected_names == list(ref_out)
        for name in expected_names:
            a, b = ort_out[name], ref_out[name]
            assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
            assert a.shape == b.shape and a.dtype == b.dtype, (name, a.shape, b.shape, a.dtype, b.dtype)
            if tolerance == 0:
                np.testing.assert_array_equal(a, b, err_msg=f"{model_name}:{name} with {dims}")
            else:
                assert max_abs_diff(a, b) <= tolerance, (model_name, name, dims, max_abs_diff(a, b))


@pytest.mark.parametrize("cond", [True, False])
def test_control_flow_takes_both_branches(cond):
    model = onnx_models.control_flow()
    x = np.array([1.0, -2.0, 0.5], np.float32)
    feed = {"x": x, "cond": np.array(cond)}
    ort_out, ref_out = run_both(model, feed)
    expected = x + 1 if cond else x * 3
    np.testing.assert_array_equal(ort_out["y"], expected)
    np.testing.assert_array_equal(ref_out["y"], expected)


def test_outputs_are_correct_not_just_equal():
    # Independent of either runner: the fixture's own arithmetic in NumPy.
    x = np.array([[-1.0, 0.0, 2.0], [3.0, -4.0, 0.5]], np.float32)
    ort_out, ref_out = run_both(onnx_models.multi_output(), {"x": x})
    relu = np.maximum(x, 0)
    expected_sum = x + 1 / (1 + np.exp(-relu))
    for out in (ort_out, ref_out):
        assert list(out) == ["sum", "r"]
        np.testing.assert_array_equal(out["r"], relu)
        np.testing.assert_allclose(out["sum"], expected_sum, rtol=1e-6)


# -- dtypes -------------------------------------------------------------------------------


def typed_io_model():
    """Inputs and outputs of bool, int32, int64 and float16."""
    inputs = [
        helper.make_tensor_value_info("b", TensorProto.BOOL, [3]),
        helper.make_tensor_value_info("i32", TensorProto.INT32, [3]),
        helper.make_tensor_value_info("i64", TensorProto.INT64, ["n"]),
        helper.make_tensor_value_info("h", TensorProto.FLOAT16, [3]),
    ]
    outputs = [
        helper.make_tensor_value_info("not_b", TensorProto.BOOL, [3]),
        helper.make_tensor_value_info("i32_sq", TensorProto.INT32, [3]),
        helper.make_tensor_value_info("i64_plus", TensorProto.INT64, ["n"]),
        helper.make_tensor_value_info("h_abs", TensorProto.FLOAT16, [3]),
    ]
    one = onnx.numpy_helper.from_array(np.array(1, np.int64), "one")
    nodes = [
        helper.make_node("Not", ["b"], ["not_b"]),
        helper.make_node("Mul", ["i32", "i32"], ["i32_sq"]),
        helper.make_node("Add", ["i64", "one"], ["i64_plus"]),
        helper.make_node("Abs", ["h"], ["h_abs"]),
    ]
    graph = helper.make_graph(nodes, "typed_io", inputs, outputs, initializer=[one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


def bf16_io_model():
    """bfloat16 in, bfloat16 and float32 out: y = Identity(x), f = Cast(x, float)."""
    x = helper.make_tensor_value_info("x", TensorProto.BFLOAT16, ["n"])
    outputs = [
        helper.make_tensor_value_info("y", TensorProto.BFLOAT16, ["n"]),
        helper.make_tensor_value_info("f", TensorProto.FLOAT, ["n"]),
    ]
    nodes = [
        helper.make_node("Identity", ["x"], ["y"]),
        helper.make_node("Cast", ["x"], ["f"], to=TensorProto.FLOAT),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "bf16_io", [x], outputs), opset_imports=[helper.make_opsetid("", 17)]
    )
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


@pytest.mark.parametrize("runner_kind", list(RUNNERS))
def test_bool_int_float16_inputs_and_outputs(runner_kind):
    feed = {
        "b": np.array([True, False, True]),
        "i32": np.array([-3, 0, 7], np.int32),
        "i64": np.array([5, -1, 0, 2**40], np.int64),
        "h": np.array([-1.5, 0.25, -65504], np.float16),
    }
    with RUNNERS[runner_kind](typed_io_model()) as runner:
        meta = runner.get_input_metadata(use_numpy_dtypes=False)
        assert [meta[n].dtype for n in feed] == [
            DataType.BOOL,
            DataType.INT32,
            DataType.INT64,
            DataType.FLOAT16,
        ]
        out = runner.infer(feed)
    np.testing.assert_array_equal(out["not_b"], [False, True, False])
    np.testing.assert_array_equal(out["i32_sq"], np.array([9, 0, 49], np.int32))
    np.testing.assert_array_equal(out["i64_plus"], np.array([6, 0, 1, 2**40 + 1], np.int64))
    np.testing.assert_array_equal(out["h_abs"], np.array([1.5, 0.25, 65504], np.float16))
    assert [out[n].dtype for n in out] == [np.bool_, np.int32, np.int64, np.float16]


@pytest.mark.parametrize("runner_kind", list(RUNNERS))
def test_bfloat16_inputs_and_outputs(runner_kind):
    bf16 = DataType.BFLOAT16.numpy()
    x = np.array([1.5, -2.0, 3.25, 0.1, 1e30], np.float32).astype(bf16)
    with RUNNERS[runner_kind](bf16_io_model()) as runner:
        assert runner.get_input_metadata(use_numpy_dtypes=False)["x"].dtype == DataType.BFLOAT16
        out = runner.infer({"x": x})
        with pytest.raises(PolyException, match=r"x .*dtype: float32; expected: bfloat16"):
            runner.infer({"x": x.astype(np.float32)})
    assert out["y"].dtype == bf16
    np.testing.assert_array_equal(out["y"].view(np.uint16), x.view(np.uint16))
    np.testing.assert_array_equal(out["f"], x.astype(np.float32))


# -- the runner interface -----------------------------------------------------------------


@pytest.mark.parametrize("runner_kind", list(RUNNERS))
def test_input_errors_name_the_input_expected_and_given(runner_kind):
    model = onnx_models.dynamic_identity()
    good = np.zeros((2, 1, 3, 4), np.float32)
    with RUNNERS[runner_kind](model) as runner:
        with pytest.raises(
            PolyException, match=r"Missing input\(s\) \['X'\].*expected inputs: \['X'\], given: \[\]"
        ):
            runner.infer({})
        with pytest.raises(
            PolyException, match=r"Unexpected input\(s\) \['extra'\].*given: \['X', 'extra'\]"
        ):
            runner.infer({"X": good, "extra": good})
        with pytest.raises(PolyException, match=r"X .*unexpected dtype: float64; expected: float32"):
            runner.infer({"X": good.astype(np.float64)})
        with pytest.raises(
            PolyException, match=r"X .*incompatible shape: \(2, 3, 3, 4\).*\('N', 1, 'H', 'W'\)"
        ):
            runner.infer({"X": np.zeros((2, 3, 3, 4), np.float32)})
        with pytest.raises(PolyException, match=r"X .*incompatible shape: \(1, 3, 4\)"):
            runner.infer({"X": np.zeros((1, 3, 4), np.float32)})
        # Every dynamic dimension takes any size; the static one only its own.
        for shape in [(1, 1, 1, 1), (4, 1, 9, 2), (7, 1, 3, 30)]:
            out = runner.infer({"X": np.full(shape, 2.5, np.float32)})
            assert out["Y"].shape == shape


@pytest.mark.parametrize("runner_kind", list(RUNNERS))
def test_static_shape_mismatch_is_reported(runner_kind):
    with RUNNERS[runner_kind](onnx_models.identity()) as runner:
        with pytest.raises(PolyException, match=r"x .*incompatible shape: \(1, 1, 2, 3\).*\(1, 1, 2, 2\)"):
            runner.infer({"x": np.zeros((1, 1, 2, 3), np.float32)})


@pytest.mark.parametrize("runner_kind", list(RUNNERS))
def test_infer_and_metadata_before_activation_fail_clearly(runner_kind):
    runner = RUNNERS[runner_kind](onnx_models.identity())
    with pytest.raises(PolyException, match="Must be activated prior to calling infer"):
        runner.infer({"x": np.zeros((1, 1, 2, 2), np.float32)})
    with pytest.raises(PolyException, match="Must be activated prior to calling get_input_metadata"):
        runner.get_input_metadata()
    with runner:
        pass
    with pytest.raises(PolyException, match="Must be activated prior to calling infer"):
        runner.infer({"x": np.zeros((1, 1, 2, 2), np.float32)})


def unnamed_dim_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", None, 3])
    no_shape = helper.make_tensor_value_info("s", TensorProto.FLOAT, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = helper.make_model(
        helper.make_graph([helper.make_node("Mul", ["x", "s"], ["y"])], "dims", [x, no_shape], [y]),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    model.ir_version = 10
    return model


@pytest.mark.parametrize("runner_kind", list(RUNNERS))
def test_input_metadata_dynamic_dimensions(runner_kind):
    with RUNNERS[runner_kind](onnx_models.dynamic_identity()) as runner:
        meta = runner.get_input_metadata(use_numpy_dtypes=False)
        assert isinstance(meta, TensorMetadata)
        assert list(meta) == ["X"]
        assert meta["X"].dtype == DataType.FLOAT32
        assert list(meta["X"].shape) == ["N", 1, "H", "W"]
    # A dimension with neither a value nor a name is -1; a scalar has shape ().
    with RUNNERS[runner_kind](unnamed_dim_model()) as runner:
        meta = runner.get_input_metadata(use_numpy_dtypes=False)
        assert list(meta["x"].shape) == ["batch", -1, 3]
        assert list(meta["s"].shape) == []
        out = runner.infer({"x": np.ones((2, 5, 3), np.float32), "s": np.array(4.0, np.float32)})
        np.testing.assert_array_equal(out["y"], np.full((2, 5, 3), 4.0, np.float32))


def test_reference_runner_skips_initializers_listed_as_inputs():
    # IR < 4 models list every initializer among the graph inputs; only real inputs count.
    model = onnx_models.branches()
    model.graph.input.append(helper.make_tensor_value_info("two", TensorProto.FLOAT, []))
    model.ir_version = 3
    with OnnxRefRunner(model) as runner:
        assert list(runner.get_input_metadata(use_numpy_dtypes=False)) == ["x"]


@pytest.mark.parametrize("runner_kind", list(RUNNERS))
def test_inference_time_is_recorded(runner_kind, capsys):
    with RUNNERS[runner_kind](onnx_models.mlp()) as runner:
        assert runner.last_inference_time() is None
        assert "No inference time recorded" in capsys.readouterr().out
        runner.infer({"x": np.ones((3, 8), np.float32)})
        first = runner.last_inference_time()
        assert isinstance(first, float) and 0 < first < 10
        runner.infer({"x": np.ones((300, 8), np.float32)})
        assert runner.last_inference_time() > 0
    assert runner.inference_time is None


def test_ort_runner_calls_the_loader_at_activation_and_releases_the_session():
    calls = []
    loader = SessionFromOnnx(onnx_models.identity())

    def counting_loader():
        calls.append(1)
        return loader()

    runner = OnnxrtRunner(counting_loader)
    assert calls == [] and runner.sess is None
    with runner:
        assert len(calls) == 1 and runner.sess is not None
        runner.infer({"x": np.ones((1, 1, 2, 2), np.float32)})
    assert runner.sess is None and not runner.is_active
    with runner:
        assert len(calls) == 2
        np.testing.assert_array_equal(runner.infer({"x": np.full((1, 1, 2, 2), 3, np.float32)})["y"], 3)
    assert runner.sess is None


def test_ort_runner_accepts_a_session_object():
    sess = SessionFromOnnx(onnx_models.identity())()
    with OnnxrtRunner(sess, name="mine") as runner:
        assert runner.name == "mine"
        assert runner.sess is sess
        assert runner.infer({"x": np.ones((1, 1, 2, 2), np.float32)})["y"].sum() == 4


def test_ort_runner_rejects_what_is_not_a_session():
    with pytest.raises(PolyException, match="Expected an onnxruntime.InferenceSession"):
        OnnxrtRunner(lambda: "not a session").activate()


def test_reference_runner_loads_lazily_and_releases():
    calls = []

    def loader():
        calls.append(1)
        return onnx_models.identity()

    runner = OnnxRefRunner(loader)
    assert calls == []
    with runner:
        assert calls == [1] and runner.evaluator is not None
    assert runner.evaluator is None and runner.model is None


def test_default_names():
    a, b = OnnxrtRunner(lambda: None), OnnxrtRunner(lambda: None)
    assert a.name.startswith("onnxrt-runner-N") and a.name != b.name
    assert OnnxRefRunner(onnx_models.identity()).name.startswith("onnx-ref-runner-N")


@pytest.mark.parametrize("runner_kind", list(RUNNERS))
def test_backend_failure_without_input_checks_is_one_clear_error(runner_kind):
    # check_inputs=False hands a wrong shape to the backend itself.
    with RUNNERS[runner_kind](onnx_models.mlp()) as runner:
        with pytest.raises(
            PolyException, match=r"(ONNX-Runtime inference failed|reference evaluator failed)"
        ):
            runner.infer({"x": np.ones((2, 5), np.float32)}, check_inputs=False)


def test_seed_004_snippet(tmp_path, monkeypatch):
    """The seed's ``OnnxrtRunner(SessionFromOnnx("identity.onnx"))`` usage, with poly names."""
    onnx_models.save(onnx_models.identity(), tmp_path / "identity.onnx")
    monkeypatch.chdir(tmp_path)

    build_onnxrt_session = SessionFromOnnx("identity.onnx")
    runner = OnnxrtRunner(build_onnxrt_session)
    real_dataset = [np.ones((1, 1, 2, 2), dtype=np.float32), np.zeros((1, 1, 2, 2), dtype=np.float32)]
    with runner:
        for data in real_dataset:
            outputs = runner.infer(feed_dict={"x": data})
            np.testing.assert_array_equal(outputs["y"], data)


def test_seed_000_mark_all_snippet_when_loaders_exist(tmp_path):
    """Seed 000's ONNX part, once poly.onnx's loaders exist (another module's work)."""
    try:
        from poly import constants
        from poly.backend.onnx import ModifyOutputs, OnnxFromPath
        from poly.backend.onnxrt import OnnxrtRunner as ShimRunner
        from poly.backend.onnxrt import SessionFromOnnx as ShimSession
    except ImportError as err:
        pytest.skip(f"poly.backend.onnx / poly.backend.onnxrt not available yet: {err}")
    path = onnx_models.save(onnx_models.multi_output(), tmp_path / "multi.onnx")
    onnx_all_outputs = ModifyOutputs(OnnxFromPath(str(path)), outputs=constants.MARK_ALL)
    with ShimRunner(ShimSession(onnx_all_outputs)) as runner:
        out = runner.infer({"x": np.ones((2, 3), np.float32)})
    assert {"r", "s", "sum"} <= set(out)


def test_torch_tensors_in_torch_tensors_out():
    torch = pytest.importorskip("torch")
    with OnnxrtRunner(SessionFromOnnx(onnx_models.identity())) as runner:
        out = runner.infer({"x": torch.ones((1, 1, 2, 2))})
    assert isinstance(out["y"], torch.Tensor) and float(out["y"].sum()) == 4.0
