"""The simple comparison in one place: its options (SimpleCompareOptions, declared once and used by
CompareFunc.simple, SimpleCompareFunc and SampleChecker), simple_verdict, and the two callers
(CompareFunc.simple and dataset validation's SampleChecker) agreeing because they share it."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import poly.compare as pc
from poly.compare import SimpleCompareOptions
from poly.compare.dataset import SampleChecker
from poly.compare.stats.polygraphy_precision import polygraphy_error_stats, simple_error_stats
from poly.compare.verdicts import simple_verdict

STATS = ("elemwise", "max", "mean", "median", "quantile")


def test_options_resolve_per_output_dicts_with_the_default_key():
    given = SimpleCompareOptions(atol={"logits": 0.5, "": 0.1}, rtol={"": 0.2}, check_error_stat={"other": "max"},
                                 error_quantile=0.9)
    opts = given.for_output("logits")
    assert (opts.atol, opts.rtol, opts.check_error_stat, opts.error_quantile) == (0.5, 0.2, "elemwise", 0.9)
    other = SimpleCompareOptions(atol={"logits": 0.5}, check_error_stat={"other": "max"}).for_output("other")
    assert (other.atol, other.rtol, other.check_error_stat, other.error_quantile) == (1e-5, 1e-5, "max", 0.99)
    assert (other.check_shapes, other.fail_fast, other.show_heatmaps, other.save_heatmaps) == (True, False, False, None)
    assert SimpleCompareOptions(check_error_stat="quantile", error_quantile=0.5).for_output("x").needed_quantiles() \
        == [0.5]
    assert SimpleCompareOptions(check_error_stat="median").for_output("x").needs_median()
    assert not SimpleCompareOptions().for_output("x").needs_median()


def test_options_keep_what_was_given_apart_from_the_defaults():
    given = SimpleCompareOptions(rtol=1e-3, atol={"": 1e-4}, check_shapes=False, error_quantile=0.5)
    # in Polygraphy's argument order, error_quantile where the declarations put it (after check_error_stat)
    assert list(given.given()) == ["check_shapes", "rtol", "atol", "error_quantile"]
    filled = given.with_defaults()
    assert (filled.atol, filled.check_error_stat, filled.fail_fast) == ({"": 1e-4}, "elemwise", False)
    assert SimpleCompareOptions(fail_fast=True, atol=1.0).verdict_options() == SimpleCompareOptions(atol=1.0)


POLYGRAPHY_SIMPLE_ARGUMENTS = ["check_shapes", "rtol", "atol", "fail_fast", "find_output_func", "check_error_stat",
                               "infinities_compare_equal", "save_heatmaps", "show_heatmaps", "save_error_metrics_plot",
                               "show_error_metrics_plot", "error_quantile"]


@pytest.mark.parametrize("func", [pc.CompareFunc.simple, pc.SimpleCompareFunc])
def test_compare_func_simple_keeps_polygraphys_signature(func):
    params = inspect.signature(func).parameters
    assert list(params) == POLYGRAPHY_SIMPLE_ARGUMENTS
    assert all(p.default is None and p.kind is p.POSITIONAL_OR_KEYWORD for p in params.values())
    assert list(inspect.signature(pc.SimpleCompareFunc.__init__).parameters) == ["self", *POLYGRAPHY_SIMPLE_ARGUMENTS]


def test_positional_arguments_bind_in_polygraphys_order():
    func = pc.CompareFunc.simple(False, 1e-3, 1e-4, True, None, "max", True, None, None, None, None, 0.5)
    assert (func.check_shapes, func.rtol, func.atol, func.fail_fast) == (False, 1e-3, 1e-4, True)
    assert (func.check_error_stat, func.infinities_compare_equal, func.error_quantile) == ("max", True, 0.5)
    assert func.options == SimpleCompareOptions(False, 1e-3, 1e-4, True, None, "max", 0.5, True).with_defaults()
    assert func.thresholds_for("y") == pc.SimpleThreshold("max", 1e-4, 1e-3)
    with pytest.raises(TypeError, match="tolerance"):
        pc.CompareFunc.simple(tolerance=1e-3)
    func.atol = {"y": 2.0}  # an attribute sets the option
    assert func.options.for_output("y").atol == 2.0 and func.options.rtol == 1e-3


def _verdict(out, ref, **options):
    # the native figures mapped to Polygraphy's definitions, before any recomputation at its precision
    opts = SimpleCompareOptions(**options).for_output("y")
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


def test_the_deciding_statistic_is_recomputed_at_polygraphys_precision_next_to_its_tolerance():
    ref = np.array([1.0, 2.0, 4.0, 8.0], np.float64)
    out = ref + np.array([0.0, 0.1, 0.2, 0.4])
    native_mean = _verdict(out, ref, check_error_stat="mean").checked_values()[0]
    opts = SimpleCompareOptions(atol=native_mean, rtol=0.0, check_error_stat="mean").for_output("y")
    _, absd, _ = polygraphy_error_stats(out, ref, opts)
    # Polygraphy's float32 mean, as NumPy computes it: just above the float64 figure, so the output fails
    assert absd.mean == float(np.mean(np.abs(out - ref), dtype=np.float32)) != native_mean
    assert not bool(pc.CompareFunc.simple(**opts.given())(pc.IterationResult({"y": out}, runner_name="a"),
                                                          pc.IterationResult({"y": ref}, runner_name="b"))["y"])
