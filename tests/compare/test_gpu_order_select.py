"""
The host side of the on-device order statistics (``order_select.order_values``): which passes it
asks for, how it narrows each wanted rank digit by digit, when it gathers, and how it turns
keys back into values. The kernels are replaced by NumPy versions of what they count and
gather (``NumpyKernels``), so this runs without a GPU; the kernels themselves are tested
against the CPU engine on a GPU in test_compare_gpu_stats.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from poly.compare.stats.gpu import device_run, order_select, predicted_ranges, statistics_pass
from poly.compare.stats.gpu.cuda_api import GpuError
from poly.compare.stats.gpu.kernel_source import (
    DIGIT_BITS,
    FIRST_BITS,
    RANGES,
    SELECT_BITS,
    SELECT_TARGETS,
    THREADS,
)

EPS = 2.220446049250313e-16


class _Setup:
    def __init__(self, f32: bool):
        self.f32 = f32


class NumpyKernels:
    """Stands in for ``device_run.DeviceRun``: memory is NumPy byte arrays at made-up addresses,
    and each launch computes with NumPy what the kernel of that name computes."""

    WARPS, RUN = 3, 16  # the gather's writers, and the slots each reserves at a time
    STATS_BLOCKS = 3  # the statistics pass's blocks (each with its region of the predicted ranges' keys)

    def __init__(self, streams: dict[int, np.ndarray], f32: bool):
        self.streams = streams
        self.n = len(streams[0])
        self.setup = _Setup(f32)
        self.key_bits = 32 if f32 else 64
        self.memory: dict[int, np.ndarray] = {}
        self.next_address = 1 << 20
        self.launches: list[str] = []
        self.range_table = np.zeros(1, dtype=predicted_ranges.RANGE_TABLE)  # the kernels' constant poly_plan

    def keys(self, stream: int) -> np.ndarray:
        values = self.streams[stream]
        if self.setup.f32:
            u = values.astype(np.float32).view(np.uint32).astype(np.uint64)
            return np.where(u & 0x80000000, ~u & 0xFFFFFFFF, u | 0x80000000)
        u = values.astype(np.float64).view(np.uint64)
        top = np.uint64(0x8000000000000000)
        return np.where(u & top, ~u, u | top)

    def first_histogram(self, stream: int) -> np.ndarray:
        top = (self.keys(stream) >> np.uint64(self.key_bits - FIRST_BITS)).astype(np.int64)
        return np.bincount(top, minlength=1 << FIRST_BITS).astype(np.uint64)

    # -- DeviceRun's interface ------------------------------------------------------------------
    def graph_key(self, *what):  # (runs are not made into graphs here)
        return None

    def free_memory(self) -> int:
        return 1 << 34

    def params(self):
        return device_run.LaunchParams()

    def alloc(self, nbytes: int, zero: bool = False) -> int:
        address = self.next_address
        self.next_address += int(nbytes) + 4096
        self.memory[address] = np.zeros(int(nbytes) + 16, dtype=np.uint8)
        return address

    def view(self, address: int, dtype) -> np.ndarray:
        base = max(b for b in self.memory if b <= address)
        buffer = self.memory[base][address - base:]
        return buffer[:len(buffer) // np.dtype(dtype).itemsize * np.dtype(dtype).itemsize].view(dtype)

    def grid(self, name: str, shared: int = 0, n: int | None = None) -> int:
        return self.STATS_BLOCKS if name == "poly_stats_ranges" else 1

    def write(self, address: int, data: np.ndarray) -> None:
        self.view(address, np.uint8)[:data.nbytes] = np.ascontiguousarray(data).view(np.uint8).ravel()

    def read(self, address: int, out: np.ndarray) -> np.ndarray:
        return self.read_all([(address, out)])[0]

    def set_range_table(self, address: int, nbytes: int) -> None:
        assert nbytes == predicted_ranges.RANGE_TABLE.itemsize
        self.range_table = self.view(address, predicted_ranges.RANGE_TABLE)[:1].copy()

    def read_all(self, copies):
        for address, out in copies:
            out[...] = self.view(address, out.dtype)[:out.size]
        return [out for _, out in copies]

    def in_group(self, g, key: int) -> bool:
        return g.bits == 0 or (key >> (self.key_bits - g.bits)) == g.prefix

    def segment_keys(self, p, key_dtype) -> np.ndarray:
        """The keys a pass over a gather's buffer reads: up to its counter at p.out."""
        return self.view(p.seg[0], key_dtype)[:min(int(self.view(p.out, np.uint64)[0]), p.seg_len[0])]

    def sample_positions(self, size: int) -> list[int]:
        """The kernel's sample: one place drawn in each of ``size`` equal strata (splitmix64's mix)."""
        mask, out = (1 << 64) - 1, []
        for k in range(size):
            lo, span = k * self.n // size, (k + 1) * self.n // size - k * self.n // size
            h = ((k + 1) * 0x9E3779B97F4A7C15) & mask
            h = ((h ^ (h >> 30)) * 0xBF58476D1CE4E5B9) & mask
            h = ((h ^ (h >> 27)) * 0x94D049BB133111EB) & mask
            h ^= h >> 31
            out.append(lo + (h % span if span > 1 else 0))
        return out

    def plan_ranges(self, p) -> None:
        """The device's plan of each stream's ranges from its sample (at p.seg[0]) and its PlanAsk
        (at p.seg[1]), written as a RangeTable at p.out."""
        kb, size = self.key_bits, int(p.seg_len[0])
        sample = self.view(p.seg[0], np.uint32 if kb == 32 else np.uint64)[:2 * size].astype(np.uint64)
        asks = self.view(p.seg[1], predicted_ranges.PLAN_ASK)[:2]
        table = self.view(p.out, predicted_ranges.RANGE_TABLE)[:1]
        table[...] = 0
        t = table[0]
        for s in range(2):
            ask = asks[s]
            nr = int(ask["nranks"])
            ends = [(i, int(ask["at_lo"][i]), int(ask["at_hi"][i])) for i in range(nr)]
            sr = predicted_ranges.ranges_from_ends(np.sort(sample[s * size:(s + 1) * size]), self.n, ends, kb)
            predicted = nr > 0 and sr.expected <= int(ask["max_expected"])
            t["expected"][s] = sr.expected
            t["nranges"][s] = len(sr.bounds) if predicted else 0
            t["range_of"][s * predicted_ranges.PLAN_RANKS:(s + 1) * predicted_ranges.PLAN_RANKS] = -1
            for i in range(nr):
                t["range_of"][s * predicted_ranges.PLAN_RANKS + i] = sr.range_of[i]
            for j, (lo, hi) in enumerate(sr.bounds if predicted else []):
                t["lo"][s * RANGES + j], t["hi"][s * RANGES + j] = lo, hi

    def stats_ranges(self, p, blocks: int) -> None:
        """The statistics pass's predicted ranges (from the constant range table): keys below each
        range counted, those within one written to the region of the thread that reads them
        (threads take 4 elements in turn); a stream without ranges has its first digit counted."""
        key_dtype = np.uint32 if self.key_bits == 32 else np.uint64
        rout = self.view(p.rout, np.uint64)
        threads = blocks * THREADS
        fills = self.view(p.rfills, np.uint32)
        thread_of = (np.arange(self.n) // 4) % threads
        table = self.range_table[0]
        for s in range(2):
            if table["nranges"][s] == 0:
                if p.hist:
                    first = self.view(p.hist, np.uint64)
                    first[s << FIRST_BITS:(s + 1) << FIRST_BITS] += self.first_histogram(2 + s)
                continue
            keys = self.keys(2 + s)
            inside = np.zeros(self.n, dtype=bool)
            for j in range(RANGES):
                lo, hi = int(table["lo"][s * RANGES + j]), int(table["hi"][s * RANGES + j])
                rout[s * RANGES + j] = int((keys < np.uint64(lo)).sum())
                inside |= (keys >= np.uint64(lo)) & (keys <= np.uint64(hi)) & (keys != 0)
            buffer = self.view(p.rbuf[s], key_dtype)
            for t in np.unique(thread_of[inside]):
                mine = keys[inside & (thread_of == t)].astype(key_dtype)
                kept = mine[:p.rcap]
                buffer[t * p.rcap:t * p.rcap + len(kept)] = kept
                fills[s * threads + t] = len(mine)
                rout[2 * RANGES + s] = max(int(rout[2 * RANGES + s]), len(mine))

    def select_pass(self, p) -> None:
        """One pass of the device-side select: each group's histogram of the next ``sel_dbits``
        key bits (targets of one group count once, in the first one's), then the last block's
        descend of every target by its group's histogram, and the histograms cleared."""
        kb, dbits = self.key_bits, p.sel_dbits
        bins = 1 << dbits
        targets = self.view(p.sel, device_run.SELECT_STATE)["t"][0]
        count = int(self.view(p.sel, device_run.SELECT_STATE)["ntargets"][0])
        hist = self.view(p.hist, np.uint64)
        group = [(int(t["stream"]), int(t["bits"]), int(t["prefix"])) for t in targets[:count]]
        owner = [group.index(g) for g in group]
        for i, (stream, bits, prefix) in enumerate(group):
            if owner[i] == i:
                keys = self.keys(stream)
                digits = (keys[(keys >> np.uint64(kb - bits)) == prefix] >> np.uint64(kb - bits - dbits)) & np.uint64(bins - 1)
                hist[i * bins:(i + 1) * bins] += np.bincount(digits.astype(np.int64), minlength=bins).astype(np.uint64)
        self.descend(targets[:count], [hist[owner[i] * bins:(owner[i] + 1) * bins] for i in range(count)], dbits)
        hist[:count * bins] = 0
        if p.sel_fine:  # the next digit too, from each group's counts of both digits (2^(2 dbits) a target)
            fine = self.view(p.sel_fine, np.uint32)
            span = 1 << (2 * dbits)
            for i, (stream, bits, prefix) in enumerate(group):
                if owner[i] == i:
                    keys = self.keys(stream)
                    digits = (keys[(keys >> np.uint64(kb - bits)) == prefix] >> np.uint64(kb - bits - 2 * dbits)) & np.uint64(span - 1)
                    fine[i * span:(i + 1) * span] += np.bincount(digits.astype(np.int64), minlength=span).astype(np.uint32)
            firsts = [int(t["prefix"]) & (bins - 1) for t in targets[:count]]
            self.descend(targets[:count], [fine[owner[i] * span + (firsts[i] << dbits):][:bins] for i in range(count)],
                         dbits)

    def region_keys(self, p, stream: int, key_dtype) -> np.ndarray:
        """Stream ``stream``'s keys in the statistics pass's regions (each up to its fill)."""
        buffer = self.view(p.rbuf[stream - 2], key_dtype)
        fills = self.view(p.rfills + 4 * (stream - 2) * p.nregions, np.uint32)[:p.nregions]
        return np.concatenate([buffer[r * p.rcap:r * p.rcap + min(int(f), p.rcap)] for r, f in enumerate(fills)])

    def range_seed(self, p) -> None:
        """Each rank of the RangeSelState placed in its range by the statistics pass's counts below
        the ranges; marked missed where its stream has no ranges, a region overflowed or the rank
        lies below its range."""
        state = self.view(p.sel, predicted_ranges.RANGE_SELECT_STATE)
        targets = state["t"][0][:int(state["ntargets"][0])]
        rout, table = self.view(p.rout, np.uint64), self.range_table[0]
        for t in targets:
            s = int(t["stream"]) - 2
            j = int(table["range_of"][s * predicted_ranges.PLAN_RANKS + int(t["ask"])]) if table["nranges"][s] else -1
            below = int(rout[s * RANGES + j]) if j >= 0 else 0
            if j < 0 or int(rout[2 * RANGES + s]) > p.rcap or int(t["rank"]) < below:
                t["missed"] = 1
                continue
            lo, hi = int(table["lo"][s * RANGES + j]), int(table["hi"][s * RANGES + j])
            t["rank"] -= below
            t["lo"], t["hi"], t["prefix"] = lo, hi, 0
            t["bits"] = min(self.key_bits - (hi - lo).bit_length(), self.key_bits - 1)

    def range_pass(self, p) -> None:
        """A pass over the regions: each narrowing rank's group (its range and known bits) counts
        the next digit (up to p.sel_dbits bits) of its keys' offsets from the range's low end; the
        rank descends, or is marked missed where its group holds fewer keys (above its range)."""
        kb = self.key_bits
        state = self.view(p.sel, predicted_ranges.RANGE_SELECT_STATE)
        targets = state["t"][0][:int(state["ntargets"][0])]
        for i in range(len(targets)):
            t = targets[i:i + 1]
            bits = int(t["bits"][0])
            if t["missed"][0] or bits >= kb:
                continue
            keys = self.region_keys(p, int(t["stream"][0]), np.uint32 if kb == 32 else np.uint64).astype(np.uint64)
            lo, hi, dbits = int(t["lo"][0]), int(t["hi"][0]), min(p.sel_dbits, kb - bits)
            offsets = keys[(keys >= np.uint64(lo)) & (keys <= np.uint64(hi))] - np.uint64(lo)
            if bits:
                offsets = offsets[(offsets >> np.uint64(kb - bits)) == np.uint64(int(t["prefix"][0]))]
            if int(t["rank"][0]) >= len(offsets):
                t["missed"] = 1
                continue
            digits = (offsets >> np.uint64(kb - bits - dbits)) & np.uint64((1 << dbits) - 1)
            self.descend(t, [np.bincount(digits.astype(np.int64), minlength=1 << dbits)], dbits)

    @staticmethod
    def descend(targets, hists, dbits: int) -> None:
        """Each target's next digit: the bin of its histogram whose running count passes its rank."""
        for i, h in enumerate(hists):
            cum = np.cumsum(h)
            rank = min(int(targets["rank"][i]), int(cum[-1]) - 1)
            b = int(np.searchsorted(cum, rank, side="right"))
            targets["prefix"][i] = (int(targets["prefix"][i]) << dbits) | b
            targets["rank"][i] = rank - (int(cum[b - 1]) if b else 0)
            targets["bits"][i] += dbits

    def launch(self, name: str, p, grid: int, shared: int = 0) -> None:
        self.launches.append(name)
        kb = self.key_bits
        key_dtype = np.uint32 if kb == 32 else np.uint64
        groups = [p.groups[j] for j in range(p.ngroups)]
        if name == "poly_plan_ranges":  # (all at once in its last phase)
            if p.plan_phase == kb // 8:
                self.plan_ranges(p)
        elif name == "poly_sample":
            at = self.sample_positions(p.seg_len[0])
            out = self.view(p.out, key_dtype)
            out[:len(at)] = self.keys(2)[at].astype(key_dtype)
            out[len(at):2 * len(at)] = self.keys(3)[at].astype(key_dtype)
        elif name == "poly_stats_ranges":  # the per-block records, and the predicted ranges' counts and keys
            assert grid == self.STATS_BLOCKS
            parts = self.view(p.out, device_run.PART_RECORD)[:grid]
            for k in range(4):
                parts["s"][:, k] = _block_records(self.streams[k].astype(np.float64), grid)
            self.stats_ranges(p, grid)
        elif name == "poly_keys_hist":  # one buffer, its length at p.out (or its regions' fills there);
            hist = self.view(p.hist, np.uint64)  # each key counted in its group's histogram
            for k in (int(k) for k in self.segment_keys(p, key_dtype)):
                if k == 0:  # the unused rest of a reserved run
                    continue
                j = next((j for j, g in enumerate(groups) if self.in_group(g, k)), None)
                if j is not None:
                    g = groups[j]
                    hist[j * (1 << DIGIT_BITS) + ((k >> (kb - g.bits - g.dbits)) & ((1 << g.dbits) - 1))] += 1
        elif name == "poly_keys_collect":  # the same keys as poly_keys_hist reads, copied when in a group
            mine = [k for k in (int(k) for k in self.segment_keys(p, key_dtype))
                    if k != 0 and any(self.in_group(g, k) for g in groups)]
            assert len(mine) <= p.seg_len[1]
            self.view(p.seg[1], key_dtype)[:len(mine)] = np.array(mine, dtype=np.uint64).astype(key_dtype)
            self.view(p.hist, np.uint64)[0] = len(mine)
        elif name == "poly_stats":  # the per-block records, and the first digit's histograms when asked for
            parts = self.view(p.out, device_run.PART_RECORD)[:grid]
            for k in range(4):
                parts["s"][:, k] = _block_records(self.streams[k].astype(np.float64), grid)
            if p.hist:
                self.write(p.hist, np.concatenate([self.first_histogram(2), self.first_histogram(3)]))
        elif name == "poly_merge_parts":  # the records merged into one, as the kernel merges them
            parts = self.view(p.out, device_run.PART_RECORD)[:p.seg_len[0]]
            out = self.view(p.seg[0], device_run.PART_RECORD)[:1]
            out["s"][0] = _merged(parts["s"])
            out["dot"][0], out["fails"][0] = parts["dot"].sum(), parts["fails"].sum()
        elif name == "poly_select_first":  # block t descends target t, as the kernel does
            state = self.view(p.sel, device_run.SELECT_STATE)
            targets = state["t"][0][:min(grid, int(state["ntargets"][0]))]
            first = self.view(p.hist, np.uint64)
            self.descend(targets, [first[(int(t["stream"]) - 2) << FIRST_BITS:(int(t["stream"]) - 1) << FIRST_BITS]
                                   for t in targets], FIRST_BITS)
        elif name == "poly_select_input":
            self.select_pass(p)
        elif name == "poly_range_seed":
            self.range_seed(p)
        elif name == "poly_range_pass":
            self.range_pass(p)
        elif name == "poly_radix_hist":
            hist = self.view(p.hist, np.uint64)
            for j, g in enumerate(groups):
                for k in (int(k) for k in self.keys(g.stream)):
                    if self.in_group(g, k):
                        hist[j * (1 << DIGIT_BITS) + ((k >> (kb - g.bits - g.dbits)) & ((1 << g.dbits) - 1))] += 1
        else:  # the keys of a stream's groups go to the buffer (and counter) of its first group
            assert name == "poly_radix_gather"
            for stream in sorted({g.stream for g in groups}):
                first = next(j for j, g in enumerate(groups) if g.stream == stream)
                mine = [g for g in groups if g.stream == stream]
                members = [int(k) for k in self.keys(stream) if any(self.in_group(g, int(k)) for g in mine)]
                assert all(p.seg[j] == p.seg[first] for j, g in enumerate(groups) if g.stream == stream)
                # WARPS warps write their share into runs of RUN slots each reserves in turn, and
                # fill the rest of their last run with key 0 (fewer and shorter than the kernel's)
                buffer, counter = self.view(p.seg[first], key_dtype), 0
                for w in range(self.WARPS):
                    share = members[w::self.WARPS]
                    for start in range(0, len(share), self.RUN):
                        run = share[start:start + self.RUN]
                        buffer[counter:counter + self.RUN] = 0
                        buffer[counter:counter + len(run)] = np.array(run, dtype=np.uint64).astype(key_dtype)
                        counter += self.RUN
                assert counter <= p.seg_len[first]  # the capacity leaves room for every warp's unused run
                self.view(p.out + 8 * first, np.uint64)[0] = counter


REQUESTS = [(2, None), (3, None), (2, 0.9), (2, 0.95), (2, 0.99), (3, 0.9), (3, 0.99), (2, 0.0), (2, 1.0), (0, None),
            (1, 0.5)]


def _streams(kind: str, n: int, dtype, rng) -> dict[int, np.ndarray]:
    a = rng.standard_normal(n)
    b = a + 1e-3 * rng.standard_normal(n)
    if kind == "equal":
        b = a.copy()
    elif kind == "constant":
        a[:], b[:] = 1.5, 1.5
    elif kind == "zeros in b":
        b[::3] = 0
    a, b = a.astype(dtype), b.astype(dtype)
    d = np.abs(a - b).astype(dtype)
    r = (d / np.where(b == 0, dtype(EPS), np.abs(b))).astype(dtype)
    return {0: a, 1: b, 2: d, 3: r}


@pytest.mark.parametrize("f32", [True, False], ids=["float32 keys", "float64 keys"])
@pytest.mark.parametrize("kind", ["noise", "equal", "constant", "zeros in b"])
@pytest.mark.parametrize("budget", [1 << 22, 7], ids=["gather at once", "histogram passes first"])
@pytest.mark.parametrize("collect", [order_select.COLLECT_MAX_KEYS, 0], ids=["last digits on the host", "radix passes only"])
def test_order_values_match_numpy(f32, kind, budget, collect, monkeypatch):
    rng = np.random.default_rng(len(kind) + 2 * f32)
    dtype = np.float32 if f32 else np.float64
    run = NumpyKernels(_streams(kind, int(rng.integers(500, 2500)), dtype, rng), f32)
    monkeypatch.setattr(order_select, "GATHER_MIN_KEYS", budget)
    monkeypatch.setattr(order_select, "GATHER_FRACTION", 1 << 30)
    monkeypatch.setattr(order_select, "COLLECT_MAX_KEYS", collect)
    first = {2: run.first_histogram(2), 3: run.first_histogram(3)}
    got = order_select.order_values(run, REQUESTS, [0, 0, 0, 0], first)
    for (stream, q), value in zip(REQUESTS, got, strict=True):
        values = run.streams[stream].astype(np.float64)
        want = float(np.median(values)) if q is None else float(np.quantile(values, q))
        assert value == want, (stream, q, value, want)
    # the first digit comes from the statistics pass; one gather serves every rank of absdiff
    # and reldiff (up to 16 bins) unless the budget forces histogram passes over the input first
    if budget > run.n:
        assert run.launches.count("poly_radix_gather") == 1 and "poly_radix_hist" not in run.launches
    else:
        assert run.launches[0] == "poly_radix_hist"
    assert set(run.launches) <= {"poly_radix_hist", "poly_radix_gather", "poly_keys_hist", "poly_keys_collect"}
    # with few keys gathered, one copy to the host finishes every rank: no radix pass over them
    assert ("poly_keys_collect" in run.launches) == (bool(collect) and "poly_radix_gather" in run.launches)
    if collect:
        assert "poly_keys_hist" not in run.launches
        if budget > run.n:  # one pass: a launch per stream's gathered keys
            assert run.launches.count("poly_keys_collect") == len({s for s, _ in REQUESTS})


DEVICE_REQUESTS = [(2, None), (3, None), (2, 0.9), (2, 0.95), (2, 0.99), (3, 0.9), (3, 0.99), (3, 0.0), (2, 1.0)]


@pytest.mark.parametrize("f32", [True, False], ids=["float32 keys", "float64 keys"])
@pytest.mark.parametrize("kind", ["noise", "equal", "constant", "zeros in b", "nan in absdiff"])
def test_mid_size_ranks_are_selected_on_the_device_behind_the_statistics_pass(f32, kind):
    """A mid-size input's ranks of absdiff and reldiff are selected on the device, queued right
    behind the statistics pass and read back with its records (one wait): a first descend by its
    histograms, then one pass over the input per SELECT_BITS key bits; no gather, no radix pass
    over gathered keys, no host pick, no histogram copied back. A stream holding NaN gets NaN."""
    rng = np.random.default_rng(len(kind) + 5 * f32)
    dtype = np.float32 if f32 else np.float64
    streams = _streams("noise" if kind == "nan in absdiff" else kind, int(rng.integers(500, 2500)), dtype, rng)
    nans = [0, 0, 0, 0]
    if kind == "nan in absdiff":
        streams[2][[3, 400]] = np.nan
        nans[2] = 2
    run = NumpyKernels(streams, f32)
    raw, hists, selected = statistics_pass.run_error_stats(run, True, None, DEVICE_REQUESTS)
    assert raw["size"] == run.n and hists is None
    got = order_select.order_values(run, DEVICE_REQUESTS, nans, hists, None, selected,
                                     statistics_pass.extreme_values(raw))
    for (stream, q), value in zip(DEVICE_REQUESTS, got, strict=True):
        values = run.streams[stream].astype(np.float64)
        want = float(np.median(values)) if q is None else float(np.quantile(values, q))
        assert value == want or (np.isnan(value) and nans[stream]), (stream, q, value, want)
    passes = -(-(run.key_bits - FIRST_BITS) // SELECT_BITS)
    assert run.launches == ["poly_stats", "poly_merge_parts", "poly_select_first"] + ["poly_select_input"] * passes


@pytest.mark.parametrize("kind", ["noise", "zeros in b", "nan in absdiff"])
def test_float32_keys_take_one_pass_that_counts_both_digits_left(kind, monkeypatch):
    """Where its counts cost less than the pass they save, one select pass counts the last two
    digits of float32 keys (the second in global memory, Params.sel_fine) and descends both: the
    same ranks as two passes."""
    counted = []
    fine_pass = order_select._fine_pass
    monkeypatch.setattr(order_select, "_fine_pass", lambda run, targets, key_bits: counted.append(
        fine_pass(run, targets, key_bits)) or key_bits == 32)
    rng = np.random.default_rng(len(kind))
    streams = _streams("noise" if kind == "nan in absdiff" else kind, 1501, np.float32, rng)
    nans = [0, 0, 0, 0]
    if kind == "nan in absdiff":
        streams[2][[3, 400]] = np.nan
        nans[2] = 2
    run = NumpyKernels(streams, True)
    requests = [(2, None), (3, None), (3, 0.9)]
    raw, hists, selected = statistics_pass.run_error_stats(run, True, None, requests)
    got = order_select.order_values(run, requests, nans, hists, None, selected, statistics_pass.extreme_values(raw))
    for (stream, q), value in zip(requests, got, strict=True):
        values = run.streams[stream].astype(np.float64)
        want = float(np.median(values)) if q is None else float(np.quantile(values, q))
        assert value == want or (np.isnan(value) and nans[stream]), (stream, q, value, want)
    assert run.launches == ["poly_stats", "poly_merge_parts", "poly_select_first", "poly_select_input"]
    assert counted == [False]  # (1,501 pairs: too few for the counts on their own)


@pytest.mark.parametrize("case", ["input too large", "too many ranks", "a and b ranks"])
def test_what_the_device_select_cannot_serve_takes_the_host_driven_passes(case, monkeypatch):
    rng = np.random.default_rng(11)
    run = NumpyKernels(_streams("noise", 1500, np.float32, rng), True)
    requests = [(2, None), (3, 0.5)]
    if case == "input too large":
        monkeypatch.setattr(order_select, "SELECT_MAX_READS", 2 * run.n - 1)  # float32 keys take 2 passes
    elif case == "too many ranks":
        requests = [(s, q) for s in (2, 3) for q in np.linspace(0.05, 0.95, SELECT_TARGETS // 4 + 1)]
    else:
        requests.append((0, None))  # a's median has no first digit from the statistics pass
    raw, hists, selected = statistics_pass.run_error_stats(run, True, None, requests)
    assert selected is None and sorted(hists) == [2, 3]
    got = order_select.order_values(run, requests, [0, 0, 0, 0], hists, None, selected)
    for (stream, q), value in zip(requests, got, strict=True):
        values = run.streams[stream].astype(np.float64)
        assert value == (float(np.median(values)) if q is None else float(np.quantile(values, q)))
    assert "poly_select_input" not in run.launches and "poly_radix_gather" in run.launches


def test_the_first_and_last_ranks_are_the_statistics_minimum_and_maximum():
    """Quantiles 0 and 1 take the first and last ranks, which are the statistics pass's minimum
    and maximum: no select looks for them (quantile 0's upper neighbour, rank 1, is still
    selected), and requests of nothing else queue no select at all."""
    rng = np.random.default_rng(21)
    streams = _streams("noise", 1500, np.float32, rng)
    for requests, targets in (([(2, 0.0), (2, 1.0), (3, 1.0)], {(2, 1)}), ([(2, 1.0), (3, 1.0)], None)):
        run = NumpyKernels(streams, True)
        raw, hists, selected = statistics_pass.run_error_stats(run, True, None, requests)
        assert (set(selected) if selected is not None else None) == targets
        got = order_select.order_values(run, requests, [0, 0, 0, 0], hists, None, selected,
                                        statistics_pass.extreme_values(raw))
        assert got == _numpy_values(run, requests)
        if targets is None:
            assert run.launches == ["poly_stats", "poly_merge_parts"]


def test_streams_with_nan_or_no_elements_give_nan():
    rng = np.random.default_rng(0)
    run = NumpyKernels(_streams("noise", 100, np.float32, rng), True)
    got = order_select.order_values(run, [(2, None), (3, 0.5)], [0, 0, 1, 0], {2: run.first_histogram(2),
                                                                              3: run.first_histogram(3)})
    assert np.isnan(got[0]) and not np.isnan(got[1])


def test_descend_places_every_rank_of_every_histogram_at_once():
    """One call narrows the ranks of several groups' histograms (of different widths, with empty
    bins and ranks on bin edges) as a search of each histogram on its own would."""
    rng = np.random.default_rng(7)
    items, want = [], []
    for width, dbits in ((1 << FIRST_BITS, FIRST_BITS), (1 << DIGIT_BITS, DIGIT_BITS), (512, 9), (8, 3)):
        hist = rng.integers(0, 4, width).astype(np.uint64)
        hist[: width // 3] = 0  # a run of empty bins
        cum = np.cumsum(hist)
        ranks = [0, int(cum[-1]) - 1, int(cum[width // 2]), int(cum[width // 2]) - 1, int(rng.integers(0, cum[-1]))]
        targets = [order_select._Target(stream=2, rank=r, key_bits=32, rank_in=r, count=int(cum[-1]), prefix=5, bits=4)
                   for r in ranks]
        items.append((targets, hist, dbits))
        for r in ranks:
            b = int(np.searchsorted(cum, r, side="right"))
            want.append(((5 << dbits) | b, 4 + dbits, r - (int(cum[b - 1]) if b else 0), int(hist[b])))
    order_select._descend(items)
    got = [(t.prefix, t.bits, t.rank_in, t.count) for ts, _, _ in items for t in ts]
    assert got == want


def _block_records(values: np.ndarray, blocks: int) -> np.ndarray:
    """Per-block statistics records of one stream, as the statistics kernel writes them."""
    rec = np.zeros(blocks, dtype=np.dtype(device_run.ACC_FIELDS))
    for k, (idx, part) in enumerate(zip(np.array_split(np.arange(len(values)), blocks),
                                        np.array_split(values, blocks), strict=True)):
        finite = part[np.isfinite(part)]
        rec[k]["n"], rec[k]["sum"], rec[k]["sq"], rec[k]["ab"] = len(part), part.sum(), (part ** 2).sum(), np.abs(part).sum()
        rec[k]["mean"] = part.mean() if len(part) else 0.0
        rec[k]["m2"] = ((part - part.mean()) ** 2).sum() if len(part) else 0.0
        nan = np.isnan(part)
        rec[k]["nnan"], rec[k]["ninf"] = nan.sum(), np.isinf(part).sum()
        rec[k]["inan"] = idx[nan][0] if nan.any() else -1
        rec[k]["imn"] = rec[k]["imx"] = -1
        if len(finite) or (~nan).any():
            ok = ~nan
            rec[k]["mn"], rec[k]["mx"] = part[ok].min(), part[ok].max()
            rec[k]["imn"] = idx[ok][np.argmin(part[ok])]
            rec[k]["imx"] = idx[ok][np.argmax(part[ok])]
    return rec


def _merged(records: np.ndarray) -> np.ndarray:
    """The four streams' records (blocks x 4) merged into one each, as poly_merge_parts merges them:
    moments by count, extrema with the first index of the best value, the first NaN's index."""
    out = np.zeros(records.shape[1], dtype=records.dtype)
    for k in range(records.shape[1]):
        r = records[:, k]
        has = r["n"] > 0
        total = r["n"].sum()
        mu = (r["n"][has] * r["mean"][has]).sum() / total if total else 0.0
        out[k]["n"], out[k]["mean"] = total, mu
        out[k]["m2"] = (r["m2"][has] + r["n"][has] * (r["mean"][has] - mu) ** 2).sum()
        for f in ("sum", "sq", "ab", "nnan", "ninf"):
            out[k][f] = r[f].sum()
        for val, idx, pick in (("mn", "imn", np.min), ("mx", "imx", np.max)):
            ok = r[idx] >= 0
            out[k][val], out[k][idx] = 0.0, -1
            if ok.any():
                best = pick(r[val][ok])
                out[k][val], out[k][idx] = best, r[idx][ok & (r[val] == best)].min()
        nan_at = r["inan"][r["inan"] >= 0]
        out[k]["inan"] = nan_at.min() if len(nan_at) else -1
    return out


@pytest.mark.parametrize("kind", ["noise", "ties", "nan", "inf"])
def test_merged_record_gives_numpy_figures_of_the_whole(kind):
    """The statistics kernel's per-block records, merged into one as poly_merge_parts merges them,
    give NumPy's figures of the whole array once the host reads the streams from the record:
    moments, extrema with their first index, counts."""
    rng = np.random.default_rng(3)
    n, blocks = 4000, 37
    streams = [rng.standard_normal(n) * 3 + 1 for _ in range(4)]
    if kind == "ties":
        streams = [np.round(s) for s in streams]
    elif kind == "nan":
        streams[1][[5, 900, 3000]] = np.nan
    elif kind == "inf":
        streams[2][[17, 2000]] = np.inf
    part = np.zeros(1, dtype=device_run.PART_RECORD)
    part["s"][0] = _merged(np.stack([_block_records(s, blocks) for s in streams], axis=1))
    got = statistics_pass._streams_of(statistics_pass._RECORD.unpack_from(part), n)
    for s, g in zip(streams, got, strict=True):
        nan, inf = int(np.isnan(s).sum()), int(np.isinf(s).sum())
        assert (g["nan"], g["inf"]) == (nan, inf)
        if nan:
            first = int(np.flatnonzero(np.isnan(s))[0])
            assert np.isnan(g["min"]) and g["argmin"] == g["argmax"] == first
            continue
        assert (g["min"], g["max"], g["argmin"], g["argmax"]) == (s.min(), s.max(), int(np.argmin(s)), int(np.argmax(s)))
        assert g["mean_abs"] == pytest.approx(np.abs(s).mean(), rel=1e-12)
        if inf:
            assert g["mean"] == np.inf and np.isnan(g["var"])
        else:
            assert g["mean"] == pytest.approx(s.mean(), rel=1e-12)
            assert g["var"] == pytest.approx(s.var(), rel=1e-12)
            assert g["mean_sq"] == pytest.approx((s ** 2).mean(), rel=1e-12)


def test_record_unpacks_field_by_field():
    """The host reads the merged record with one struct unpack: every field of every stream, dot and
    fails land where NumPy's view of PART_RECORD has them (distinct values in every field)."""
    part = np.zeros(1, dtype=device_run.PART_RECORD)
    values = iter(range(1, 1000))
    for k in range(4):
        for name, _ in device_run.ACC_FIELDS:
            part["s"][0, k][name] = next(values)
    part["dot"], part["fails"] = 0.5, 2**63 + 5  # (fails above int64: read unsigned)
    got = statistics_pass._RECORD.unpack_from(part)
    want = [v for k in range(4) for v in part["s"][0, k].tolist()] + [0.5, 2**63 + 5]
    assert statistics_pass._RECORD.size == device_run.PART_RECORD.itemsize
    assert list(got) == want
    assert [type(v) for v in got] == [type(v) for v in want]


def test_record_struct_reads_select_targets_and_refuses_what_it_cannot_read():
    state = np.zeros(1, dtype=device_run.SELECT_STATE)
    state["t"][0]["prefix"][:3] = [2**64 - 1, 7, 9]
    state["t"][0]["rank"][:3] = [1, 2, 3]
    state["t"][0]["stream"][:3], state["t"][0]["bits"][:3] = [2, 3, 2], [32, 12, -1]
    layout = device_run.record_struct(device_run.SELECT_TARGET)
    got = [layout.unpack_from(state, i * layout.size) for i in range(3)]
    assert got == [(2**64 - 1, 1, 2, 32), (7, 2, 3, 12), (9, 3, 2, -1)]
    assert device_run.record_struct(device_run.SELECT_STATE).size == device_run.SELECT_STATE.itemsize
    with pytest.raises(ValueError, match="padding"):
        device_run.record_struct(np.dtype({"names": ["a", "b"], "formats": ["u8", "u4"], "offsets": [0, 8], "itemsize": 16}))
    with pytest.raises(ValueError, match="no struct code"):
        device_run.record_struct(np.dtype([("a", "f2")]))


def test_device_select_keys_read_back_and_an_unfinished_target_is_an_error():
    wanted = ((2, 10), (3, 11))
    state = np.zeros(1, dtype=device_run.SELECT_STATE)
    state["t"][0]["prefix"][:2], state["t"][0]["bits"][:2] = [0x3F800000, 0x40000000], [32, 32]
    select = order_select.DeviceSelect(wanted=wanted, state=0, key_bits=32)
    assert select.keys(state) == {(2, 10): 0x3F800000, (3, 11): 0x40000000}
    state["t"][0]["bits"][1] = 22
    with pytest.raises(GpuError, match="rank 11 of stream 3 with 22 of 32 key bits"):
        select.keys(state)


def _ranged_order_values(run: NumpyKernels, requests, nans=(0, 0, 0, 0)) -> list[float]:
    """order_values as device_error_stats runs it with predicted ranges: sample, statistics pass
    (its range counts, and no first digit then), then the order statistics."""
    plan = order_select.plan_ranges(run, requests)
    first = raw = None
    if plan is not None:
        raw, first, selected = statistics_pass.run_error_stats(run, False, plan)
        assert raw["size"] == run.n and selected is None
        assert first is None or set(first) == set(plan.unpredicted())
        # the plan on the device, and the select on the ranges' keys behind the pass, with no wait
        # between them: the ranks placed in their ranges, then a pass per digit the widest range
        # may leave (the first RANGE_FIRST_BITS wide)
        phases = run.key_bits // 8 + 1
        passes = 1 + -(-(run.key_bits - order_select.RANGE_FIRST_BITS) // DIGIT_BITS)
        assert run.launches == ["poly_sample", *["poly_plan_ranges"] * phases, "poly_stats_ranges", "poly_merge_parts",
                                "poly_range_seed", *["poly_range_pass"] * passes]
    else:
        first = {2: run.first_histogram(2), 3: run.first_histogram(3)}
    # (the first and last ranks are the statistics pass's minimum and maximum)
    extremes = statistics_pass.extreme_values(raw) if raw is not None else None
    return order_select.order_values(run, requests, list(nans), first, plan, extremes=extremes)


def _numpy_values(run: NumpyKernels, requests) -> list[float]:
    out = []
    for stream, q in requests:
        values = run.streams[stream].astype(np.float64)
        out.append(float(np.median(values)) if q is None else float(np.quantile(values, q)))
    return out


@pytest.fixture
def small_ranges(monkeypatch):
    """Predicted ranges on test-sized inputs: any size, a small sample, wide ranges allowed."""
    monkeypatch.setattr(order_select, "MIN_ELEMENTS", 0)
    monkeypatch.setattr(order_select, "SAMPLE_SIZE", 512)
    monkeypatch.setattr(predicted_ranges, "MAX_FRACTION", 1)


@pytest.mark.parametrize("f32", [True, False], ids=["float32 keys", "float64 keys"])
@pytest.mark.parametrize("kind", ["noise", "equal", "constant", "zeros in b"])
def test_ranks_in_predicted_ranges_match_numpy(f32, kind, small_ranges):
    """The statistics pass gathers the keys of the sample's predicted ranges; the ranks found in
    them give NumPy's values, with no gather pass over the input where every rank was in range."""
    rng = np.random.default_rng(11 + len(kind) + f32)
    dtype = np.float32 if f32 else np.float64
    run = NumpyKernels(_streams(kind, 6000, dtype, rng), f32)
    got = _ranged_order_values(run, REQUESTS)
    assert got == _numpy_values(run, REQUESTS)
    assert run.launches[0] == "poly_sample"
    if kind == "noise":  # a and b's requests (streams 0, 1) gather their own; absdiff's and reldiff's none
        gathered = [run.launches.index("poly_radix_gather")] if "poly_radix_gather" in run.launches else []
        assert len(gathered) <= 1
        absrel = [(s, q) for s, q in REQUESTS if s in (2, 3)]
        run2 = NumpyKernels(run.streams, f32)
        assert _ranged_order_values(run2, absrel) == _numpy_values(run2, absrel)
        assert "poly_radix_gather" not in run2.launches and "poly_radix_hist" not in run2.launches


def test_ranks_outside_their_ranges_fall_back_to_a_gather(small_ranges, monkeypatch):
    """Ranges too narrow to hold their ranks (no spread allowed around the sample's guess) and
    regions too small for their keys are found out by the counts: those ranks are gathered from
    the input as without a prediction, and the values stay exact."""
    rng = np.random.default_rng(5)
    requests = [(s, q) for s, q in REQUESTS if s in (2, 3)]
    monkeypatch.setattr(predicted_ranges, "SIGMAS", 0.0)
    run = NumpyKernels(_streams("noise", 5000, np.float32, rng), True)
    assert _ranged_order_values(run, requests) == _numpy_values(run, requests)
    assert "poly_radix_gather" in run.launches
    monkeypatch.setattr(predicted_ranges, "SIGMAS", 4.0)
    monkeypatch.setattr(predicted_ranges, "REGION_SLACK", 0.0)
    monkeypatch.setattr(predicted_ranges, "REGION_EXTRA", 1)
    run = NumpyKernels(_streams("noise", 5000, np.float32, rng), True)
    assert _ranged_order_values(run, requests) == _numpy_values(run, requests)
    assert run.launches.count("poly_radix_gather") == 1  # both streams' regions overflowed: one gather for all


def test_streams_the_device_leaves_unpredicted_use_the_passs_first_digit(small_ranges, monkeypatch):
    """Ranges holding more keys than their regions were sized for (the device finds it from the
    sample: ties, or here a tight allowance) are not gathered: the statistics pass counts those
    streams' first key digit instead, and their ranks are found from it, exactly. The next
    comparison of that size and those ranks sizes its regions for what the ranges held."""
    monkeypatch.setattr(predicted_ranges, "TIE_ALLOWANCE", 0.01)
    monkeypatch.setattr(predicted_ranges, "LEARNED_BUDGETS", {})
    rng = np.random.default_rng(9)
    streams = _streams("noise", 5000, np.float32, rng)
    requests = [(2, None), (3, None), (3, 0.9)]
    for call in range(2):
        run = NumpyKernels(streams, True)
        plan = order_select.plan_ranges(run, requests)
        raw, first, _ = statistics_pass.run_error_stats(run, False, plan)
        if call == 0:
            assert plan.streams == {} and sorted(first) == [2, 3]
            assert all((first[s] == run.first_histogram(s)).all() for s in (2, 3))
        else:
            assert sorted(plan.streams) == [2, 3] and first is None
        assert order_select.order_values(run, requests, [0, 0, 0, 0], first, plan) == _numpy_values(run, requests)


def test_stream_ranges_hold_their_ranks_and_stay_few(monkeypatch):
    """From a sample of a large population, each wanted rank lies in its range (counted against
    the whole population), ranges stay disjoint and at most RANGES (more are joined), and heavy
    ties give none."""
    monkeypatch.setattr(predicted_ranges, "MAX_FRACTION", 1)  # the joined ranges are wide
    rng = np.random.default_rng(2)
    n = 1 << 20
    keys = np.sort(rng.integers(1 << 31, 1 << 32, n, dtype=np.uint64))
    sample = keys[rng.integers(0, n, 1 << 16)]
    ranks = [int(n * q) for q in (0.5, 0.5 + 1e-6, 0.9, 0.95, 0.99, 0.1, 0.3)]
    sr = predicted_ranges.stream_ranges(sample, n, ranks, 32)
    assert sr is not None and len(sr.bounds) <= RANGES
    assert all(sr.bounds[i][1] < sr.bounds[i + 1][0] for i in range(len(sr.bounds) - 1))
    for r in ranks:
        lo, hi = sr.bounds[sr.range_of[r]]
        assert np.searchsorted(keys, lo, "left") <= r < np.searchsorted(keys, hi, "right")
    inside = sum(int(np.searchsorted(keys, hi, "right") - np.searchsorted(keys, lo, "left")) for lo, hi in sr.bounds)
    assert inside <= 1.5 * sr.expected
    ties = np.full(1 << 14, 7 << 28, dtype=np.uint64)
    assert predicted_ranges.stream_ranges(ties, n, [n // 2], 32) is None


def test_no_ranges_when_their_buffers_would_crowd_the_device(small_ranges, monkeypatch):
    """Regions that would take more than a quarter of the free device memory are not planned:
    the ranks are found the ordinary way."""
    rng = np.random.default_rng(8)
    run = NumpyKernels(_streams("noise", 3000, np.float32, rng), True)
    monkeypatch.setattr(run, "free_memory", lambda: 1 << 12)
    assert order_select.plan_ranges(run, [(2, None), (3, 0.9)]) is None
    requests = [(2, None), (3, 0.9)]
    assert _ranged_order_values(run, requests) == _numpy_values(run, requests)


def test_a_stream_with_nan_gives_nan_beside_ranged_ranks(small_ranges):
    """A stream holding NaN has no order statistics (NaN, as NumPy gives), though its ranks were
    planned before the statistics pass counted the NaN; the other stream's come from its ranges."""
    rng = np.random.default_rng(4)
    streams = _streams("noise", 4000, np.float32, rng)
    streams[2][[10, 2000]] = np.nan
    run = NumpyKernels(streams, True)
    requests = [(2, None), (3, None), (3, 0.99)]
    got = _ranged_order_values(run, requests, nans=(0, 0, 2, 0))
    assert np.isnan(got[0]) and got[1:] == _numpy_values(run, requests)[1:]
    assert "poly_radix_gather" not in run.launches


@pytest.mark.parametrize("lo, hi", [(1.0, 2.0), (0.1, 0.3), (-np.inf, 1.0), (1.0, np.inf), (np.inf, np.inf),
                                    (-1e308, 1e308), (5e-324, 1e-323)])
def test_interpolation_between_neighbours_is_numpys(lo, hi):
    """The host's interpolation of a quantile between its two neighbouring values gives NumPy's
    figure, infinities and overflow included."""
    for q in (0.0, 0.25, 0.5, 0.7, 0.99):
        with np.errstate(all="ignore"):
            want = float(np.quantile(np.array([lo, hi]), q))
        got = order_select._lerp(lo, hi, q)
        assert got == want or (np.isnan(got) and np.isnan(want)), (q, got, want)


def test_keys_turn_back_into_their_values():
    for dtype, f32 in ((np.float32, True), (np.float64, False)):
        values = np.array([-np.inf, -3.5, -0.0, 0.0, 1e-40 if f32 else 5e-324, 2.25, np.finfo(dtype).max, np.inf], dtype=dtype)
        run = NumpyKernels({k: values for k in range(4)}, f32)
        got = order_select._key_values(run.keys(2).tolist(), f32)
        assert got == values.astype(np.float64).tolist()
        assert [np.signbit(v) for v in got] == np.signbit(values).tolist()
