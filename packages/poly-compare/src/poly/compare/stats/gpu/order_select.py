"""
The exact order statistics of a comparison on the GPU: a radix select on the order-preserving
keys of absdiff and reldiff (and of a and b, for their medians), driven from the host.

1. The statistics pass counts the top 12 key bits of absdiff and reldiff (a histogram each).
2. Where one pass finds the last two digits of float32 keys (any size), or the passes read at
   most ``SELECT_MAX_READS`` elements in all, passes over the input finish the select on the
   device (``poly_select_input``: each pass's last block descends the ranks), with no host round
   trip between passes. Otherwise, the keys of the elements in the bins that hold a wanted rank
   are gathered into a buffer per stream, in one more pass over the input (while they fit the
   memory budget; otherwise histogram passes over the input narrow the bins first), and:
3. Radix passes over the gathered keys, 11 bits at a time, narrow each rank's key; once the
   groups still holding the ranks have at most ``COLLECT_MAX_KEYS`` keys, those are copied to
   the host, which picks each rank's key.

On a large input (``predicted_ranges.MIN_ELEMENTS``), ``plan_ranges`` first predicts from a
sample a key range holding each rank of absdiff and reldiff (planned on the device, with no host
round trip); the statistics pass then gathers the keys within those ranges itself (instead of
step 1), and ``select_in_ranges`` narrows the ranks on those keys on the device, queued behind the
pass; only a rank that turns out to lie outside its range takes step 2.

Only histograms and counts (a few KiB) come back to the host, and the few keys of step 3.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from poly.compare.stats.gpu.cuda_api import GpuError
from poly.compare.stats.gpu.device_run import (
    SELECT_STATE,
    SELECT_TARGET,
    DeviceRun,
    LaunchParams,
    record_struct,
)
from poly.compare.stats.gpu.kernel_source import (
    DIGIT_BITS,
    FIRST_BITS,
    GATHER_RESERVE_BYTES,
    GATHER_STAGE_BYTES,
    HIST_GROUPS,
    MAX_GROUPS,
    PLAN_BLOCKS,
    PLAN_RANKS,
    RANGES,
    RING_BYTES,
    SELECT_BITS,
    SELECT_PER_SLOT,
    SELECT_TARGETS,
    STATS_HIST_BYTES,
    THREADS,
)
from poly.compare.stats.gpu.predicted_ranges import (
    MAX_KEYS_PER_THREAD,
    MIN_ELEMENTS,
    PLAN_ASK,
    PLAN_STATE,
    RANGE_SELECT_STATE,
    RANGE_TABLE,
    RANGE_TARGET,
    SAMPLE_MIN,
    SAMPLE_SHARE,
    SAMPLE_SIZE,
    RangePlan,
    plan_ask,
    region_budget,
    region_capacity,
)

__all__ = ["order_values", "plan_ranges", "select_in_ranges", "radix_copies", "select_behind_stats", "DeviceSelect",
           "DeviceRangeSelect"]

GATHER_MIN_KEYS = 1 << 22  # keys gathered at once whatever the input's size...
GATHER_FRACTION = 2  # ... or up to 1/GATHER_FRACTION of its elements
GATHER_UNCHECKED_BYTES = 1 << 25  # a gather this small is not checked against the free memory
# A device-side select reads the input once per SELECT_BITS key bits after the first digit, or
# once for all of a float32 key's where a pass counts the second digit in global memory
# (``_fine_pass``). That one pass serves an input of any size: a gather pass reads the input as
# well, and its radix passes and round trips come on top (H200, median: 2^27 float32 pairs 2.5 ->
# 1.4 ms, 2^28 3.8 -> 2.4 ms; at 10^9 even with the predicted ranges). Several passes serve inputs
# whose passes read at most this many elements in all (float64 keys: 6 passes, about 11M elements).
SELECT_MAX_READS = 1 << 26
# Key bits the first pass over the predicted ranges' keys counts (each range's whole keys: every
# block of it adds 2^RANGE_FIRST_BITS counts a range to the global histograms); later passes count
# DIGIT_BITS.
RANGE_FIRST_BITS = 8
COLLECT_MAX_KEYS = 1 << 14  # groups holding this few keys in all (64 KiB of float32 keys) are copied to the host instead of narrowed further
_BINS = 1 << DIGIT_BITS


def _key_bits(run: DeviceRun) -> int:
    """Bits of the order keys: those of the compute type's values."""
    return 32 if run.setup.f32 else 64


