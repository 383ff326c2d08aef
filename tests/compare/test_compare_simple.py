"""CompareFunc.simple against Polygraphy 0.53, run in-process on the same IterationResults:
same verdicts at the tolerance boundaries, same reported statistics, same log lines."""

from __future__ import annotations

import math

import numpy as np
import pytest

import poly.compare as pc
from poly.core import G_LOGGER, PolyException

STAT_FIELDS = [
    "max_absdiff", "max_reldiff", "mean_absdiff", "mean_reldiff",
    "median_absdiff", "median_reldiff", "quantile_absdiff", "quantile_reldiff",
]


def _same(x, y, rel=1e-6):
    if x is None or y is None:
        return x is None and y is None
    x, y = float(x), float(y)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return math.isclose(x, y, rel_tol=rel, abs_tol=1e-30)


def compare_both(pg, h, outputs0, outputs1, rel=1e-6, **options):
    """Runs poly's and Polygraphy's simple comparison; asserts same verdicts and statistics."""
    ours = pc.CompareFunc.simple(**options)(*h.iteration_results(pc, outputs0, outputs1))
    theirs = pg.compare.SimpleCompareFunc(**options)(*h.iteration_results(pg.comparator, outputs0, outputs1))
    assert list(ours) == list(theirs)
    for name in theirs:
        assert bool(ours[name]) == bool(theirs[name]), name
        if isinstance(theirs[name], bool):
            assert ours[name] is theirs[name]
            continue
        for field in STAT_FIELDS:
            assert _same(getattr(ours[name], field), getattr(theirs[name], field), rel), (name, field)
    return ours


def exact_pair(n=64, seed=0):
    """float32 outputs whose differences, relative differences, sums and means are exact in
    float32 (dyadic values, power-of-two divisors), so boundary verdicts do not depend on
    accumulation precision."""
    rng = np.random.default_rng(seed)
    b = rng.choice(np.array([0.5, 1.0, 2.0, 4.0, -1.0, -2.0], np.float32), size=n)
    d = (rng.integers(0, 16, size=n) / 1024.0).astype(np.float32)
    return (b + d).astype(np.float32), b


@pytest.mark.parametrize("stat", ["elemwise", "max", "mean", "median"])
@pytest.mark.parametrize("which", ["abs", "rel"])
def test_boundary_verdicts_match_polygraphy(pg, h, stat, which):
    a, b = exact_pair()
    absdiff = np.abs(a.astype(np.float64) - b)
    reldiff = absdiff / np.abs(b)
    pick = {"elemwise": np.max, "max": np.max, "mean": np.mean, "median": np.median}[stat]
    value = float(pick(absdiff if which == "abs" else reldiff))
    assert value > 0
    # Tolerances are Python floats, as on the command line (Polygraphy's elementwise check then
    # compares in the outputs' float32, like the native engine); `below` is below in float32 too.
    below = float(np.nextafter(np.float32(value), np.float32(0)))
    for tol, expected in [(value, True), (below, False), (value * 1.5, True), (value / 2, False)]:
        # The other tolerance is 0, so this one decides.
        options = {"atol": tol, "rtol": 0.0} if which == "abs" else {"atol": 0.0, "rtol": tol}
        ours = compare_both(pg, h, {"out": a}, {"out": b}, check_error_stat=stat, **options)
        assert bool(ours["out"]) is expected, (stat, which, tol)


@pytest.mark.parametrize("quantile", [0.5, 0.75, 0.25, 1.0, 0.0])
def test_quantile_boundary_matches_polygraphy(pg, h, quantile):
    a, b = exact_pair(n=65, seed=3)  # (n - 1) * q is a whole number: no interpolation rounding
    absdiff = np.abs(a.astype(np.float64) - b)
    value = float(np.quantile(absdiff, quantile))
    for tol, expected in [(value, True), (float(np.nextafter(np.float32(value), np.float32(-1))), False)]:
        if tol < 0:
            continue
        ours = compare_both(pg, h, {"out": a}, {"out": b}, check_error_stat="quantile", error_quantile=quantile,
                            atol=tol, rtol=0.0)
        assert bool(ours["out"]) is expected
        assert ours["out"].quantile_absdiff == pytest.approx(value)


def test_elemwise_fails_an_element_only_when_both_tolerances_fail(pg, h):
    out1 = np.array([1.0, 100.0], np.float32)
    out0 = np.array([1.5, 101.0], np.float32)  # absdiff [0.5, 1.0], reldiff [0.5, 0.01]
    # Each element is within one of the tolerances: elementwise passes, the max statistic fails.
    assert bool(compare_both(pg, h, {"o": out0}, {"o": out1}, atol=0.6, rtol=0.02)["o"])
    assert not bool(compare_both(pg, h, {"o": out0}, {"o": out1}, atol=0.6, rtol=0.02, check_error_stat="max")["o"])
    # Element 0 exceeds both.
    assert not bool(compare_both(pg, h, {"o": out0}, {"o": out1}, atol=0.4, rtol=0.02)["o"])
    assert bool(compare_both(pg, h, {"o": out0}, {"o": out1}, atol=1.0, rtol=0.0)["o"])


