"""
Where the wanted ranks of absdiff and reldiff lie, predicted from a sample of the input, so that
the statistics pass itself can gather the keys near them (no second pass over the input).

A sample of ``SAMPLE_SIZE`` keys, one drawn in each of as many equal strata of the input, puts
a rank ``r`` of ``n`` near sample position ``S r / n``, within a binomial spread of
``sqrt(S p (1 - p))`` positions (``p = r / n``). The range between the sample keys ``SIGMAS`` such
spreads below and above holds rank ``r`` unless the sample was that unlucky (about 6 in 100,000
for 4 spreads); the statistics pass counts the keys below each range and writes the keys within
it to a buffer (each thread of the pass to a region of its own), and a rank is looked for among
those keys only once the counts prove it is there. Anything else (a rank outside its range, a region that overflowed)
goes the ordinary way: a gather pass over the input. The prediction decides the speed, never
the result.

``stream_ranges`` plans one stream's ranges from its sample (pure NumPy); ``RangePlan`` holds a
comparison's plan, its device buffers and, after the statistics pass, the counts it made.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from poly.compare.stats.gpu.kernel_source import RANGES

__all__ = ["SAMPLE_SIZE", "SIGMAS", "MIN_ELEMENTS", "MAX_FRACTION", "StreamRanges", "RangePlan", "stream_ranges",
           "region_capacity"]

SAMPLE_SIZE = 1 << 16  # sample keys per stream
SIGMAS = 4.0  # binomial spreads of the sample position on each side of a rank's range
MIN_ELEMENTS = 3 << 27  # below this (about 4e8), a gather pass costs less than the range work in the statistics pass
MAX_FRACTION = 8  # a stream whose ranges would hold more than 1/MAX_FRACTION of its keys (ties) is not predicted
REGION_SLACK = 1.5  # a thread's region holds this many times its expected share of the keys...
REGION_EXTRA = 8  # ... and this many more (rounded up to a power of two)


@dataclass
class StreamRanges:
    """One stream's predicted ranges: ``bounds`` (lo, hi) keys, ascending and disjoint, at most
    RANGES; ``range_of`` each wanted rank's range; ``expected`` the keys they should hold."""

    bounds: list[tuple[int, int]]
    range_of: dict[int, int]
    expected: int


def stream_ranges(sample: np.ndarray, n: int, ranks: Iterable[int], key_bits: int) -> StreamRanges | None:
    """The ranges of one stream holding ``ranks`` (of ``n`` keys), predicted from its ``sample``
    of keys; None when they would hold too many keys (heavy ties) to be worth gathering. (The
    sample is sorted: NumPy's vectorised sort takes a third of the time of a partition at the
    ranges' ends, which selects one end after another.)"""
    keys = np.sort(np.asarray(sample))
    size = len(keys)
    top = (1 << key_bits) - 1
    spans: list[list] = []  # [lo, hi, ranks]
    for r in sorted(set(ranks)):
        p = min(max(r / n, 0.0), 1.0)
        centre = p * size
        spread = math.sqrt(size * p * (1.0 - p)) + 1.0
        k_lo, k_hi = math.floor(centre - SIGMAS * spread), math.ceil(centre + SIGMAS * spread)
        lo = int(keys[k_lo]) if k_lo >= 0 else 1  # key 0 (a NaN's) is never gathered
        hi = int(keys[k_hi]) if k_hi < size else top
        spans.append([lo, max(lo, hi), [r]])
    spans.sort(key=lambda s: s[0])
    merged: list[list] = []
    for span in spans:
        if merged and span[0] <= merged[-1][1] + 1:  # overlapping or adjacent
            merged[-1][1] = max(merged[-1][1], span[1])
            merged[-1][2] += span[2]
        else:
            merged.append(span)

    def ends(spans: list[list]) -> tuple[np.ndarray, np.ndarray]:  # the spans' low and high keys
        return (np.array([sp[0] for sp in spans], dtype=keys.dtype), np.array([sp[1] for sp in spans], dtype=keys.dtype))

    below = lambda k: np.searchsorted(keys, k, side="left")  # noqa: E731 - sample keys below each of keys k
    upto = lambda k: np.searchsorted(keys, k, side="right")  # noqa: E731 - ... and up to each
    while len(merged) > RANGES:  # join the two neighbours with the fewest sample keys between them
        los, his = ends(merged)
        i = int(np.argmin(below(los[1:]) - upto(his[:-1])))
        merged[i] = [merged[i][0], merged[i + 1][1], merged[i][2] + merged[i + 1][2]]
        del merged[i + 1]
    los, his = ends(merged)
    inside = int((upto(his) - below(los)).sum())
    expected = math.ceil((inside + len(merged)) * n / size)
    if expected * MAX_FRACTION > n:
        return None
    return StreamRanges(bounds=[(lo, hi) for lo, hi, _ in merged],
                        range_of={r: j for j, (_, _, rs) in enumerate(merged) for r in rs}, expected=expected)