@dataclass
class _Target:
    """One wanted rank of one stream, narrowed digit by digit: the known top ``bits`` bits of its
    key (``prefix``), its rank among the elements with that prefix and how many they are."""

    stream: int
    rank: int
    key_bits: int
    prefix: int = 0
    bits: int = 0
    rank_in: int = 0
    count: int = 0
    done: bool = False
    segment: tuple[int, int, int] | None = None  # its gathered keys: (device address, capacity, address of their count)

    @property
    def group(self) -> tuple[int, int, int]:
        return self.stream, self.prefix, self.bits


def _descend(items: Sequence[tuple[Sequence[_Target], np.ndarray, int]]) -> None:
    """Narrows the targets of each (targets, histogram, dbits) item (the targets of one group, the
    histogram of their next ``dbits`` key bits) at once: the histograms laid end to end have one
    running sum, in which one search places every rank (a few array operations per pass, not a
    few per group: those cost more than the pass on a small input)."""
    items = [item for item in items if item[0]]
    if not items:
        return
    lengths = np.array([len(h) for _, h, _ in items])
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    counts_of = np.concatenate([h for _, h, _ in items])
    cum = np.cumsum(counts_of, dtype=np.uint64)
    bases = np.where(starts > 0, cum[np.maximum(starts, 1) - 1], 0).astype(np.uint64)  # counts before each histogram
    totals = cum[starts + lengths - 1] - bases
    owner = np.repeat(np.arange(len(items)), [len(ts) for ts, _, _ in items])
    ranks = np.array([t.rank_in for ts, _, _ in items for t in ts], dtype=np.uint64)
    ranks = np.minimum(ranks, np.maximum(totals[owner], 1) - 1)
    at = np.searchsorted(cum, bases[owner] + ranks, side="right")  # within the owner's histogram
    at = np.minimum(at, starts[owner] + lengths[owner] - 1)  # (only an empty histogram reaches past it)
    below = np.where(at > starts[owner], cum[np.maximum(at, 1) - 1] - bases[owner], 0)
    rows = zip((ranks - below).tolist(), (at - starts[owner]).tolist(), counts_of[at].tolist(),
               totals[owner].tolist(), strict=True)
    for ts, _, dbits in items:
        for t in ts:
            rank_in, b, count, total = next(rows)
            if total == 0:  # cannot happen for a rank below the count; kept from looping forever
                t.prefix <<= t.key_bits - t.bits
                t.bits, t.done = t.key_bits, True
                continue
            t.rank_in = rank_in
            t.prefix = (t.prefix << dbits) | b
            t.bits += dbits
            t.count = count
            t.done = t.bits >= t.key_bits


_GroupKey = tuple[int, int, int]  # (stream, prefix, bits)


def _set_groups(p: LaunchParams, groups: Sequence[_GroupKey], dbits: Sequence[int]) -> None:
    p.ngroups = len(groups)
    for j, ((stream, prefix, bits), d) in enumerate(zip(groups, dbits, strict=True)):
        g = p.groups[j]
        g.stream, g.prefix, g.bits, g.dbits = stream, prefix, bits, d


def _pending(targets: Sequence[_Target]) -> dict[_GroupKey, list[_Target]]:
    groups: dict[_GroupKey, list[_Target]] = {}
    for t in targets:
        if not t.done:
            groups.setdefault(t.group, []).append(t)
    return groups


Launch = Callable[[LaunchParams, list[_GroupKey]], None]


_Launched = list[tuple[dict[_GroupKey, list[_Target]], list[_GroupKey], list[int], int]]


def _radix_pass(run: DeviceRun, jobs: Sequence[tuple[dict[_GroupKey, list[_Target]], Launch]],
                key_bits: int, per_launch: int) -> None:
    """One radix pass: for each job ``(groups, launch)``, one launch per ``per_launch`` of its
    groups (``launch(params, chunk)`` sets the kernel's own parameters and launches it); the
    histograms, read back together, descend the targets."""
    launched = _radix_launch(run, jobs, key_bits, per_launch)
    _radix_descend(launched, run.read_all(radix_copies(launched)))


def _radix_launch(run: DeviceRun, jobs: Sequence[tuple[dict[_GroupKey, list[_Target]], Launch]],
                  key_bits: int, per_launch: int) -> _Launched:
    """The launches of ``_radix_pass``: (groups, chunk, digit bits, histograms' address) per launch."""
    launched = []
    for groups, launch in jobs:
        keys = list(groups)
        for i in range(0, len(keys), per_launch):
            chunk = keys[i:i + per_launch]
            dbits = [min(DIGIT_BITS, key_bits - g[2]) for g in chunk]
            p = run.params()
            _set_groups(p, chunk, dbits)
            p.hist = run.alloc(len(chunk) * _BINS * 8, zero=True)
            launch(p, chunk)
            launched.append((groups, chunk, dbits, p.hist))
    return launched


