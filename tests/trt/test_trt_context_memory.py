"""TrtRunner's allocation strategies and weight-streaming budgets (poly.trt.execution.context_memory):
the calls made to TensorRT, checked here against a recording engine/context (no GPU needed),
and real inference with each strategy on the lent GPU machine (tools/run_device_tests.sh)."""

from __future__ import annotations

import numpy as np
import pytest

from poly.core import PolyException, cuda

NEEDS_GPU = pytest.mark.skipif(
    not cuda.cuda_available(),
    reason="needs an NVIDIA driver and GPU (none here): run tools/run_device_tests.sh on the lent GPU machine",
)


class RecordingEngine:
    """Answers like ICudaEngine and records what is asked of it."""

    streamable_weights_size = 1000

    def __init__(self, accept_budget=True):
        self.calls = []
        self.accept_budget = accept_budget
        self._budget = -1

    def create_execution_context(self, *strategy):
        self.calls.append(("create_execution_context", strategy))
        return RecordingContext()

    def get_device_memory_size_for_profile_v2(self, profile):
        self.calls.append(("profile_size", profile))
        return 4096 * (profile + 1)

    def get_weight_streaming_automatic_budget(self):
        return 640

    @property
    def weight_streaming_budget_v2(self):
        return self._budget

    @weight_streaming_budget_v2.setter
    def weight_streaming_budget_v2(self, value):
        self.calls.append(("budget", value))
        if self.accept_budget:
            self._budget = value


class RecordingContext:
    def update_device_memory_size_for_shapes(self):
        return 1234


def test_contexts_are_created_with_the_strategy(trt_mod):
    from poly.trt.execution.context_memory import create_execution_context

    engine = RecordingEngine()
    create_execution_context(engine)
    create_execution_context(engine, "static")
    create_execution_context(engine, "profile")
    create_execution_context(engine, "RUNTIME")
    user = trt_mod.ExecutionContextAllocationStrategy.USER_MANAGED
    assert engine.calls == [("create_execution_context", ()), ("create_execution_context", ()),
                            ("create_execution_context", (user,)), ("create_execution_context", (user,))]
    with pytest.raises(PolyException, match="Unknown allocation strategy 'lazy'"):
        create_execution_context(engine, "lazy")


def test_context_memory_sizes_follow_the_strategy():
    from poly.trt.execution.context_memory import context_memory_size

    engine, context = RecordingEngine(), RecordingContext()
    assert context_memory_size(engine, context, None, 0) is None
    assert context_memory_size(engine, context, "profile", 2) == 4096 * 3
    assert engine.calls == [("profile_size", 2)]
    assert context_memory_size(engine, context, "runtime", 2) == 1234


@pytest.mark.parametrize("budget, percent, expected", [
    (None, None, None), (-2, None, 1000), (-1, None, 640), (0, None, 0), (300, None, 300),
    (None, 100, 1000), (None, 0, 0), (None, 25, 250), (300, 25, 300),
])
def test_weight_streaming_budgets(budget, percent, expected):
    from poly.trt.execution.context_memory import apply_weight_streaming

    engine = RecordingEngine()
    assert apply_weight_streaming(engine, budget, percent) == expected
    assert engine.calls == ([] if expected is None else [("budget", expected)])


def test_invalid_or_refused_budgets_are_errors():
    from poly.trt.execution.context_memory import apply_weight_streaming

    with pytest.raises(PolyException, match="Invalid weight streaming budget -3"):
        apply_weight_streaming(RecordingEngine(), -3)
    with pytest.raises(PolyException, match="between 0 and 100"):
        apply_weight_streaming(RecordingEngine(), percent=101)
    with pytest.raises(PolyException, match="did not accept a weight streaming budget of 10 bytes"):
        apply_weight_streaming(RecordingEngine(accept_budget=False), 10)


def test_the_runner_keeps_the_options():
    from poly.backend.trt import TrtRunner

    runner = TrtRunner(b"", allocation_strategy="runtime", weight_streaming_budget=-1, weight_streaming_percent=50.0)
    assert (runner.allocation_strategy, runner.weight_streaming_budget, runner.weight_streaming_percent) == \
        ("runtime", -1, 50.0)


@NEEDS_GPU
@pytest.mark.parametrize("strategy", [None, "static", "profile", "runtime"])
def test_inference_with_each_allocation_strategy(trt_mod, trt_models, strategy):
    from poly.backend.trt import CreateConfig, EngineFromNetwork, NetworkFromOnnxPath, Profile, TrtRunner

    profile = Profile().add("X", min=(1, 1, 2, 2), opt=(1, 1, 4, 4), max=(2, 1, 8, 8))
    engine = EngineFromNetwork(NetworkFromOnnxPath(trt_models["dynamic_identity"]), CreateConfig(profiles=[profile]))
    with TrtRunner(engine, allocation_strategy=strategy) as runner:
        for shape in [(1, 1, 2, 2), (2, 1, 8, 8), (1, 1, 3, 5)]:
            x = np.random.default_rng(0).random(shape, dtype=np.float32)
            assert np.array_equal(runner.infer({"X": x})["Y"], x)


@NEEDS_GPU
@pytest.mark.parametrize("kwargs", [{"weight_streaming_budget": -2}, {"weight_streaming_budget": -1},
                                    {"weight_streaming_percent": 0.0}, {"weight_streaming_percent": 50.0}])
def test_inference_with_weight_streaming(trt_mod, trt_models, kwargs):
    from poly.backend.trt import CreateConfig, EngineFromNetwork, NetworkFromOnnxPath, TrtRunner

    engine = EngineFromNetwork(NetworkFromOnnxPath(trt_models["mlp"]), CreateConfig(weight_streaming=True))
    with TrtRunner(engine, **kwargs) as runner:
        meta = runner.get_input_metadata()
        feed = {name: np.ones([d if d > 0 else 1 for d in shape], dtype=dtype.numpy())
                for name, (dtype, shape) in meta.items()}
        outputs = runner.infer(feed)
        assert all(np.isfinite(v).all() for v in outputs.values())


@NEEDS_GPU
def test_file_reader_with_tensorrts_stream_reader_deserializes(trt_mod, trt_models, tmp_path):
    from poly.backend.trt import EngineBytesFromNetwork, FileReader, NetworkFromOnnxPath, get_trt_logger

    path = tmp_path / "identity.engine"
    path.write_bytes(bytes(EngineBytesFromNetwork(NetworkFromOnnxPath(trt_models["identity"]))()))
    with FileReader(str(path)) as reader:
        engine = trt_mod.Runtime(get_trt_logger()).deserialize_cuda_engine(reader)
    assert engine is not None and engine.num_io_tensors == 2
