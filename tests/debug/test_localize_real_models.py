"""`poly debug localize` on real architectures (the light models the onnx wheel ships, with seeded
random weights) with planted faults: a perturbed weight, a changed attribute, a NaN source, and two
faults where the first divergent node and the one most to blame differ."""

from __future__ import annotations

import pytest
from fixtures import planted_faults as pf

from poly.compare.dataset import SampleChecker
from poly.debug.localize import GraphPlan, Localizer, ModelSource, OnnxExecutor


def _localize(candidate, reference, samples=2, segment_bytes=8 << 20):
    plan = GraphPlan(candidate, segment_bytes=segment_bytes)
    ref_plan = GraphPlan(reference, segment_bytes=segment_bytes)
    localizer = Localizer(plan, ModelSource(plan, OnnxExecutor("onnxrt")),
                          ModelSource(ref_plan, OnnxExecutor("onnxrt"), keep=plan.producer),
                          SampleChecker(atol=1e-5, rtol=1e-5), shadow_executor=OnnxExecutor("onnxrt"))
    feeds = [pf.random_inputs(reference, seed) for seed in range(samples)]
    return plan, localizer.run(feeds)


@pytest.fixture(scope="module")
def squeezenet():
    return pf.light_model("squeezenet")


def test_a_perturbed_weight(squeezenet):
    candidate, planted = pf.perturb_weight(squeezenet)
    plan, report = _localize(candidate, squeezenet)
    assert report.ranking[0] == planted
    assert report.first_divergent == planted
    assert report.first_nonfinite is None
    assert len(plan.segments) > 1  # the walk was cut into segments


@pytest.mark.slow
def test_a_changed_attribute(squeezenet):
    candidate, planted = pf.change_attribute(squeezenet)
    _, report = _localize(candidate, squeezenet)
    assert report.ranking[0] == planted and report.first_divergent == planted


def test_a_nan_source(squeezenet):
    candidate, planted = pf.plant_nan(squeezenet)
    _, report = _localize(candidate, squeezenet)
    assert report.first_nonfinite == planted
    assert report.ranking[0] == planted and report.first_divergent == planted


@pytest.mark.slow
def test_two_faults_first_divergent_and_most_to_blame(squeezenet):
    candidate, first, biggest = pf.two_faults(squeezenet)
    _, report = _localize(candidate, squeezenet)
    assert report.first_divergent == first
    assert report.ranking[0] == biggest
    assert first in report.ranking


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet50", "shufflenet"])
def test_larger_architectures(name):
    model = pf.light_model(name)
    candidate, first, biggest = pf.two_faults(model)
    _, report = _localize(candidate, model, samples=1, segment_bytes=32 << 20)
    assert report.first_divergent == first and report.ranking[0] == biggest
    candidate, planted = pf.plant_nan(model)
    _, report = _localize(candidate, model, samples=1, segment_bytes=32 << 20)
    assert report.first_nonfinite == planted and report.ranking[0] == planted