def radix_copies(launched: _Launched) -> list[tuple[int, np.ndarray]]:
    """The copies that read the histograms of ``launched`` back."""
    return [(ptr, np.empty(len(chunk) * _BINS, dtype=np.uint64)) for _, chunk, _, ptr in launched]


def _radix_descend(launched: _Launched, hists: Sequence[np.ndarray]) -> None:
    """Descends the targets of ``launched`` by their histograms ``hists`` (read back)."""
    _descend([(groups[g], h[j * _BINS:j * _BINS + (1 << dbits[j])], dbits[j])
              for (groups, chunk, dbits, _), h in zip(launched, hists, strict=True) for j, g in enumerate(chunk)])


def _input_hist_pass(run: DeviceRun, groups: dict[_GroupKey, list[_Target]], key_bits: int) -> None:
    """One histogram pass over the input for each HIST_GROUPS of ``groups``; descends their targets."""

    def launch(p: LaunchParams, chunk: list[_GroupKey]) -> None:
        shared = RING_BYTES + len(chunk) * _BINS * 4
        run.launch("poly_radix_hist", p, run.grid("poly_radix_hist", shared), shared)

    _radix_pass(run, [(groups, launch)], key_bits, HIST_GROUPS)


def _keys_hist_pass(run: DeviceRun, groups: dict[_GroupKey, list[_Target]], key_bits: int) -> None:
    """One radix pass over each gathered segment, for all its groups (HIST_GROUPS per launch: one
    read of the segment counts them all); descends their targets."""
    _radix_pass(run, _keys_hist_jobs(run, groups), key_bits, HIST_GROUPS)


def _by_segment(groups: dict[_GroupKey, list[_Target]]) -> dict[tuple[int, int, int], dict[_GroupKey, list[_Target]]]:
    by_segment: dict[tuple[int, int, int], dict[_GroupKey, list[_Target]]] = {}
    for g, targets in groups.items():
        by_segment.setdefault(targets[0].segment, {})[g] = targets
    return by_segment


def _segment_grid(run: DeviceRun, p: LaunchParams, segment: tuple[int, int, int], name: str, shared: int) -> int:
    """Sets the parameters of a pass of kernel ``name`` over ``segment`` (a gather's buffer) and
    returns its grid."""
    ptr, capacity, counter = segment
    p.seg[0], p.out, p.seg_len[0] = ptr, counter, capacity  # the length is read on the device
    return run.grid(name, shared, n=max(capacity, 1))


def _keys_hist_jobs(run: DeviceRun, groups: dict[_GroupKey, list[_Target]]
                    ) -> list[tuple[dict[_GroupKey, list[_Target]], Launch]]:
    """The jobs of a radix pass over the gathered segments of ``groups``: a segment's groups each."""

    def launcher_of(segment: tuple[int, int, int]) -> Launch:
        def launch(p: LaunchParams, chunk: list[_GroupKey]) -> None:
            shared = len(chunk) * _BINS * 4
            run.launch("poly_keys_hist", p, _segment_grid(run, p, segment, "poly_keys_hist", shared), shared)
        return launch

    return [(members, launcher_of(segment)) for segment, members in _by_segment(groups).items()]


