"""BisectMarker and LinearMarker find the pass/fail boundary within their iteration bounds."""

from __future__ import annotations

import math

import pytest

from poly.debug import BisectMarker, LinearMarker


def search(marker, first_bad):
    steps = 0
    while not marker.stop():
        marker.step(marker.index < first_bad)
        steps += 1
    return steps


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8, 33, 100, 415])
def test_bisect_finds_every_boundary_within_ceil_log2(count):
    bound = math.ceil(math.log2(count)) if count > 1 else 0
    for first_bad in range(1, count + 1):
        marker = BisectMarker(count)
        steps = search(marker, first_bad)
        assert marker.bad == first_bad and marker.good == first_bad - 1
        assert steps <= bound


def test_gallop_costs_one_step_when_the_first_probe_fails():
    marker = BisectMarker(1000, gallop=True)
    assert marker.index == 1
    assert search(marker, 1) == 1 and marker.bad == 1
    for first_bad in (2, 5, 17, 600, 1000):
        marker = BisectMarker(1000, gallop=True)
        steps = search(marker, first_bad)
        assert marker.bad == first_bad
        assert steps <= 2 * math.ceil(math.log2(first_bad)) + 1


def test_linear_walks_from_the_bad_end():
    marker = LinearMarker(10)
    tried = []
    while not marker.stop():
        tried.append(marker.index)
        marker.step(marker.index < 6)
    assert tried == [9, 8, 7, 6, 5] and marker.bad == 6


def test_inverted_markers_search_the_other_way():
    # Counts at or above 7 pass (e.g. layers kept in higher precision).
    for marker in (BisectMarker(20, invert=True), LinearMarker(20, invert=True)):
        while not marker.stop():
            marker.step(marker.index >= 7)
        assert (marker.good, marker.bad) == (7, 6)
