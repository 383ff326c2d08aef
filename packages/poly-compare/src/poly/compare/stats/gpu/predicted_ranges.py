"""
Where the wanted ranks of absdiff and reldiff lie, predicted from a sample of the input, so that
the statistics pass itself can gather the keys near them (no second pass over the input).

A sample of up to ``SAMPLE_SIZE`` keys, one drawn in each of as many equal strata of the input, puts
a rank ``r`` of ``n`` near sample position ``S r / n``, within a binomial spread of
``sqrt(S p (1 - p))`` positions (``p = r / n``). The range between the sample keys ``SIGMAS`` such
spreads below and above holds rank ``r`` unless the sample was that unlucky (about 6 in 100,000
for 4 spreads); the statistics pass counts the keys below each range and writes the keys within
it to a buffer (each thread of the pass to a region of its own), and a rank is looked for among
those keys only once the counts prove it is there. Anything else (a rank outside its range, a region that overflowed)
goes the ordinary way: a gather pass over the input. The prediction decides the speed, never
the result.

The plan is made on the device (``poly_plan_ranges``), right behind the sample, and reaches the
statistics pass through constant memory: the GPU does not wait for the host between the sample
and the pass. The host only asks for the sample positions that end each rank's range
(``range_ends``) and sizes the regions for the keys the ranges would hold were the sample's keys
distinct, with ``TIE_ALLOWANCE`` for ties, or for what they held last time (``region_budget``). ``stream_ranges`` is the
same plan in NumPy, from a sample (the reference the kernel is tested against); ``RangePlan``
holds a comparison's plan, its device buffers and, after the statistics pass, the table the
device made and the keys of the ranks its select found in the ranges.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from poly.compare.stats.gpu.device_run import SELECT_TARGET, record_struct
from poly.compare.stats.gpu.kernel_source import PLAN_RANKS, RANGES

__all__ = ["SAMPLE_SIZE", "SAMPLE_MIN", "SAMPLE_SHARE", "MAX_KEYS_PER_THREAD", "SIGMAS", "MIN_ELEMENTS",
           "MAX_FRACTION", "PLAN_RANKS", "StreamRanges", "RangePlan",
           "stream_ranges", "ranges_from_ends", "range_ends", "region_budget", "learn_budget", "plan_ask",
           "region_capacity", "PLAN_ASK", "PLAN_STATE", "RANGE_TABLE", "RANGE_TARGET", "RANGE_SELECT_STATE"]

# Sample keys per stream: one in 2^SAMPLE_SHARE of the input's elements, from SAMPLE_MIN to
# SAMPLE_SIZE (and never more than the input). Ranges half as wide hold half the keys, whose stores
# and radix passes cost more than a larger sample and plan: 10^9 float32 pairs, median and
# p90/95/99 (H200), with 2^18 sample keys against 2^16: statistics pass 5.79 -> 5.50 ms, radix
# passes over the ranges' keys 1.19 -> 0.68 ms, sample and plan 0.14 -> 0.42 ms.
SAMPLE_SIZE = 1 << 18
SAMPLE_MIN = 1 << 16
SAMPLE_SHARE = 12
SIGMAS = 4.0  # binomial spreads of the sample position on each side of a rank's range
# A thread of the statistics pass counts the keys below each range of float32 keys in 16-bit halves of
# its registers (kernels/stats_pass.cuh, key_in_ranges): inputs of more elements a thread (about 4.4
# billion with a full H200's grid) go the ordinary way.
MAX_KEYS_PER_THREAD = (1 << 16) - 1
MIN_ELEMENTS = 3 << 27  # below this (about 4e8), a gather pass costs less than the range work in the statistics pass
MAX_FRACTION = 8  # a stream whose ranges would hold more than 1/MAX_FRACTION of its keys (ties) is not predicted
REGION_SLACK = 1.5  # a thread's region holds this many times its expected share of the keys...
REGION_EXTRA = 8  # ... and this many more (rounded up to a power of two)
TIE_ALLOWANCE = 1.5  # regions are sized for this many times the keys of distinct sample keys' ranges
LEARNED_SLACK = 1.25  # ... or this many times what the ranges held last time, where more (ties)
LEARNED_MAX = 64  # (input size, ranks) pairs remembered
LEARNED_BUDGETS: dict[tuple[int, tuple[int, ...]], int] = {}  # the keys those ranges held, where more than sized for
_LEARNED_LOCK = threading.Lock()

# The kernels' PlanAsk, PlanState (its targets are SelTargets), RangeTable, RangeTarget and
# RangeSelState (kernels/layouts.cuh).
PLAN_ASK = np.dtype([("at_lo", "i8", (PLAN_RANKS,)), ("at_hi", "i8", (PLAN_RANKS,)), ("max_expected", "u8"),
                     ("nranks", "i4"), ("pad", "i4")], align=True)
PLAN_STATE = np.dtype([("t", SELECT_TARGET, (2 * PLAN_RANKS,)), ("hist", "u8", (2 * PLAN_RANKS, 256)),
                       ("below", "u4", (2 * PLAN_RANKS,)),
                       ("upto", "u4", (2 * PLAN_RANKS,)), ("done_blocks", "u4"), ("pad", "i4")], align=True)
RANGE_TABLE = np.dtype([("lo", "u8", (2 * RANGES,)), ("hi", "u8", (2 * RANGES,)), ("expected", "u8", (2,)),
                        ("nranges", "i4", (2,)), ("range_of", "i4", (2 * PLAN_RANKS,))], align=True)
RANGE_TARGET = np.dtype([("prefix", "u8"), ("rank", "u8"), ("lo", "u8"), ("hi", "u8"), ("stream", "i4"),
                         ("bits", "i4"), ("ask", "i4"), ("missed", "i4")], align=True)
RANGE_SELECT_STATE = np.dtype([("t", RANGE_TARGET, (2 * PLAN_RANKS,)), ("done_blocks", "u4"), ("ntargets", "i4")],
                              align=True)
# One unpack of a RangeTable read back: lo, hi (2 RANGES each), expected (2), nranges (2), range_of (2 PLAN_RANKS).
_TABLE = record_struct(RANGE_TABLE)


@dataclass
class StreamRanges:
    """One stream's predicted ranges: ``bounds`` (lo, hi) keys, ascending and disjoint, at most
    RANGES; ``range_of`` each wanted rank's range; ``expected`` the keys they should hold."""

    bounds: list[tuple[int, int]]
    range_of: dict[int, int]
    expected: int


