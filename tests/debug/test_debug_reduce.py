"""Reduce finds planted faults: the reduced model is the minimal failing one (one node, or the
needed branch), within ceil(log2(nodes)) + 1 bisect iterations for a one-node fault; candidate
models are valid (constants frozen where inputs are cut, inputs typed and shaped); replays
resume an interrupted reduction."""

from __future__ import annotations

import math

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from fixtures import debug_models

from poly.core import PolyException
from poly.debug import CheckCommand, CheckResult, IterativeDebugger, Reduce

ARTIFACT = "polygraphy_debug.onnx"


class ModelCheck:
    """A check that fails when `fails(model)` is true for the candidate; remembers every candidate."""

    def __init__(self, fails, interrupt_after=None):
        self.fails = fails
        self.calls = 0
        self.candidates = []
        self.interrupt_after = interrupt_after

    def __call__(self, artifact_path):
        if self.interrupt_after is not None and self.calls == self.interrupt_after:
            raise KeyboardInterrupt
        self.calls += 1
        model = onnx.load(artifact_path)
        onnx.checker.check_model(model)  # every candidate is a valid model
        self.candidates.append(model)
        failed = bool(self.fails(model))
        return CheckResult(not failed, int(failed))


def names(model):
    return sorted(n.name for n in model.graph.node)


def has_nodes(*wanted):
    return lambda model: set(wanted) <= {n.name for n in model.graph.node}


def reduce(model, check, replay=None, load=None, **kwargs):
    debugger = IterativeDebugger(
        check, iter_artifact_path=ARTIFACT, save_debug_replay=replay, load_debug_replay=load
    )
    return Reduce(model, debugger, **kwargs).run()


def bisect_bound(model):
    return math.ceil(math.log2(len(model.graph.node))) + 1


@pytest.mark.parametrize("fault", [0, 1, 17, 30, 31])
def test_bisect_finds_a_single_node_within_the_bound(fault):
    model = debug_models.chain(32, dims=(2, 8))
    check = ModelCheck(has_nodes(f"n{fault}"))
    result = reduce(model, check)
    assert names(result.model) == [f"n{fault}"]
    assert check.calls == result.checks == result.iterations
    assert result.iterations <= bisect_bound(model)
    onnx.checker.check_model(result.model)