@pytest.mark.parametrize(
    "dtype0,dtype1",
    [("float32", "float32"), ("float16", "float16"), ("float64", "float64"), ("float16", "float32"),
     ("int32", "int32"), ("int64", "int64"), ("uint8", "uint8"), ("int32", "float32")],
)
@pytest.mark.parametrize("stat", ["elemwise", "max", "mean", "median", "quantile"])
def test_random_outputs_match_polygraphy(pg, h, dtype0, dtype1, stat):
    rng = np.random.default_rng(7)
    shape = (3, 5, 7)
    if np.dtype(dtype1).kind == "f":
        b = (rng.standard_normal(shape) * 3).astype(dtype1)
    else:
        b = rng.integers(1, 50, size=shape).astype(dtype1)
    if np.dtype(dtype0).kind == "f":
        a = (b.astype(np.float64) + rng.standard_normal(shape) * 0.01).astype(dtype0)
    else:
        a = (b.astype(np.int64) + rng.integers(-1, 2, size=shape)).astype(dtype0)
    # float16 arithmetic and float32 accumulation round differently from the native float64 sums
    rel = 1e-3 if "float16" in (dtype0, dtype1) else 1e-5
    for atol, rtol in [(1e-3, 1e-3), (0.05, 0.0), (0.0, 0.02), (2.0, 2.0)]:
        compare_both(pg, h, {"out": a}, {"out": b}, rel=rel, check_error_stat=stat, atol=atol, rtol=rtol,
                     error_quantile=0.9)


@pytest.mark.parametrize("stat", ["elemwise", "max", "mean", "median"])
def test_bool_outputs_match_polygraphy(pg, h, stat):
    a = np.array([[True, False, True, False, True]])
    b = np.array([[True, False, False, True, True]])
    for atol in (0.0, 0.5, 1.0):
        compare_both(pg, h, {"mask": a}, {"mask": b}, check_error_stat=stat, atol=atol, rtol=0.5)
    assert bool(compare_both(pg, h, {"mask": a}, {"mask": a.copy()}, check_error_stat=stat)["mask"])


@pytest.mark.parametrize("stat", ["elemwise", "max", "mean", "median", "quantile"])
def test_integer_outputs_with_zeros_match_polygraphy(pg, h, stat):
    """Polygraphy divides by integer outputs without an epsilon: x/0 is inf, 0/0 is NaN."""
    cases = [
        (np.array([0, 1, 5, 0, 3], np.int32), np.array([0, 1, 4, 2, 0], np.int32)),  # 0/0 -> NaN everywhere
        (np.array([4, 1, 5, 2, 3, 7], np.int64), np.array([0, 1, 4, 2, 3, 7], np.int64)),  # x/0 -> inf
        (np.array([4, 6, 5, 2], np.int64), np.array([0, 0, 0, 2], np.int64)),  # most ranks are inf
        (np.array([1, 2], np.int32), np.array([0, 0], np.int32)),  # all inf
        (np.array([0.5, 1.5, 2.0], np.float32), np.array([0, 1, 2], np.int32)),  # float vs int divisor
    ]
    for a, b in cases:
        for q in (0.5, 0.6, 0.9):
            compare_both(pg, h, {"idx": a}, {"idx": b}, check_error_stat=stat, atol=0.5, rtol=0.5, error_quantile=q)


@pytest.mark.parametrize("infinities_compare_equal", [False, True])
@pytest.mark.parametrize("stat", ["elemwise", "max", "mean", "median", "quantile"])
def test_nan_and_inf_match_polygraphy(pg, h, stat, infinities_compare_equal):
    cases = [
        ([1, np.nan, 3], [1, 2, 3]),
        ([1, np.nan, 3], [1, np.nan, 3]),
        ([1, np.inf, -np.inf], [1, np.inf, -np.inf]),
        ([1, np.inf, 3], [1, -np.inf, 3]),
        ([np.inf, 2, 3], [1, 2, 3]),
        ([np.inf, np.inf, 3, 4, 5], [1, 2, 3, 4, 5]),  # NumPy's quantiles next to infinities
        ([0, 2, 3], [0, 2, 3]),  # zero divisor, float: epsilon
        ([1e-3, 2, 3], [0, 2, 3]),
    ]
    for a, b in cases:
        a32, b32 = np.array(a, np.float32), np.array(b, np.float32)
        for q in (0.5, 0.2, 0.9):
            compare_both(pg, h, {"y": a32}, {"y": b32}, check_error_stat=stat, atol=1e-2, rtol=1e-2,
                         infinities_compare_equal=infinities_compare_equal, error_quantile=q)