def _collect_pass(run: DeviceRun, groups: dict[_GroupKey, list[_Target]], key_bits: int) -> None:
    """The last radix passes' work in one read: the keys of ``groups`` (few by now) are copied to
    the host, where each target's key is picked by its rank among its group's keys."""
    key_dtype = np.uint32 if key_bits == 32 else np.uint64
    launched = []
    for segment, members in _by_segment(groups).items():
        keys = list(members)
        for i in range(0, len(keys), MAX_GROUPS):
            chunk = keys[i:i + MAX_GROUPS]
            capacity = sum(members[g][0].count for g in chunk)  # each group's exact count (or a bound)
            p = run.params()
            _set_groups(p, chunk, [0] * len(chunk))
            p.seg[1], p.seg_len[1] = run.alloc(max(capacity, 1) * (key_bits // 8)), capacity
            p.hist = run.alloc(8, zero=True)  # the keys' counter
            run.launch("poly_keys_collect", p, _segment_grid(run, p, segment, "poly_keys_collect", 0))
            launched.append((members, chunk, p.seg[1], capacity, p.hist))
    copies = [(ptr, np.empty(capacity, dtype=key_dtype)) for _, _, ptr, capacity, _ in launched]
    copies += [(counter, np.empty(1, dtype=np.uint64)) for *_, counter in launched]
    reads = run.read_all(copies)
    for (members, chunk, _, capacity, _), keys, written in zip(launched, reads[:len(launched)], reads[len(launched):],
                                                               strict=True):
        keys = keys[:min(int(written[0]), capacity)]
        for g in chunk:
            stream, prefix, bits = g
            mine = keys != 0
            if bits:
                mine &= (keys >> key_dtype(key_bits - bits)) == key_dtype(prefix)
            ordered = np.sort(keys[mine])
            for t in members[g]:
                if t.rank_in >= len(ordered):
                    t.rank_in = len(ordered) - 1  # (cannot happen: the counts are exact)
                t.prefix, t.bits, t.done = int(ordered[t.rank_in]), key_bits, True


def _narrow_on_segments(run: DeviceRun, targets: Sequence[_Target], key_bits: int) -> None:
    """Radix passes over the targets' gathered keys until every key is known; the last ones done
    on the host once the pending groups hold few keys."""
    while True:
        groups = _pending(targets)
        if not groups:
            break
        if sum(ts[0].count for ts in groups.values()) <= COLLECT_MAX_KEYS:
            _collect_pass(run, groups, key_bits)
        else:
            _keys_hist_pass(run, groups, key_bits)


_GATHER_SHARED = RING_BYTES + GATHER_STAGE_BYTES


def _reserve_slack(run: DeviceRun, key_size: int) -> int:
    """Slots of a stream's buffer the gather's warps may reserve and leave unused: a run each."""
    return run.grid("poly_radix_gather", _GATHER_SHARED) * (THREADS // 32) * (GATHER_RESERVE_BYTES // key_size)


def _gather(run: DeviceRun, groups: dict[_GroupKey, list[_Target]], key_size: int) -> None:
    """Gathers the keys of the groups into one segment per stream (one pass over the input per
    MAX_GROUPS groups); the targets then narrow on those segments, each radix pass counting only
    its group's keys. (A segment per group cost the gather a warp step per group a warp's keys
    fell in: three times the statistics pass.) A segment holds its keys and the unused rest of
    the runs its warps reserved (key 0, counted by no pass): its length is its counter's value."""
    keys = list(groups)
    slack = _reserve_slack(run, key_size)
    for i in range(0, len(keys), MAX_GROUPS):
        chunk = keys[i:i + MAX_GROUPS]
        p = run.params()
        _set_groups(p, chunk, [0] * len(chunk))
        p.out = run.alloc(len(chunk) * 8, zero=True)  # a counter per stream, at its first group's index
        by_stream: dict[int, list[int]] = {}
        for j, g in enumerate(chunk):
            by_stream.setdefault(g[0], []).append(j)
        capacities = {s: sum(groups[chunk[j]][0].count for j in members) + slack for s, members in by_stream.items()}
        ptr = run.alloc(sum(capacities.values()) * key_size)
        for stream, members in by_stream.items():
            for j in members:
                p.seg[j], p.seg_len[j] = ptr, capacities[stream]
                for t in groups[chunk[j]]:
                    t.segment = (ptr, capacities[stream], p.out + 8 * members[0])
            ptr += capacities[stream] * key_size
        run.launch("poly_radix_gather", p, run.grid("poly_radix_gather", _GATHER_SHARED), _GATHER_SHARED)


def select_in_ranges(run: DeviceRun, plan: RangePlan) -> DeviceRangeSelect:
    """Queues the select of every rank of ``plan``'s streams on the keys the statistics pass gathered
    in the predicted ranges, right behind the pass and with no host round trip
    (kernels/range_select.cuh): each rank placed in its range by the pass's counts
    (``poly_range_seed``), then passes over the regions of both streams, the first counting
    RANGE_FIRST_BITS key bits of each range's keys, the next DIGIT_BITS each, as many as the widest
    range may need (``poly_range_pass``: a launch with nothing left to narrow returns at once)."""
    key_bits = _key_bits(run)
    wanted = tuple((stream, rank, ask) for stream, ranks in plan.ranks.items() for ask, rank in enumerate(ranks))
    p = run.params()
    plan.apply(p)
    p.sel, p.nregions = run.alloc(RANGE_SELECT_STATE.itemsize), plan.regions
    run.write(p.sel, _range_select_state(wanted))
    run.launch("poly_range_seed", p, 1)
    p.hist = run.alloc(2 * PLAN_RANKS * _BINS * 8, zero=True)  # a row a rank (the last block clears it)
    digits = [RANGE_FIRST_BITS] + [DIGIT_BITS] * -(-(key_bits - RANGE_FIRST_BITS) // DIGIT_BITS)
    for i, dbits in enumerate(digits):
        # the first pass's groups are the ranges (2 RANGES at most); later ones, ranks apart
        p.sel_dbits, p.sel_slots = dbits, 2 * RANGES if i == 0 else HIST_GROUPS
        shared = (p.sel_slots << dbits) * 4
        run.launch("poly_range_pass", p, run.grid("poly_range_pass", shared, n=2 * plan.regions * 32), shared)
    return DeviceRangeSelect(wanted=[(stream, rank) for stream, rank, _ in wanted], state=p.sel, key_bits=key_bits)


@functools.lru_cache(maxsize=64)
def _range_select_state(wanted: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    """The initial RangeSelState of the (stream, rank, index among the stream's asked ranks) targets
    (read-only; kept for the next comparison of the same size and requests)."""
    state = np.zeros(1, dtype=RANGE_SELECT_STATE)
    state["ntargets"] = len(wanted)
    targets = state["t"][0]
    for i, (stream, rank, ask) in enumerate(wanted):
        targets[i]["stream"], targets[i]["rank"], targets[i]["ask"] = stream, rank, ask
    state.setflags(write=False)
    return state


@dataclass
class _QueuedSelect:
    """A select queued on the device: its (stream, rank) targets in the order of their state record
    (``RECORD``, the kernels' layout) at device address ``state``, and the bits of their keys."""

    RECORD: ClassVar[np.dtype]
    wanted: Sequence[tuple[int, int]]
    state: int
    key_bits: int

    def copy(self) -> tuple[int, np.ndarray]:
        """The copy that reads the targets back once the passes are done."""
        return self.state, np.empty(1, dtype=self.RECORD)


# One RangeTarget of a RangeSelState read back: prefix, rank, lo, hi, stream, bits, ask, missed.
_RANGE_TARGET = record_struct(RANGE_TARGET)


class DeviceRangeSelect(_QueuedSelect):
    """The select of ranks in the predicted ranges queued behind the statistics pass
    (``select_in_ranges``; a ``RangeSelState``)."""

    RECORD = RANGE_SELECT_STATE

    def keys(self, state: np.ndarray) -> dict[tuple[int, int], int]:
        """The key of each target its range gave (its offset from the range's low end, all bits
        known), from the ``RangeSelState`` read back; the others (a stream left unpredicted, its
        regions overflowed, the rank outside its range) are for the ordinary select."""
        keys = {}
        for i, target in enumerate(self.wanted):  # (a struct a target, as DeviceSelect.keys)
            prefix, _, lo, _, _, bits, _, missed = _RANGE_TARGET.unpack_from(state, i * _RANGE_TARGET.size)
            if missed == 0 and bits == self.key_bits:
                keys[target] = lo + prefix
        return keys


def _select_keys(run: DeviceRun, wanted: Sequence[tuple[int, int]], first: dict[int, np.ndarray] | None,
                 plan: RangePlan | None = None) -> list[int]:
    """The keys of the (stream, rank) targets, by radix select over the device data: over the keys
    the statistics pass gathered in its predicted ranges (``plan``) where those hold the rank, and
    otherwise starting from its first-digit histograms ``first`` for the streams it has."""
    ranged = plan.selected if plan is not None else {}
    keys: list[int | None] = [ranged.get(w) for w in wanted]
    rest = [i for i, k in enumerate(keys) if k is None]
    for i, key in zip(rest, _select_keys_of_input(run, [wanted[i] for i in rest], first), strict=True):
        keys[i] = key
    return keys


def _select_keys_of_input(run: DeviceRun, wanted: Sequence[tuple[int, int]], first: dict[int, np.ndarray] | None
                          ) -> list[int]:
    """``_select_keys`` for ranks looked for over the whole input: a gather pass (histogram passes
    over the input first where its bins are too full) then radix passes over the gathered keys."""
    if not wanted:
        return []
    n = run.n
    key_bits = _key_bits(run)
    targets = [_Target(stream=s, rank=r, key_bits=key_bits, rank_in=r, count=n) for s, r in wanted]
    if first:
        _descend([([t for t in targets if t.stream == stream], hist, FIRST_BITS) for stream, hist in first.items()])
    # The bins holding the ranks are gathered once they fit the budget; histogram passes over
    # the input narrow them first where they do not (ties, or a device short of memory).
    budget = max(GATHER_MIN_KEYS, n // GATHER_FRACTION)
    while True:
        groups = _pending(targets)
        if not groups:
            break
        wanted = sum(ts[0].count for ts in groups.values())
        # within a quarter of the free memory (asked only for a large gather: the query costs
        # as much as a small comparison's kernels), the reserved runs' slack included
        room = wanted + len({g[0] for g in groups}) * _reserve_slack(run, key_bits // 8)
        small = room * (key_bits // 8) <= GATHER_UNCHECKED_BYTES
        if wanted <= budget and (small or room <= run.free_memory() // (4 * (key_bits // 8))):
            _gather(run, groups, key_bits // 8)
            break
        _input_hist_pass(run, groups, key_bits)
    _narrow_on_segments(run, targets, key_bits)
    return [t.prefix for t in targets]


# One SelTarget of a SelState read back (its targets come first): prefix, rank, stream, bits.
_TARGET = record_struct(SELECT_TARGET)


class DeviceSelect(_QueuedSelect):
    """A select of ranks queued on the device behind the statistics pass (``select_behind_stats``;
    a ``SelState``)."""

    RECORD = SELECT_STATE

    def keys(self, state: np.ndarray) -> dict[tuple[int, int], int]:
        """Each target's key, from the ``SelState`` read back."""
        keys = {}
        for i, target in enumerate(self.wanted):  # (a struct a target: NumPy's field access costs more)
            prefix, _, _, bits = _TARGET.unpack_from(state, i * _TARGET.size)
            if bits != self.key_bits:
                raise GpuError(f"the device-side select left rank {target[1]} of stream {target[0]} with {bits} of "
                               f"{self.key_bits} key bits known")
            keys[target] = prefix
        return keys


def select_behind_stats(run: DeviceRun, requests: Sequence[tuple[int, float | None]], hist: int,
                        record: int) -> DeviceSelect | None:
    """Queues the select of every rank of absdiff's and reldiff's ``requests`` on the device, right
    behind the statistics pass whose first-digit histograms are at device address ``hist`` and
    merged record at ``record``: a first descend by them (``poly_select_first``; a stream of one
    value takes it from the record), then one pass over the input per SELECT_BITS key bits
    (``poly_select_input``; none reads the input once every key is known), with no host round
    trip. Ranks of a stream that turns out to hold NaN are selected all the same (their keys go
    unused). None (nothing queued) for an input too large for its passes (``SELECT_MAX_READS``), too many ranks,
    or ranks of other streams."""
    wanted = _selectable(_order_ranks(requests, run.n)[1], run.n)
    key_bits = _key_bits(run)
    digits = 2 if _fine_pass(run, len(wanted), key_bits) else 1  # digits a pass finds
    passes = -(-(key_bits - FIRST_BITS) // (digits * SELECT_BITS))
    if (not wanted or len(wanted) > SELECT_TARGETS or (passes > 1 and passes * run.n > SELECT_MAX_READS)
            or any(stream not in (2, 3) for stream, _ in wanted)):
        return None
    p = run.params()
    p.sel, p.hist, p.out = run.alloc(SELECT_STATE.itemsize), hist, record
    run.write(p.sel, _select_state(wanted))
    run.launch("poly_select_first", p, len(wanted))  # a block a target
    p.hist = run.alloc((len(wanted) << SELECT_BITS) * 8, zero=True)  # each pass's last block clears it again
    shared = RING_BYTES + (-(-len(wanted) // SELECT_PER_SLOT) << SELECT_BITS) * 4  # (the kernel's shared histograms)
    grid = run.grid("poly_select_input", shared)
    if digits == 2:  # (the second digit's counts, in global memory)
        p.sel_fine = run.alloc((len(wanted) << (2 * SELECT_BITS)) * 4, zero=True)
    bits = FIRST_BITS
    while bits < key_bits:
        p.sel_dbits = min(SELECT_BITS, key_bits - bits)
        run.launch("poly_select_input", p, grid, shared)
        bits += digits * p.sel_dbits
    return DeviceSelect(wanted=wanted, state=p.sel, key_bits=key_bits)


def _fine_pass(run: DeviceRun, targets: int, key_bits: int) -> bool:
    """Whether a select pass counts the last two digits of 32-bit keys at once, the second in
    global memory (``Params.sel_fine``: 4 MiB of counts a target, zeroed first): where those counts
    are at most half what the pass it saves reads of float32 pairs (2^20 pairs and more a target),
    and fewer than 2^32 elements (the counts are 32-bit)."""
    if key_bits - FIRST_BITS != 2 * SELECT_BITS or run.n >> 32:
        return False
    return 2 * (targets << (2 * SELECT_BITS)) * 4 <= run.n * 8


@functools.lru_cache(maxsize=64)
def _select_state(wanted: tuple[tuple[int, int], ...]) -> np.ndarray:
    """The initial SelState of the (stream, rank) targets (read-only; kept for the next comparison
    of the same size and requests, as a model's outputs come)."""
    state = np.zeros(1, dtype=SELECT_STATE)
    state["ntargets"] = len(wanted)
    targets = state["t"][0]
    targets["stream"][:len(wanted)], targets["rank"][:len(wanted)] = zip(*wanted, strict=True)
    state.setflags(write=False)
    return state


def _selectable(wanted: Sequence[tuple[int, int]], n: int) -> tuple[tuple[int, int], ...]:
    """The (stream, rank) targets of ``wanted`` a select has to find: all but the first and the
    last ranks, whose values are the statistics pass's minimum and maximum (``_known_values``)."""
    return tuple(w for w in wanted if 0 < w[1] < n - 1)


def _known_values(wanted: Sequence[tuple[int, int]], n: int, extremes: dict[int, tuple[float, float]]
                  ) -> dict[tuple[int, int], float]:
    """The values of the (stream, rank) targets the statistics pass gives: a stream's first rank
    is its minimum and its last its maximum (``extremes``, of the streams without NaN), every rank
    is the value of a stream whose minimum is its maximum (the sign of a zero included)."""
    known = {}
    for stream, rank in wanted:
        if stream not in extremes:
            continue
        lo, hi = extremes[stream]
        if lo == hi and math.copysign(1.0, lo) == math.copysign(1.0, hi):
            known[(stream, rank)] = lo
        elif rank == 0 or rank == n - 1:
            known[(stream, rank)] = lo if rank == 0 else hi
    return known


def _key_values(keys: Sequence[int], f32: bool) -> list[float]:
    """The values of order keys (the inverse of the kernels' ``order_key``), all at once (through
    ``struct``: a handful of keys, for which NumPy's array set-up costs more than the work)."""
    as_bits, as_values = _key_structs(len(keys), f32)
    if f32:
        bits = [k & 0x7FFFFFFF if k & 0x80000000 else ~k & 0xFFFFFFFF for k in keys]
    else:
        top, mask = 1 << 63, (1 << 64) - 1
        bits = [k & ~top & mask if k & top else ~k & mask for k in keys]
    return list(as_values.unpack(as_bits.pack(*bits)))


@functools.lru_cache(maxsize=64)
def _key_structs(count: int, f32: bool) -> tuple[struct.Struct, struct.Struct]:
    """The packing of ``count`` keys' bits and its reading as values (kept: a comparison asks for
    the same few counts, and building the formats costs more than packing a handful of keys)."""
    return (struct.Struct(f"<{count}I"), struct.Struct(f"<{count}f")) if f32 else \
        (struct.Struct(f"<{count}Q"), struct.Struct(f"<{count}d"))


def _ranks_for(q: float | None, n: int) -> tuple[int, int, float]:
    """numpy.median (q None) / numpy.quantile(method="linear") neighbours and weight."""
    if q is None:
        return (n - 1) // 2, n // 2, 0.5
    vi = float(n - 1) * q
    if vi >= float(n - 1):
        return n - 1, n - 1, vi + 1.0  # NumPy points both neighbours at the last element
    prev = 0.0 if vi < 0 else math.floor(vi)
    lo = int(prev)
    return lo, lo + 1, 0.0 if vi < 0 else vi - prev


def _lerp(lo: float, hi: float, gamma: float) -> float:
    """NumPy's interpolation between neighbours (Python floats are IEEE doubles: the same
    roundings, and inf or NaN where NumPy's gives them, with no warning)."""
    diff = hi - lo
    return hi - diff * (1.0 - gamma) if gamma >= 0.5 else lo + diff * gamma


def _order_ranks(requests: Sequence[tuple[int, float | None]], n: int, nan_counts: Sequence[int] | None = None
                 ) -> tuple[tuple, tuple[tuple[int, int], ...]]:
    """Per request, None (no value: a stream with NaN, or no elements) or (index of its lower rank,
    of its upper rank, weight, median?) into the tuple of distinct (stream, rank) targets. (Kept
    for the next comparison of the same size and requests.)"""
    nan = None if nan_counts is None else tuple(int(c) > 0 for c in nan_counts)
    return _order_ranks_of(tuple(requests), n, nan)


@functools.lru_cache(maxsize=256)
def _order_ranks_of(requests: tuple[tuple[int, float | None], ...], n: int, nan: tuple[bool, ...] | None
                    ) -> tuple[tuple, tuple[tuple[int, int], ...]]:
    plan, wanted, index = [], [], {}
    for stream, q in requests:
        if n == 0 or (nan is not None and nan[stream]):
            plan.append(None)
            continue
        lo, hi, gamma = _ranks_for(q, n)
        ids = []
        for rank in (lo, hi):
            if (stream, rank) not in index:
                index[(stream, rank)] = len(wanted)
                wanted.append((stream, rank))
            ids.append(index[(stream, rank)])
        plan.append((ids[0], ids[1], gamma, q is None))
    return tuple(plan), tuple(wanted)


def plan_ranges(run: DeviceRun, requests: Sequence[tuple[int, float | None]]) -> RangePlan | None:
    """Predicted ranges for the ranks of absdiff's and reldiff's ``requests`` (see predicted_ranges):
    a sample of the input, the plan made from it on the device (read by the statistics pass from
    constant memory), and the statistics pass's buffers for their keys, all queued without a wait;
    None for an input too small to gain from them, or no stream worth predicting."""
    n = run.n
    if n < MIN_ELEMENTS:
        return None
    # (the first and last ranks too, though the statistics pass gives them: planned without them,
    # the tied int32 differences of the GPU tests fell back to a gather pass)
    wanted = _order_ranks(requests, n)[1]
    size = min(SAMPLE_SIZE, max(SAMPLE_MIN, n >> SAMPLE_SHARE), n)
    ranks: dict[int, list[int]] = {}
    for stream, rank in sorted(set(wanted)):
        if stream in (2, 3):
            ranks.setdefault(stream, []).append(rank)
    budget = {stream: region_budget(n, rs, size) for stream, rs in ranks.items()}
    budget = {stream: b for stream, b in budget.items() if b is not None}  # (the others' first digit is counted)
    ranks = {stream: rs for stream, rs in ranks.items() if stream in budget}
    if not ranks:
        return None
    key_size = _key_bits(run) // 8
    blocks = run.grid("poly_stats_ranges", STATS_HIST_BYTES)  # (it counts unpredicted streams' first digit)
    regions = blocks * THREADS
    if n // regions + 8 > MAX_KEYS_PER_THREAD:  # (a thread's counts below the ranges would overflow)
        return None
    capacity = region_capacity(max(budget.values()), regions)
    if len(ranks) * capacity * regions * key_size > run.free_memory() // 4:  # as a gather's budget
        return None
    buffers = {stream: run.alloc(capacity * regions * key_size) for stream in ranks}
    p = run.params()
    p.seg_len[0] = size
    p.seg[0] = p.out = run.alloc(2 * size * key_size)
    run.launch("poly_sample", p, run.grid("poly_sample", n=size))
    ask = plan_ask(n, ranks, size, budget)
    p.seg[1] = run.alloc(2 * PLAN_ASK.itemsize)
    run.write(p.seg[1], ask)
    p.out = run.alloc(RANGE_TABLE.itemsize)
    p.hist = run.alloc(2 * PLAN_STATE.itemsize, zero=True)
    for phase in range(_key_bits(run) // 8 + 1):  # a select of the ends' keys 8 bits a phase, then the plan
        p.plan_phase = phase
        run.launch("poly_plan_ranges", p, 2 * PLAN_BLOCKS)
    run.set_range_table(p.out, RANGE_TABLE.itemsize)
    return RangePlan(ranks=ranks, n=n, blocks=blocks, regions=regions, capacity=capacity, buffers=buffers,
                     fills=run.alloc(2 * regions * 4), rout=run.alloc(RangePlan.rout_words * 8, zero=True),
                     table=p.out, hist=run.alloc(2 * (1 << FIRST_BITS) * 8, zero=True), sample=p.seg[0], sample_size=size, ask=ask)


def order_values(run: DeviceRun, requests: Sequence[tuple[int, float | None]], nan_counts: Sequence[int],
                 first: dict[int, np.ndarray] | None = None, ranges: RangePlan | None = None,
                 selected: dict[tuple[int, int], int] | None = None,
                 extremes: dict[int, tuple[float, float]] | None = None) -> list[float]:
    """Values of (stream, quantile or None for the median) requests: NaN for a stream holding
    NaN or an empty input, as NumPy gives. ``first``: the statistics pass's first-digit
    histograms, by stream (absdiff and reldiff), when it counted them; ``ranges``: its predicted
    ranges' plan, when it gathered their keys; ``selected``: the keys of every rank but the first
    and the last, by (stream, rank), when a select behind the pass found them
    (``DeviceSelect.keys``); ``extremes``: the minimum and maximum of each stream without NaN
    (the statistics pass's), which are its first and last ranks' values, and every rank's where
    they are one value (two equal outputs give it): those take no pass over the device data."""
    plan, wanted = _order_ranks(requests, run.n, nan_counts)
    known = _known_values(wanted, run.n, extremes or {})
    rest = tuple(w for w in wanted if w not in known)
    if selected is not None:
        keys = [selected[w] for w in rest]
    else:
        keys = _select_keys(run, rest, first, ranges) if rest else []
    found = dict(zip(rest, _key_values(keys, run.setup.f32), strict=True))
    values = [known[w] if w in known else found[w] for w in wanted]
    out = []
    for item in plan:
        if item is None:
            out.append(math.nan)
            continue
        i_lo, i_hi, gamma, median = item
        lo, hi = values[i_lo], values[i_hi]
        if median:
            out.append(lo if i_lo == i_hi else (lo + hi) / 2.0)
        else:
            out.append(_lerp(lo, hi, gamma))
    return out
