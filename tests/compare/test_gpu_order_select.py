"""
The host side of the on-device order statistics (``launcher.order_values``): which passes it
asks for, how it narrows each wanted rank digit by digit, when it gathers, and how it turns
keys back into values. The kernels are replaced by NumPy versions of what they count and
gather (``NumpyKernels``), so this runs without a GPU; the kernels themselves are tested
against the CPU engine on a GPU in test_compare_gpu_stats.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from poly.compare.stats.gpu import launcher
from poly.compare.stats.gpu.kernel_source import DIGIT_BITS, FIRST_BITS

EPS = 2.220446049250313e-16


class _Setup:
    def __init__(self, f32: bool):
        self.f32 = f32


class NumpyKernels:
    """Stands in for ``launcher.DeviceRun``: memory is NumPy byte arrays at made-up addresses,
    and each launch computes with NumPy what the kernel of that name computes."""

    WARPS, RUN = 3, 16  # the gather's writers, and the slots each reserves at a time

    def __init__(self, streams: dict[int, np.ndarray], f32: bool):
        self.streams = streams
        self.n = len(streams[0])
        self.setup = _Setup(f32)
        self.key_bits = 32 if f32 else 64
        self.memory: dict[int, np.ndarray] = {}
        self.next_address = 1 << 20
        self.launches: list[str] = []

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
    def free_memory(self) -> int:
        return 1 << 34

    def params(self):
        return launcher.LaunchParams()

    def alloc(self, nbytes: int, zero: bool = False) -> int:
        address = self.next_address
        self.next_address += int(nbytes) + 4096
        self.memory[address] = np.zeros(int(nbytes) + 16, dtype=np.uint8)
        return address

    def view(self, address: int, dtype) -> np.ndarray:
        base = max(b for b in self.memory if b <= address)
        return self.memory[base][address - base:].view(dtype)

    def grid(self, name: str, shared: int = 0, n: int | None = None) -> int:
        return 1

    def read(self, address: int, out: np.ndarray) -> np.ndarray:
        return self.read_all([(address, out)])[0]

    def read_all(self, copies):
        for address, out in copies:
            out[...] = self.view(address, out.dtype)[:out.size]
        return [out for _, out in copies]

    def in_group(self, g, key: int) -> bool:
        return g.bits == 0 or (key >> (self.key_bits - g.bits)) == g.prefix

    def launch(self, name: str, p, grid: int, shared: int = 0) -> None:
        self.launches.append(name)
        kb = self.key_bits
        key_dtype = np.uint32 if kb == 32 else np.uint64
        groups = [p.groups[j] for j in range(p.ngroups)]
        if name == "poly_keys_hist":  # one buffer, its length at p.out; each key counted in its group's histogram
            hist = self.view(p.hist, np.uint64)
            length = min(int(self.view(p.out, np.uint64)[0]), p.seg_len[0])
            for k in (int(k) for k in self.view(p.seg[0], key_dtype)[:length]):
                if k == 0:  # the unused rest of a reserved run
                    continue
                j = next((j for j, g in enumerate(groups) if self.in_group(g, k)), None)
                if j is not None:
                    g = groups[j]
                    hist[j * (1 << DIGIT_BITS) + ((k >> (kb - g.bits - g.dbits)) & ((1 << g.dbits) - 1))] += 1
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
def test_order_values_match_numpy(f32, kind, budget, monkeypatch):
    rng = np.random.default_rng(len(kind) + 2 * f32)
    dtype = np.float32 if f32 else np.float64
    run = NumpyKernels(_streams(kind, int(rng.integers(500, 2500)), dtype, rng), f32)
    monkeypatch.setattr(launcher, "GATHER_MIN_KEYS", budget)
    monkeypatch.setattr(launcher, "GATHER_FRACTION", 1 << 30)
    first = {2: run.first_histogram(2), 3: run.first_histogram(3)}
    got = launcher.order_values(run, REQUESTS, [0, 0, 0, 0], first)
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
    assert set(run.launches) <= {"poly_radix_hist", "poly_radix_gather", "poly_keys_hist"}


def test_streams_with_nan_or_no_elements_give_nan():
    rng = np.random.default_rng(0)
    run = NumpyKernels(_streams("noise", 100, np.float32, rng), True)
    got = launcher.order_values(run, [(2, None), (3, 0.5)], [0, 0, 1, 0], {2: run.first_histogram(2),
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
        targets = [launcher._Target(stream=2, rank=r, key_bits=32, rank_in=r, count=int(cum[-1]), prefix=5, bits=4)
                   for r in ranks]
        items.append((targets, hist, dbits))
        for r in ranks:
            b = int(np.searchsorted(cum, r, side="right"))
            want.append(((5 << dbits) | b, 4 + dbits, r - (int(cum[b - 1]) if b else 0), int(hist[b])))
    launcher._descend(items)
    got = [(t.prefix, t.bits, t.rank_in, t.count) for ts, _, _ in items for t in ts]
    assert got == want


def _block_records(values: np.ndarray, blocks: int) -> np.ndarray:
    """Per-block statistics records of one stream, as the statistics kernel writes them."""
    rec = np.zeros(blocks, dtype=np.dtype(launcher._ACC))
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


@pytest.mark.parametrize("kind", ["noise", "ties", "nan", "inf"])
def test_block_records_merge_as_numpy_computes_the_whole(kind):
    """The host's merge of the statistics kernel's per-block records (all four streams at once)
    gives NumPy's figures of the whole array: moments, extrema with their first index, counts."""
    rng = np.random.default_rng(3)
    n, blocks = 4000, 37
    streams = [rng.standard_normal(n) * 3 + 1 for _ in range(4)]
    if kind == "ties":
        streams = [np.round(s) for s in streams]
    elif kind == "nan":
        streams[1][[5, 900, 3000]] = np.nan
    elif kind == "inf":
        streams[2][[17, 2000]] = np.inf
    parts = np.stack([_block_records(s, blocks) for s in streams], axis=1)
    got = launcher._merge_streams(parts, n)
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
