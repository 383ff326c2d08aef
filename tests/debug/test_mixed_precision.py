"""``poly.debug.mixed_precision``: the fewest nodes to keep in float32 for a float16 model to pass."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from fixtures import fp16_models
from fixtures.fp16_models import SENSITIVE_NODES, TOLERANCE

from poly.compare.dataset import SampleChecker
from poly.debug.mixed_precision import (
    MixedPrecisionError,
    MixedPrecisionSearch,
    UnreachableTolerance,
    float_precision_problem,
    name_nodes,
    unknown_node_names,
)
from poly.onnx import ConvertToFp16


def _checker(tolerance=TOLERANCE):
    return SampleChecker(atol=tolerance, rtol=tolerance)


def _run(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return [dict(zip(names, session.run(names, feed), strict=True)) for feed in feeds]


def _passes(model, reference_model, feeds, checker):
    """Whether every output of ``model`` passes against ``reference_model`` on every feed."""
    for outputs, reference in zip(_run(model, feeds), _run(reference_model, feeds), strict=True):
        for name, value in outputs.items():
            if not checker.check_output(name, value, reference[name]).passed:
                return False
    return True


@pytest.fixture(scope="module")
def found():
    model = fp16_models.sensitive_model()
    feeds = fp16_models.inputs(6, seed=1)
    search = MixedPrecisionSearch(model, feeds, _checker())
    return model, feeds, search.run()


def test_the_search_keeps_exactly_the_sensitive_nodes(found):
    model, feeds, result = found
    assert not result.before.passed and result.after.passed
    assert SENSITIVE_NODES <= set(result.fp32_nodes)  # the nodes whose constants clamp in float16
    assert result.minimal
    assert result.evaluations == sum(result.phases.values()) > 2
    assert result.time_s > 0 and result.samples == len(feeds)
    # before: y1 off by 35% (1e5 clamped), y2 capped at 65504; after: within tolerance
    assert result.before.outputs["y1"]["max_absdiff"] > 0.1
    assert result.before.outputs["y2"]["severity"] > 1
    assert all(figures["severity"] <= 1 for figures in result.after.outputs.values())


def test_the_result_is_one_minimal_checked_independently(found):
    model, feeds, result = found
    checker = _checker()
    mixed = ConvertToFp16(model, node_block_list=result.fp32_nodes)()
    assert _passes(mixed, model, feeds, checker)
    for name in result.fp32_nodes:
        fewer = [n for n in result.fp32_nodes if n != name]
        assert not _passes(ConvertToFp16(model, node_block_list=fewer)(), model, feeds, checker), name


def test_the_written_model_passes_on_held_out_inputs(found):
    model, _, result = found
    held_out = fp16_models.inputs(16, seed=99)
    assert _passes(result.model, model, held_out, _checker())
    assert not _passes(ConvertToFp16(model)(), model, held_out, _checker())


def test_the_ranking_measures_the_sensitive_nodes_first(found):
    _, _, result = found
    # amplify and cap clamp their constants: their own error (alone, on float32 inputs) fails
    failing = [name for name, f in result.sensitivity.items() if f["own_severity"] > 1]
    assert SENSITIVE_NODES <= set(failing)
    assert result.sensitivity["mm"]["own_severity"] < 1  # a MatMul's float16 rounding is small
    assert sorted(result.ranking) == sorted(result.candidates)
    assert result.localize["shadow_runs"] > 0
    report = result.to_dict()
    assert report["fp32_nodes"] == result.fp32_nodes and report["evaluations"] == result.evaluations
    assert set(report["error_before"]) == {"y1", "y2"} and report["passed_after"] is True


def test_the_mixed_model_keeps_the_kept_nodes_in_float32(found):
    _, _, result = found
    graph = result.model.graph
    inferred = onnx.shape_inference.infer_shapes(result.model).graph
    types = {vi.name: vi.type.tensor_type.elem_type for vi in (*inferred.value_info, *graph.output, *graph.input)}
    nodes = {node.name: node for node in graph.node}
    for name in SENSITIVE_NODES:
        assert all(types.get(o) == onnx.TensorProto.FLOAT for o in nodes[name].output), name
    assert types["h"] == onnx.TensorProto.FLOAT16  # mm is float16
    constants = {init.name: onnx.numpy_helper.to_array(init) for init in graph.initializer}
    assert constants["huge"].dtype == np.float32 and constants["huge"] == 1e5


def test_all_float16_passing_keeps_nothing():
    model = fp16_models.sensitive_model()
    # without the overflow and the cancellation, float16 passes a loose tolerance
    search = MixedPrecisionSearch(model, fp16_models.inputs(2, seed=1), _checker(1e9))
    result = search.run()
    assert result.fp32_nodes == [] and result.evaluations == 1 and result.after.passed


def test_fixed_nodes_are_kept_and_the_search_adds_to_them():
    model = fp16_models.sensitive_model()
    search = MixedPrecisionSearch(model, fp16_models.inputs(4, seed=1), _checker(), fp32_nodes=["mm"])
    result = search.run()
    assert result.fp32_nodes[0] == "mm" and set(result.fp32_nodes) >= SENSITIVE_NODES | {"mm"}
    assert "mm" not in result.candidates


def test_unreachable_tolerance_is_an_error():
    search = MixedPrecisionSearch(fp16_models.nan_model(), fp16_models.inputs(2, seed=1), _checker())
    with pytest.raises(UnreachableTolerance, match="even with every node in float32"):
        search.run()


@pytest.mark.parametrize(("builder", "words"), [(fp16_models.half_model, "already float16"),
                                               (fp16_models.int_model, "no float32 tensor")])
def test_models_with_nothing_to_convert_are_refused(builder, words):
    model = builder()
    assert words in float_precision_problem(model)
    feeds = [{"x": np.ones((4, 16), np.float16)}] if builder is fp16_models.half_model else [{"x": np.arange(4)}]
    with pytest.raises(MixedPrecisionError, match=words):
        MixedPrecisionSearch(model, feeds, _checker()).run()


def test_unnamed_and_repeated_node_names_are_filled_in():
    model = fp16_models.sensitive_model()
    model.graph.node[0].name = ""
    model.graph.node[3].name = "attenuate"  # the same as node 2
    named = [node.name for node in name_nodes(model).graph.node]
    assert named[0] == "MatMul_0" and named[2] == "attenuate" and named[3] == "attenuate_1"
    assert len(set(named)) == len(named)
    assert unknown_node_names(model, ["MatMul_0", "attenuate_1", "nope"]) == ["nope"]
    with pytest.raises(MixedPrecisionError, match="'nope'"):
        MixedPrecisionSearch(model, fp16_models.inputs(1, seed=1), _checker(), fp32_nodes=["nope"])


def test_the_sample_that_failed_is_tried_first():
    model = fp16_models.sensitive_model()
    feeds = fp16_models.inputs(3, seed=1)
    search = MixedPrecisionSearch(model, feeds, _checker())
    evaluation = search.evaluate([])
    assert not evaluation.passed and not evaluation.complete  # stopped at the first failing sample
    complete = search.evaluate([], complete=True)
    assert complete.complete and complete.outputs["y2"]["failed_samples"] >= 1
    assert search.evaluations == 2
    assert search.evaluate([]) is complete  # cached


def test_new_inputs_that_fail_join_the_search():
    """Inputs at 0.3 of the range never overflow ``exp`` in float16, so a search on them keeps
    ``amplify`` alone; a validation batch over the whole range fails with that, joins the samples,
    and the search goes on to the set every input needs; the next batch passes."""
    model = fp16_models.sensitive_model()
    train = [{name: value * np.float32(0.3) for name, value in feed.items()} for feed in fp16_models.inputs(4, seed=1)]
    alone = MixedPrecisionSearch(model, train, _checker()).run()
    assert set(alone.fp32_nodes) == {"amplify"} and alone.validation == []

    batches = [fp16_models.inputs(4, seed=2), fp16_models.inputs(4, seed=3), fp16_models.inputs(4, seed=4)]
    result = MixedPrecisionSearch(model, train, _checker(), validation=batches).run()
    assert result.validation[0]["samples"] == 4 and result.validation[0]["failed"] >= 1
    assert result.validation[1] == {"samples": 4, "failed": 0} and len(result.validation) == 2  # stops there
    assert set(result.fp32_nodes) == SENSITIVE_NODES and result.samples == 12
    assert result.to_dict()["validation"] == result.validation
    checked = train + batches[0] + batches[1]
    assert _passes(result.model, model, checked, _checker())
    for name in result.fp32_nodes:  # 1-minimal on every sample it checked
        fewer = [n for n in result.fp32_nodes if n != name]
        assert not _passes(ConvertToFp16(model, node_block_list=fewer)(), model, checked, _checker()), name


@pytest.mark.slow
def test_a_real_architecture_overflowing_in_float16():
    """ShuffleNet (the onnx wheel's light model, random weights): its activations overflow float16
    in the channel shuffles; the search keeps a few nodes, 1-minimal, and held-out inputs pass."""
    from fixtures import planted_faults

    model = planted_faults.light_model("shufflenet")
    train = [planted_faults.random_inputs(model, 100 + i) for i in range(3)]
    held_out = [planted_faults.random_inputs(model, 200 + i) for i in range(6)]
    checker = SampleChecker(atol=0.05, rtol=0.0)
    result = MixedPrecisionSearch(model, train, checker).run()
    assert not result.before.passed and result.after.passed
    assert 0 < len(result.fp32_nodes) < len(result.candidates) // 4
    assert result.time_s < 180
    assert _passes(result.model, model, held_out, checker)
    for name in result.fp32_nodes:
        fewer = [n for n in result.fp32_nodes if n != name]
        assert not _passes(ConvertToFp16(model, node_block_list=fewer)(), model, train, checker), name