def range_ends(n: int, ranks: Iterable[int], size: int) -> list[tuple[int, int, int]]:
    """(rank, low end, high end) of each of ``ranks`` (of ``n`` keys), ascending: the positions in a
    sorted sample of ``size`` keys whose keys bound the rank's range (below 0 or from ``size`` on:
    the range is open on that side)."""
    ends = []
    for r in sorted(set(ranks)):
        p = min(max(r / n, 0.0), 1.0)
        centre = p * size
        spread = math.sqrt(size * p * (1.0 - p)) + 1.0
        ends.append((r, math.floor(centre - SIGMAS * spread), math.ceil(centre + SIGMAS * spread)))
    return ends


def stream_ranges(sample: np.ndarray, n: int, ranks: Iterable[int], key_bits: int) -> StreamRanges | None:
    """The ranges of one stream holding ``ranks`` (of ``n`` keys), predicted from its ``sample``
    of keys; None when they would hold too many keys (heavy ties) to be worth gathering. The
    device's ``poly_plan_ranges`` makes the same plan."""
    keys = np.sort(np.asarray(sample))
    sr = ranges_from_ends(keys, n, range_ends(n, ranks, len(keys)), key_bits)
    return None if sr.expected * MAX_FRACTION > n else sr


def ranges_from_ends(keys: np.ndarray, n: int, ends: Iterable[tuple[int, int, int]], key_bits: int) -> StreamRanges:
    """The ranges of one stream from its sorted sample ``keys`` and the (rank, low end, high end)
    sample positions of each wanted rank (``range_ends``): each rank's span, the overlapping or
    adjacent ones merged, the neighbours with the fewest sample keys between them joined while
    more than RANGES remain, and the keys of the input they should hold."""
    size = len(keys)
    top = (1 << key_bits) - 1
    spans: list[list] = []  # [lo, hi, ranks]
    for r, k_lo, k_hi in ends:
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
    return StreamRanges(bounds=[(lo, hi) for lo, hi, _ in merged],
                        range_of={r: j for j, (_, _, rs) in enumerate(merged) for r in rs}, expected=expected)


