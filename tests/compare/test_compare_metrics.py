"""Indices, distance and quality metrics against Polygraphy 0.53; perceptual metrics' clear error."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

import poly.compare as pc
from poly.core import G_LOGGER, PolyException


def _close(x, y, rel=1e-5):
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return math.isclose(x, y, rel_tol=rel, abs_tol=1e-9)


PAIRS = {
    "close": lambda rng: (lambda b: (b + rng.standard_normal(b.shape).astype(np.float32) * 1e-3, b))(
        rng.standard_normal((4, 8)).astype(np.float32)
    ),
    "far": lambda rng: (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32)),
    "equal": lambda rng: (lambda b: (b, b.copy()))(rng.random((3, 3)).astype(np.float32)),
    "zeros_vs_ones": lambda rng: (np.zeros(5, np.float32), np.ones(5, np.float32)),
    "ones_vs_zeros": lambda rng: (np.ones(5, np.float32), np.zeros(5, np.float32)),
    "both_zero": lambda rng: (np.zeros(5, np.float32), np.zeros(5, np.float32)),
    "negative": lambda rng: (-rng.random(6).astype(np.float32) - 1, -rng.random(6).astype(np.float32) - 1),
    "opposite": lambda rng: (lambda b: (-b, b))(rng.random(6).astype(np.float32) + 0.5),
    "float16": lambda rng: (lambda b: (b + np.float16(0.01), b))(rng.random(10).astype(np.float16)),
    "int32": lambda rng: (np.array([1, 2, 3, 4], np.int32), np.array([1, 2, 3, 5], np.int32)),
    "nan": lambda rng: (np.array([1, np.nan, 3], np.float32), np.array([1, 2, 3], np.float32)),
}

METRICS = [
    # (poly class, polygraphy class name, threshold argument, thresholds to try, metric field)
    (pc.L2CompareFunc, "L2CompareFunc", "l2_threshold", [1e-5, 0.01, 1.0, 10.0], "l2_norm"),
    (pc.CosineSimilarityCompareFunc, "CosineSimilarityCompareFunc", "cosine_similarity_threshold",
     [0.997, 0.5, 0.0, -1.0], "cosine_similarity"),
    (pc.PsnrCompareFunc, "PsnrCompareFunc", "psnr_threshold", [30.0, 10.0, 60.0], "psnr"),
    (pc.SnrCompareFunc, "SnrCompareFunc", "snr_threshold", [20.0, 0.0, 80.0], "snr"),
]


@pytest.mark.parametrize("pair", list(PAIRS))
@pytest.mark.parametrize("metric", METRICS, ids=[m[1] for m in METRICS])
def test_single_metrics_match_polygraphy(pg, h, pair, metric):
    ours_cls, theirs_name, arg, thresholds, field = metric
    a, b = PAIRS[pair](np.random.default_rng(11))
    for threshold in thresholds:
        ours = ours_cls(**{arg: threshold})(*h.iteration_results(pc, {"y": a}, {"y": b}))["y"]
        theirs = getattr(pg.compare, theirs_name)(**{arg: threshold})(*h.iteration_results(pg.comparator, {"y": a}, {"y": b}))["y"]
        rel = 1e-3 if pair == "float16" else 1e-5
        assert _close(getattr(ours, field), getattr(theirs, field), rel), (field, getattr(ours, field), getattr(theirs, field))
        assert bool(ours) == bool(theirs)
        assert ours.describe() is not None


def test_metric_boundaries_and_per_output_thresholds(pg, h):
    a, b = np.array([3.0, 4.0], np.float32), np.zeros(2, np.float32)  # l2 = 5 exactly
    outputs0, outputs1 = {"p": a, "q": a}, {"p": b, "q": b}
    ours = pc.CompareFunc.l2(l2_threshold={"p": 5.0, "": 4.999})(*h.iteration_results(pc, outputs0, outputs1))
    theirs = pg.compare.L2CompareFunc(l2_threshold={"p": 5.0, "": 4.999})(*h.iteration_results(pg.comparator, outputs0, outputs1))
    assert [bool(r) for r in ours.values()] == [bool(r) for r in theirs.values()] == [True, False]
    assert ours["q"].describe() == theirs["q"].describe() == ("L2 Norm: 5 (tolerance: 4.999) | FAILED", False)


def test_metric_logs_match_polygraphy(pg, h, capsys):
    rng = np.random.default_rng(3)
    b = rng.random((2, 5)).astype(np.float32) + 0.5
    a = b + np.float32(0.01)
    for ours_cls, theirs_name, arg, thresholds, _ in METRICS:
        pg.logger.once_logged.clear()
        getattr(pg.compare, theirs_name)(**{arg: thresholds[0]})(*h.iteration_results(pg.comparator, {"y": a}, {"y": b}))
        expected = capsys.readouterr().out
        ours_cls(**{arg: thresholds[0]})(*h.iteration_results(pc, {"y": a}, {"y": b}))
        actual = capsys.readouterr().out
        h.assert_logs_match(expected, actual, rel=1e-4)


def test_distance_metrics_combine_l2_and_cosine(pg, h):
    rng = np.random.default_rng(4)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    a = b + np.float32(0.05)
    ours = pc.CompareFunc.distance_metrics(l2_tolerance=1.0, cosine_similarity_threshold=0.99)(
        *h.iteration_results(pc, {"y": a}, {"y": b}))["y"]
    l2 = pg.compare.L2CompareFunc(l2_threshold=1.0)(*h.iteration_results(pg.comparator, {"y": a}, {"y": b}))["y"]
    cos = pg.compare.CosineSimilarityCompareFunc(cosine_similarity_threshold=0.99)(
        *h.iteration_results(pg.comparator, {"y": a}, {"y": b}))["y"]
    assert isinstance(ours, pc.DistanceMetricsResult)
    assert _close(ours.l2_norm, l2.l2_norm) and _close(ours.cosine_similarity, cos.cosine_similarity)
    assert bool(ours) == (bool(l2) and bool(cos)) is True
    failing = pc.CompareFunc.distance_metrics(l2_tolerance=0.01)(*h.iteration_results(pc, {"y": a}, {"y": b}))["y"]
    assert not failing and failing.passed is False


def test_quality_metrics_combine_psnr_and_snr(pg, h):
    rng = np.random.default_rng(5)
    b = rng.random((8, 8)).astype(np.float32)
    a = b + rng.standard_normal((8, 8)).astype(np.float32) * 0.01
    ours = pc.CompareFunc.quality_metrics(psnr_tolerance=30, snr_tolerance=20)(*h.iteration_results(pc, {"y": a}, {"y": b}))["y"]
    psnr = pg.compare.PsnrCompareFunc(psnr_threshold=30)(*h.iteration_results(pg.comparator, {"y": a}, {"y": b}))["y"]
    snr = pg.compare.SnrCompareFunc(snr_threshold=20)(*h.iteration_results(pg.comparator, {"y": a}, {"y": b}))["y"]
    assert isinstance(ours, pc.QualityMetricsResult)
    assert _close(ours.psnr, psnr.psnr) and _close(ours.snr, snr.snr)
    assert bool(ours) == (bool(psnr) and bool(snr))
    assert not pc.CompareFunc.quality_metrics(psnr_tolerance=100)(*h.iteration_results(pc, {"y": a}, {"y": b}))["y"]


def test_metrics_respect_check_shapes(pg, h):
    a, b = np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)
    assert pc.CompareFunc.l2()(*h.iteration_results(pc, {"y": a}, {"y": b}))["y"] is False
    ours = pc.CompareFunc.l2(check_shapes=False)(*h.iteration_results(pc, {"y": a}, {"y": b}))["y"]
    theirs = pg.compare.L2CompareFunc(check_shapes=False)(*h.iteration_results(pg.comparator, {"y": a}, {"y": b}))["y"]
    assert bool(ours) == bool(theirs) is True


INDEX_CASES = [
    ([0, 1, 2], [0, 1, 2]),
    ([0, 1, 2], [1, 0, 2]),
    ([0, 1, 2], [1, 2, 0]),
    ([0, 1, 2, 3], [0, 1, 2, 7]),
    ([5, 4, 3], [9, 8, 7]),
    ([[0, 1, 2], [2, 1, 0]], [[1, 0, 2], [2, 0, 1]]),
    ([[[3, 1, 2, 0]]], [[[3, 2, 1, 0]]]),
]


@pytest.mark.parametrize("case", INDEX_CASES)
@pytest.mark.parametrize("tolerance", [0, 1, 2])
@pytest.mark.parametrize("fail_fast", [False, True])
def test_indices_match_polygraphy(pg, h, capsys, case, tolerance, fail_fast):
    a, b = (np.array(x, np.int64) for x in case)
    theirs = pg.compare.IndicesCompareFunc(index_tolerance=tolerance, fail_fast=fail_fast)(
        *h.iteration_results(pg.comparator, {"topk": a}, {"topk": b}))
    expected = capsys.readouterr().out
    ours = pc.CompareFunc.indices(index_tolerance=tolerance, fail_fast=fail_fast)(*h.iteration_results(pc, {"topk": a}, {"topk": b}))
    actual = capsys.readouterr().out
    assert ours == theirs
    h.assert_logs_match(expected, actual)


def test_indices_per_output_tolerance_and_shape_mismatch(pg, h):
    out0 = {"a": np.array([0, 1, 2]), "b": np.array([0, 1, 2]), "c": np.array([0, 1])}
    out1 = {"a": np.array([1, 0, 2]), "b": np.array([1, 0, 2]), "c": np.array([0, 1, 2])}
    ours = pc.CompareFunc.indices(index_tolerance={"a": 1, "": 0})(*h.iteration_results(pc, out0, out1))
    theirs = pg.compare.IndicesCompareFunc(index_tolerance={"a": 1, "": 0})(*h.iteration_results(pg.comparator, out0, out1))
    assert ours == theirs == {"a": True, "b": False, "c": False}


def test_perceptual_metrics_without_torch_is_one_clear_error(capsys):
    if importlib.util.find_spec("torch") and importlib.util.find_spec("lpips"):
        pytest.skip("torch and lpips are installed here")
    with pytest.raises(PolyException) as info:
        pc.CompareFunc.perceptual_metrics(lpips_threshold=0.1)
    message = str(info.value)
    assert "\n" not in message and "pip install torch lpips" in message and "LPIPS" in message


def test_perceptual_results_load_and_threshold_without_torch():
    result = pc.PerceptualMetricsResult(0.05, thresholds=pc.LpipsThreshold(0.1))
    assert bool(result) and result.describe() == ("LPIPS: 0.05 (tolerance: 0.1) | PASSED", True)
    assert bool(pc.PerceptualMetricsResult(None, thresholds=pc.LpipsThreshold(0.1)))  # not computable: passes
    from poly.core.json import from_json, to_json

    again = from_json(to_json(result))
    assert isinstance(again, pc.PerceptualMetricsResult) and again.lpips == 0.05


def test_comparing_unsupported_dtypes_is_a_clear_error():
    strings = np.array(["a", "b"])
    it0, it1 = pc.IterationResult({"s": strings}, runner_name="a"), pc.IterationResult({"s": strings}, runner_name="b")
    with G_LOGGER.verbosity(G_LOGGER.CRITICAL + 1), pytest.raises(PolyException, match="Cannot compare outputs of dtypes"):
        pc.CompareFunc.simple()(it0, it1)
