"""The simple comparison's verdict in one place: SimpleOptions, simple_verdict, and the two callers
(CompareFunc.simple and dataset validation's SampleChecker) agreeing because they share it."""

from __future__ import annotations

import numpy as np
import pytest

import poly.compare as pc
from poly.compare.dataset import SampleChecker
from poly.compare.stats.polygraphy_quirks import simple_error_stats
from poly.compare.verdicts import SimpleOptions, simple_verdict

STATS = ("elemwise", "max", "mean", "median", "quantile")


def test_options_resolve_per_output_dicts_with_the_default_key():
    opts = SimpleOptions.for_output("logits", atol={"logits": 0.5, "": 0.1}, rtol={"": 0.2},
                                    check_error_stat={"other": "max"}, error_quantile=0.9)
    assert (opts.atol, opts.rtol, opts.check_error_stat, opts.error_quantile) == (0.5, 0.2, "elemwise", 0.9)
    other = SimpleOptions.for_output("other", atol={"logits": 0.5}, check_error_stat={"other": "max"})
    assert (other.atol, other.rtol, other.check_error_stat, other.error_quantile) == (1e-5, 1e-5, "max", 0.99)
    assert SimpleOptions.for_output("x", check_error_stat="quantile", error_quantile=0.5).needed_quantiles() == [0.5]
    assert SimpleOptions.for_output("x", check_error_stat="median").needs_median()


def _verdict(out, ref, **options):
    opts = SimpleOptions.for_output("y", **options)
    stats, absd, rel = simple_error_stats(out, ref, opts.atol, opts.rtol, opts.needed_quantiles(),
                                          median=opts.needs_median())
    return simple_verdict(stats, absd, rel, opts)


def test_elemwise_is_decided_element_by_element():
    ref = np.array([1.0, 1.0, 100.0], np.float32)
    out = np.array([1.5, 1.0, 100.5], np.float32)  # abs 0.5 everywhere it differs; rel 0.5 and 0.005
    # each element passes one of the two tolerances: the pair passes although max abs and max rel both fail
    result = _verdict(out, ref, atol=0.6, rtol=0.01)
    assert bool(result)
    assert result.checked_values() == pytest.approx((0.5, 0.5))
    # the first element fails both
    assert not _verdict(out, ref, atol=0.4, rtol=0.4)


@pytest.mark.parametrize("stat", ["max", "mean", "median"])
def test_a_scalar_statistic_fails_only_when_both_tolerances_are_exceeded(stat):
    ref = np.array([1.0, 2.0, 4.0, 8.0], np.float64)
    out = ref + np.array([0.0, 0.1, 0.2, 0.4])
    result = _verdict(out, ref, atol=1e-9, rtol=1e-9, check_error_stat=stat)
    abs_value, rel_value = result.checked_values()
    expected_abs = {"max": 0.4, "mean": 0.175, "median": 0.15}[stat]
    assert abs_value == pytest.approx(expected_abs)
    assert not result
    assert _verdict(out, ref, atol=abs_value, rtol=1e-9, check_error_stat=stat)  # at the tolerance: passes
    assert _verdict(out, ref, atol=1e-9, rtol=rel_value, check_error_stat=stat)
    assert not _verdict(out, ref, atol=abs_value * 0.999, rtol=rel_value * 0.999, check_error_stat=stat)


def test_quantile_uses_the_requested_quantile():
    ref = np.zeros(101) + 1.0
    out = ref + np.linspace(0.0, 1.0, 101)
    result = _verdict(out, ref, atol=0.5, rtol=0.5, check_error_stat="quantile", error_quantile=0.5)
    assert result.checked_values() == pytest.approx((0.5, 0.5))
    assert bool(result)
    assert not _verdict(out, ref, atol=0.5, rtol=0.5, check_error_stat="quantile", error_quantile=0.9)


def test_a_nan_difference_fails():
    ref = np.array([1.0, 2.0], np.float32)
    out = np.array([1.0, np.nan], np.float32)
    for stat in STATS:
        assert not _verdict(out, ref, atol=1e3, rtol=1e3, check_error_stat=stat), stat


@pytest.mark.parametrize("stat", STATS)
@pytest.mark.parametrize("seed", range(3))
def test_compare_func_simple_and_dataset_validation_agree(stat, seed):
    rng = np.random.default_rng(seed)
    ref = rng.standard_normal((4, 64)).astype(np.float32)
    out = (ref + rng.standard_normal((4, 64)).astype(np.float32) * 1e-3).astype(np.float32)
    # tolerances on the edge: the checked statistic itself, then just below it
    probe = _verdict(out, ref, atol=0.0, rtol=0.0, check_error_stat=stat, error_quantile=0.9)
    abs_edge, rel_edge = probe.checked_values()
    for atol, rtol in ((abs_edge, 0.0), (0.0, rel_edge), (np.nextafter(abs_edge, 0), np.nextafter(rel_edge, 0))):
        options = {"atol": float(atol), "rtol": float(rtol), "check_error_stat": stat, "error_quantile": 0.9}
        func_result = pc.CompareFunc.simple(**options)(
            pc.IterationResult({"y": out}, runner_name="a"), pc.IterationResult({"y": ref}, runner_name="b")
        )["y"]
        check = SampleChecker(**options).check_output("y", out, ref)
        assert bool(func_result) == check.passed
        assert func_result.checked_values() == pytest.approx((check.stat_absdiff, check.stat_reldiff), rel=0, abs=0)