def test_infinities_compare_equal_turns_equal_infinities_into_passes():
    a = np.array([1.0, np.inf, -np.inf], np.float32)
    it0, it1 = pc.IterationResult({"y": a}, runner_name="a"), pc.IterationResult({"y": a.copy()}, runner_name="b")
    assert not bool(pc.CompareFunc.simple()(it0, it1)["y"])
    assert bool(pc.CompareFunc.simple(infinities_compare_equal=True)(it0, it1)["y"])


def test_per_output_options_with_default_key(pg, h):
    rng = np.random.default_rng(1)
    b = {name: rng.random((4, 4)).astype(np.float32) + 1 for name in ("logits", "boxes", "scores")}
    a = {"logits": b["logits"] + 1e-3, "boxes": b["boxes"] + 1e-1, "scores": b["scores"] + 1e-6}
    options = dict(
        atol={"logits": 2e-3, "boxes": 0.2, "": 1e-5},
        rtol={"": 0.0},
        check_error_stat={"logits": "max", "boxes": "median", "": "elemwise"},
        error_quantile={"": 0.5},
    )
    ours = compare_both(pg, h, a, b, rel=1e-5, **options)
    assert all(bool(r) for r in ours.values())
    assert ours["logits"].thresholds == pc.SimpleThreshold("max", 2e-3, 0.0)
    assert ours["boxes"].thresholds == pc.SimpleThreshold("median", 0.2, 0.0)
    assert ours["scores"].thresholds == pc.SimpleThreshold("elemwise", 1e-5, 0.0)
    # Without the "" key, outputs not listed get the built-in defaults.
    ours = compare_both(pg, h, a, b, rel=1e-5, atol={"logits": 2e-3})
    assert ours["scores"].thresholds.atol == 1e-5 and not bool(ours["boxes"])


def test_unknown_per_output_keys_warn(capsys):
    it0 = pc.IterationResult({"y": np.ones(3, np.float32)}, runner_name="a")
    it1 = pc.IterationResult({"y": np.ones(3, np.float32)}, runner_name="b")
    pc.CompareFunc.simple(atol={"nope": 1.0})(it0, it1)
    assert "Extra items in the atol dictionary: {'nope'}" in capsys.readouterr().out


def test_invalid_error_stat_is_a_clear_error():
    it0 = pc.IterationResult({"y": np.ones(3, np.float32)}, runner_name="a")
    with pytest.raises(PolyException, match="Invalid choice for check_error_stat: worst"):
        pc.CompareFunc.simple(check_error_stat="worst")(it0, it0)


@pytest.mark.parametrize(
    "shape0,shape1",
    [((1, 6), (6,)), ((2, 3), (3, 2)), ((2, 3, 4), (4, 2, 3)), ((6,), (2, 3)), ((2, 3), (2, 3))],
)
@pytest.mark.parametrize("check_shapes", [True, False])
def test_shape_rules_match_polygraphy(pg, h, shape0, shape1, check_shapes):
    rng = np.random.default_rng(5)
    a = rng.random(shape0).astype(np.float32)
    b = a.reshape(shape1) if len(shape0) != len(shape1) or sorted(shape0) != sorted(shape1) else a.copy()
    if sorted(shape0) == sorted(shape1) and len(shape0) == len(shape1) and shape0 != shape1:
        # a permutation: Polygraphy transposes the second output to the first one's shape
        perm = [shape1.index(d) for d in shape0]
        b = np.ascontiguousarray(np.transpose(a, np.argsort(perm)))
        assert b.shape == shape1
    ours = compare_both(pg, h, {"o": a}, {"o": b}, check_shapes=check_shapes)
    same = shape0 == shape1
    if check_shapes and not same:
        assert ours["o"] is False


def test_shapes_that_cannot_be_matched_fail_instead_of_crashing(capsys):
    it0 = pc.IterationResult({"o": np.ones((2, 3), np.float32)}, runner_name="a")
    it1 = pc.IterationResult({"o": np.ones((4,), np.float32)}, runner_name="b")
    assert pc.CompareFunc.simple(check_shapes=False)(it0, it1)["o"] is False
    assert "FAILED | Output: `o` | Cannot compare outputs of shapes" in capsys.readouterr().out