def region_budget(n: int, ranks: Sequence[int], size: int) -> int | None:
    """The most keys of ``n`` the ranges of ``ranks`` may hold, planned from a sample of ``size``:
    ``TIE_ALLOWANCE`` times what they would hold were the sample's keys distinct (ties only add to
    it), or ``LEARNED_SLACK`` times what an earlier comparison of the same size and ranks found
    they held where that is more (``learn_budget``), at most 1/MAX_FRACTION of the input; None when
    distinct keys' ranges already hold more, or for more ranks than the device plans."""
    key = tuple(sorted(set(ranks)))
    if len(key) > PLAN_RANKS:
        return None
    estimate = _distinct_estimate(n, key, size, SIGMAS, MAX_FRACTION)
    if estimate is None:
        return None
    budget = max(math.ceil(estimate * TIE_ALLOWANCE), math.ceil(LEARNED_BUDGETS.get((n, key), 0) * LEARNED_SLACK))
    return min(budget, n // MAX_FRACTION)


def learn_budget(n: int, ranks: Sequence[int], expected: int) -> None:
    """Remembers that the ranges of ``ranks`` held about ``expected`` of ``n`` keys, more than their
    regions were sized for (ties at their ends): the next comparison of that size and those ranks
    sizes them for it (outputs of one model come back to back, alike)."""
    if expected * MAX_FRACTION > n:
        return  # never worth predicting
    with _LEARNED_LOCK:  # (comparisons on two GPUs may learn at once)
        if len(LEARNED_BUDGETS) >= LEARNED_MAX:
            LEARNED_BUDGETS.pop(next(iter(LEARNED_BUDGETS)))
        LEARNED_BUDGETS[(n, tuple(sorted(set(ranks))))] = expected


@functools.lru_cache(maxsize=64)
def _distinct_estimate(n: int, ranks: tuple[int, ...], size: int, sigmas: float, max_fraction: int) -> int | None:
    # (keyed by the module's settings too: stream_ranges reads them)
    sr = stream_ranges(np.arange(1, size + 1, dtype=np.uint64), n, ranks, 64)
    return None if sr is None else sr.expected


def plan_ask(n: int, ranks_of: dict[int, Sequence[int]], size: int, max_expected: dict[int, int]) -> np.ndarray:
    """The PlanAsk of each stream (absdiff, reldiff) for ``ranks_of[stream]``: the sample positions
    ending each rank's range, and the most keys its ranges may hold (``max_expected``). Read-only
    (kept for the next comparison of the same size and requests)."""
    return _plan_ask(n, tuple((stream, tuple(ranks), max_expected[stream]) for stream, ranks in ranks_of.items()), size)


@functools.lru_cache(maxsize=64)
def _plan_ask(n: int, asked: tuple[tuple[int, tuple[int, ...], int], ...], size: int) -> np.ndarray:
    ask = np.zeros(2, dtype=PLAN_ASK)
    for stream, ranks, most in asked:
        ends = range_ends(n, ranks, size)
        row = ask[stream - 2]
        row["nranks"] = len(ends)
        row["max_expected"] = most
        for i, (_, k_lo, k_hi) in enumerate(ends):
            row["at_lo"][i], row["at_hi"][i] = k_lo, k_hi
    ask.setflags(write=False)
    return ask


def region_capacity(expected: int, regions: int) -> int:
    """Keys per region (a power of two) for ``expected`` keys spread over ``regions`` threads."""
    return 1 << (math.ceil(expected * REGION_SLACK / regions) + REGION_EXTRA - 1).bit_length()


@dataclass
class RangePlan:
    """A comparison's predicted ranges, planned on the device: the ranks asked by stream (2 absdiff,
    3 reldiff, ascending); the statistics pass's ``blocks`` and its ``regions`` (threads) of
    ``capacity`` keys in each stream's ``buffers``, their fills at ``fills`` (u32, stream-major);
    ``rout``, the device words the pass counts into (below each range, then each stream's fullest
    region); ``table``, the device's RangeTable; ``hist``, the first-digit histograms the
    pass counts for a stream left unpredicted. ``take`` reads the table back after the pass:
    ``streams`` then holds each predicted stream's ranges; ``selected``, the keys of the ranks the
    ranges gave (order_select.select_in_ranges)."""

    ranks: dict[int, list[int]]
    n: int
    blocks: int
    regions: int
    capacity: int
    buffers: dict[int, int]
    fills: int
    rout: int
    table: int
    hist: int
    sample: int = 0  # the sample's keys on the device (absdiff's, then reldiff's)
    sample_size: int = 0  # keys a stream in the sample
    ask: np.ndarray | None = None  # the PlanAsk records the device planned from
    streams: dict[int, StreamRanges] = field(default_factory=dict)
    selected: dict[tuple[int, int], int] = field(default_factory=dict)  # (stream, rank) -> key

    rout_words = 2 * RANGES + 2

    def apply(self, p) -> None:
        """Sets the statistics pass's region parameters in launch parameters ``p`` (the ranges
        themselves are in the kernels' constant memory)."""
        p.rout, p.rfills, p.rcap, p.hist = self.rout, self.fills, self.capacity, self.hist
        for i, stream in enumerate((2, 3)):
            p.rbuf[i] = self.buffers.get(stream, 0)

    def take(self, table: np.ndarray) -> None:
        """Keeps the ranges of the device's ``table`` (one RANGE_TABLE record)."""
        values = _TABLE.unpack_from(table)  # (Python numbers at once: NumPy's field reads cost more)
        los, his = values[:2 * RANGES], values[2 * RANGES:4 * RANGES]
        expected, nranges, range_of = values[4 * RANGES:4 * RANGES + 2], values[4 * RANGES + 2:4 * RANGES + 4], \
            values[4 * RANGES + 4:]
        for stream, ranks in self.ranks.items():
            i = stream - 2
            count = nranges[i]
            if count == 0:
                learn_budget(self.n, ranks, expected[i])
                continue
            lo = i * RANGES
            self.streams[stream] = StreamRanges(
                bounds=list(zip(los[lo:lo + count], his[lo:lo + count], strict=True)),
                range_of=dict(zip(ranks, range_of[i * PLAN_RANKS:i * PLAN_RANKS + len(ranks)], strict=True)),
                expected=expected[i])

    def unpredicted(self) -> list[int]:
        """The streams (2, 3) the statistics pass counted the first key digit of (no ranges)."""
        return [s for s in (2, 3) if s not in self.streams]
