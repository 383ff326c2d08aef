"""Accumulator.merge: the accumulators of disjoint shares of a dataset, merged in any order, give
the summary one accumulator fed every sample gives (how a Ray run merges its workers)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from poly.compare.dataset import Accumulator, SampleChecker, SampleResult


def _results(n=60, seed=0):
    """SampleResults of a two-output model: errors spread over decades, some failures, some
    NaNs, outputs missing from the reference or of the wrong shape, and a few unreadable samples."""
    rng = np.random.default_rng(seed)
    checker = SampleChecker(atol=1e-3, rtol=1e-3)
    results = []
    for i in range(n):
        if i % 17 == 5:
            results.append(SampleResult(i, f"s{i}", error="unreadable"))
            continue
        ref = {"y": rng.standard_normal(32).astype(np.float32), "z": rng.standard_normal(4).astype(np.float32)}
        noise = 10.0 ** rng.uniform(-8, -1)
        out = {k: (v + rng.standard_normal(v.shape).astype(np.float32) * noise).astype(np.float32)
               for k, v in ref.items()}
        if i % 23 == 7:
            out["z"][0] = np.nan
        if i % 13 == 4:  # outputs that cannot be compared: counted by cause
            del ref["z"]
        if i % 19 == 9:
            ref["y"] = ref["y"][:16]
        results.append(SampleResult(i, f"s{i}", checker.check(out, ref)))
    return results


def _strip_mean(report):
    means = {name: out.pop("mean_max_absdiff") for name, out in report["outputs"].items()}
    return report, means


@pytest.mark.parametrize("shares", [2, 3, 7])
def test_merged_shares_equal_one_accumulator(shares):
    results = _results()
    whole = Accumulator(worst_k=5, keep_failed=4, keep_errors=2)
    for r in results:
        whole.add(r)
    rng = np.random.default_rng(shares)
    parts = [Accumulator(worst_k=5, keep_failed=4, keep_errors=2) for _ in range(shares)]
    for r in results:
        parts[int(rng.integers(shares))].add(r)
    merged = Accumulator(worst_k=5, keep_failed=4, keep_errors=2)
    for part in reversed(parts):  # any order
        merged.merge(part)

    expected, mean_a = _strip_mean(whole.to_dict())
    got, mean_b = _strip_mean(merged.to_dict())
    assert expected["failed"] > 4 and expected["errors"] > 2  # the kept lists are truncated
    assert expected["outputs"]["z"]["error_causes"][0]["error"] == "missing from the reference"
    assert expected["outputs"]["y"]["error_causes"][0]["samples"] == 3
    assert got == expected
    for name in mean_a:
        assert math.isclose(mean_a[name], mean_b[name], rel_tol=1e-12)


def test_merge_into_empty_and_from_empty():
    results = _results(20, seed=1)
    acc = Accumulator()
    for r in results:
        acc.add(r)
    before = acc.to_dict()
    acc.merge(Accumulator())
    assert acc.to_dict() == before
    empty = Accumulator()
    empty.merge(acc)
    assert empty.to_dict() == before