def test_fail_fast_stops_at_first_failed_output(pg, h):
    out0 = {"a": np.ones(3, np.float32), "b": np.ones(3, np.float32), "c": np.ones(3, np.float32)}
    out1 = {"a": np.ones(3, np.float32) * 2, "b": np.ones(3, np.float32) * 2, "c": np.ones(3, np.float32)}
    ours = compare_both(pg, h, out0, out1, fail_fast=True)
    assert list(ours) == ["a"]
    ours = compare_both(pg, h, out0, out1, fail_fast=False)
    assert [bool(r) for r in ours.values()] == [False, False, True]


def test_name_matching_and_index_fallback(pg, h):
    a = np.ones(3, np.float32)
    # exact, loose (substring) and positional matches, and an output with no counterpart
    out0 = {"logits": a, "Boxes": a, "scores": a}
    out1 = {"logits": a, "output_boxes:0": a, "third": a}
    ours = compare_both(pg, h, out0, out1)
    assert [(n, r.output1_name) for n, r in ours.items()] == [
        ("logits", "logits"), ("Boxes", "output_boxes:0"), ("scores", "third")
    ]
    # A loose match is refused when that name has an exact match of its own.
    ours = compare_both(pg, h, {"y": a, "y_extra": a}, {"y": a})
    assert list(ours) == ["y"]


def test_no_common_outputs_is_an_error():
    it0 = pc.IterationResult({"a": np.ones(3)}, runner_name="r0")
    it1 = pc.IterationResult({}, runner_name="r1")
    with pytest.raises(PolyException, match="no common outputs found"):
        pc.CompareFunc.simple()(it0, it1)


def _reset_once(pg):
    pg.logger.once_logged.clear()
    G_LOGGER.once_logged.clear()


def test_compare_accuracy_logs_match_polygraphy(pg, h, capsys):
    rng = np.random.default_rng(0)
    a = rng.random((2, 3)).astype(np.float32)
    outputs0 = {"out": a, "idx": np.array([[1, 0, 2]], np.int32), "mask": np.array([True, False, True])}
    outputs1 = {"out": a + np.float32(1e-3), "idx": np.array([[1, 0, 3]], np.int32),
                "mask": np.array([True, True, True])}
    for stat in ("max", "elemwise", "quantile"):
        if stat == "quantile":  # Polygraphy cannot take a quantile of bool differences
            outputs0.pop("mask"), outputs1.pop("mask")
        func_options = dict(atol={"out": 1e-2, "": 0}, rtol=0.0, check_error_stat=stat, error_quantile=0.5)
        _reset_once(pg)
        theirs = pg.comparator.Comparator.compare_accuracy(
            h.run_results(pg.comparator, {"runA": [outputs0], "runB": [outputs1]}),
            compare_func=pg.compare.SimpleCompareFunc(**func_options),
        )
        expected = capsys.readouterr().out
        _reset_once(pg)
        result = pc.Comparator.compare_accuracy(
            h.run_results(pc, {"runA": [outputs0], "runB": [outputs1]}), compare_func=pc.CompareFunc.simple(**func_options)
        )
        actual = capsys.readouterr().out
        assert bool(result) == bool(theirs)
        # Polygraphy prints a std-dev of differences computed in float32; the native engine sums
        # in float64, so tiny standard deviations agree only to a few digits.
        h.assert_logs_match(expected, actual, rel=1e-3)


def test_verbose_logs_match_polygraphy(pg, h, capsys):
    rng = np.random.default_rng(2)
    b = (rng.random((4, 30)) * 10).astype(np.float32)
    a = b + rng.standard_normal((4, 30)).astype(np.float32) * 1e-2
    _reset_once(pg)
    with pg.logger.verbosity(pg.logger.VERBOSE):
        pg.comparator.Comparator.compare_accuracy(h.run_results(pg.comparator, {"A": [{"x": a}], "B": [{"x": b}]}))
    expected = capsys.readouterr().out
    _reset_once(pg)
    with G_LOGGER.verbosity(G_LOGGER.VERBOSE):
        pc.Comparator.compare_accuracy(h.run_results(pc, {"A": [{"x": a}], "B": [{"x": b}]}))
    actual = capsys.readouterr().out
    h.assert_logs_match(expected, actual, rel=1e-3, ignore=[r"Loaded Module", r"Histogram", r"^\s*\(", r"Bin Range"])
    assert "---- Histogram ----" in actual


def test_no_numpy_recomputation_for_large_passing_outputs(monkeypatch):
    """The statistics of a passing comparison come from the native engine alone."""
    a = np.linspace(0, 1, 10_000, dtype=np.float32)
    b = a + np.float32(1e-7)
    called = []
    import poly.compare.funcs.simple as simple

    monkeypatch.setattr(simple, "display_diffs", lambda *args: called.append(args))
    result = pc.CompareFunc.simple(atol=1e-5)(pc.IterationResult({"y": a}, runner_name="a"),
                                              pc.IterationResult({"y": b}, runner_name="b"))
    assert bool(result["y"]) and not called