def region_capacity(expected: int, regions: int) -> int:
    """Keys per region (a power of two) for ``expected`` keys spread over ``regions`` threads."""
    return 1 << (math.ceil(expected * REGION_SLACK / regions) + REGION_EXTRA - 1).bit_length()


@dataclass
class RangePlan:
    """A comparison's predicted ranges by stream (2 absdiff, 3 reldiff); the statistics pass's
    ``blocks`` and its ``regions`` (threads) of ``capacity`` keys in each stream's ``buffers``,
    their fills at ``fills`` (u32, stream-major); and ``rout``, the device words the pass counts
    into. ``take`` reads those counts back after the pass."""

    streams: dict[int, StreamRanges]
    blocks: int
    regions: int
    capacity: int
    buffers: dict[int, int]
    fills: int
    rout: int
    targets: list = field(default_factory=list)  # order_select's targets of the ranks in the ranges
    first_pass: tuple | None = None  # the first radix pass over the ranges (launches, histograms read back)
    below: np.ndarray | None = field(default=None)  # (2, RANGES): keys below each range's lo
    largest: np.ndarray | None = field(default=None)  # (2,): the fullest region's keys (found, written or not)
    found: np.ndarray | None = field(default=None)  # (2,): keys found within the ranges

    rout_words = 2 * RANGES + 4

    def apply(self, p) -> None:
        """Sets the statistics pass's range parameters in launch parameters ``p``."""
        p.rout, p.rfills, p.rcap = self.rout, self.fills, self.capacity
        for i, stream in enumerate((2, 3)):
            sr = self.streams.get(stream)
            p.nranges[i] = 0 if sr is None else len(sr.bounds)
            p.rbuf[i] = self.buffers.get(stream, 0)
            for j in range(RANGES):
                lo, hi = sr.bounds[j] if sr is not None and j < len(sr.bounds) else (0, 0)  # [0, 0]: unused
                p.rlo[i * RANGES + j], p.rhi[i * RANGES + j] = lo, hi

    def take(self, rout: np.ndarray) -> None:
        """Keeps the counts the statistics pass left in ``rout`` (its ``rout_words`` words)."""
        self.below = rout[:2 * RANGES].reshape(2, RANGES).copy()
        self.largest = rout[2 * RANGES:2 * RANGES + 2].copy()
        self.found = rout[2 * RANGES + 2:2 * RANGES + 4].copy()

    def usable(self, stream: int) -> bool:
        """Whether ``stream`` was predicted and every thread's keys fitted its region."""
        return stream in self.streams and self.largest is not None and int(self.largest[stream - 2]) <= self.capacity

    def below_range(self, stream: int, j: int) -> int:
        return int(self.below[stream - 2, j])

    def fills_address(self, stream: int) -> int:
        """Device address of ``stream``'s region fills."""
        return self.fills + 4 * (stream - 2) * self.regions