def test_every_candidate_runs_in_onnxruntime():
    model = debug_models.chain(12, dims=(2, 8))

    def fails(candidate):
        session = ort.InferenceSession(candidate.SerializeToString(), providers=["CPUExecutionProvider"])
        feeds = {
            i.name: np.random.rand(*[d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
            for i in candidate.graph.input
        }
        session.run(None, feeds)
        return any(n.op_type == "Exp" for n in candidate.graph.node)

    check = ModelCheck(fails)
    result = reduce(model, check)
    assert [n.op_type for n in result.model.graph.node] == ["Exp"]
    assert len(check.candidates) == result.iterations


def test_cut_shape_computation_is_frozen_as_a_constant():
    model = debug_models.shape_chain()
    result = reduce(model, ModelCheck(has_nodes("reshape")))
    assert names(result.model) == ["reshape"]
    graph = result.model.graph
    assert [i.name for i in graph.input] == ["r"]
    frozen = {t.name: onnx.numpy_helper.to_array(t) for t in graph.initializer}
    assert frozen["c"].tolist() == [2, -1]
    session = ort.InferenceSession(result.model.SerializeToString(), providers=["CPUExecutionProvider"])
    (out,) = session.run(None, {"r": np.ones((2, 3, 4), np.float32)})
    assert out.shape == (2, 12)


def test_dynamic_model_gets_the_given_input_shapes():
    model = debug_models.chain(6)  # x: [N, 8]
    check = ModelCheck(has_nodes("n3"))
    result = reduce(model, check, input_shapes={"x": [5, 8]})
    (inp,) = result.model.graph.input
    assert inp.name == "t2" and [d.dim_value for d in inp.type.tensor_type.shape.dim] == [5, 8]
    with pytest.raises(PolyException, match="--model-input-shapes: 'nope' is not an input"):
        reduce(model, ModelCheck(has_nodes("n3")), input_shapes={"nope": [1]})


def test_linear_mode_returns_the_minimal_branch():
    # Branches a and b are interleaved in node order; the fault needs the whole of branch b.
    model = debug_models.two_branches(4)
    for mode in ("linear", "bisect"):
        result = reduce(model, ModelCheck(has_nodes("b0", "b1", "b2", "b3")), mode=mode)
        assert names(result.model) == ["b0", "b1", "b2", "b3"], mode


def test_linear_mode_is_minimal_where_bisect_keeps_a_window():
    # The fault needs a0, a2 and b1: not one path, so only linear mode drops the nodes between.
    model = debug_models.two_branches(4)
    fault = has_nodes("a0", "a2", "b1")
    linear = reduce(model, ModelCheck(fault), mode="linear")
    assert names(linear.model) == ["a0", "a2", "b1"]
    bisect = reduce(model, ModelCheck(fault), mode="bisect")
    assert {"a0", "a2", "b1"} <= set(names(bisect.model)) and len(bisect.nodes) <= 5


def test_no_reduce_inputs_and_outputs():
    model = debug_models.chain(16, dims=(2, 8))
    only_outputs = reduce(model, ModelCheck(has_nodes("n9")), reduce_inputs=False)
    assert names(only_outputs.model) == sorted(f"n{i}" for i in range(10))
    assert [i.name for i in only_outputs.model.graph.input] == ["x"]
    only_inputs = reduce(model, ModelCheck(has_nodes("n9")), reduce_outputs=False)
    assert names(only_inputs.model) == sorted(f"n{i}" for i in range(9, 16))
    assert [o.name for o in only_inputs.model.graph.output] == ["y"]


def test_min_good_is_a_passing_model_close_in_size():
    model = debug_models.chain(16, dims=(2, 8))
    check = ModelCheck(has_nodes("n6", "n7"))
    result = reduce(model, check)
    assert names(result.model) == ["n6", "n7"]
    assert result.min_good_model is not None and not has_nodes("n6", "n7")(result.min_good_model)


def test_model_without_failure_is_an_error():
    check = ModelCheck(lambda model: False)
    with pytest.raises(PolyException, match="passes the check"):
        reduce(debug_models.chain(8, dims=(2, 8)), check)


def test_interrupted_reduction_resumes_from_the_replay():
    model = debug_models.chain(64, dims=(2, 8))
    fault = has_nodes("n40")
    full = reduce(model, ModelCheck(fault), replay="full.json")

    with pytest.raises(KeyboardInterrupt):
        reduce(model, ModelCheck(fault, interrupt_after=4), replay="replay.json")
    resumed_check = ModelCheck(fault)
    resumed = reduce(model, resumed_check, replay="replay.json", load="replay.json")
    assert resumed.nodes == full.nodes
    assert resumed_check.calls == full.iterations - 4
    assert resumed.iterations == full.iterations


def test_replay_of_another_model_is_refused():
    reduce(debug_models.chain(16, dims=(2, 8)), ModelCheck(has_nodes("n3")), replay="replay.json")
    with pytest.raises(PolyException, match="replay comes from another model"):
        reduce(debug_models.chain(40, dims=(2, 8)), ModelCheck(has_nodes("n3")), load="replay.json")


@pytest.mark.slow  # a whole reduction of a real architecture
def test_check_script_finds_planted_node_in_light_resnet50(tmp_path):
    model = debug_models.light_model("resnet50")
    target = [n for n in model.graph.node if n.op_type == "Conv"][30].name
    counter = tmp_path / "calls.txt"
    argv = debug_models.node_check(tmp_path / "check.py", target, counter)
    result = reduce(model, CheckCommand([*argv, ARTIFACT]))
    assert names(result.model) == [target]
    assert debug_models.count_lines(counter) == result.iterations <= bisect_bound(model)


@pytest.mark.slow  # a whole reduction of a real architecture
def test_check_script_finds_planted_op_in_light_densenet121(tmp_path):
    # Plant a fault: one BatchNormalization becomes an op no runtime knows.
    model = debug_models.light_model("densenet121")
    target = [n for n in model.graph.node if n.op_type == "BatchNormalization"][77]
    target.name = target.name or "planted"
    planted = debug_models.plant_custom_op(model, target.name)
    counter = tmp_path / "calls.txt"
    argv = debug_models.op_check(tmp_path / "check.py", "FaultyBatchNormalization", counter)
    result = reduce(planted, CheckCommand([*argv, ARTIFACT]))
    assert [n.op_type for n in result.model.graph.node] == ["FaultyBatchNormalization"]
    assert debug_models.count_lines(counter) == result.iterations <= bisect_bound(planted)
