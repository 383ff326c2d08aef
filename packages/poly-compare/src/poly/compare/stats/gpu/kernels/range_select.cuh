// The ranks in the predicted ranges, narrowed on the device (poly_range_seed, poly_range_pass).
#ifndef POLY_RANGE_SELECT_CUH
#define POLY_RANGE_SELECT_CUH

#include "layouts.cuh"
#include "device_select.cuh"

// Behind the statistics pass with predicted ranges, the wanted ranks of absdiff and reldiff (a
// RangeSelState at Params.sel) are narrowed on the keys the pass gathered, with no host round trip:
// poly_range_seed places each rank in its range by the pass's counts of the keys below the ranges;
// each poly_range_pass counts the next digit of the keys of every rank's group (at first, its whole
// range) over all the regions, and its last block descends the ranks. A rank of a stream left
// unpredicted, of a stream whose regions overflowed, or outside its range (an unlucky sample) is
// marked missed: the host finds those the ordinary way. (The host drove these passes before,
// reading each pass's histograms back: 10^9 float32 pairs idled the GPU about 1.4 ms a comparison.)

// One block, a thread per target. Params: sel; rout, the statistics pass's counts (below each range,
// then each stream's fullest region); rcap, a region's keys.
extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_range_seed(const Params P) {
    static_assert(2 * POLY_PLAN_RANKS <= POLY_THREADS, "a thread a target");
    RangeSelState* S = (RangeSelState*)P.sel;
    const u64* rout = (const u64*)P.rout;
    const int t = threadIdx.x;
    if (t >= S->ntargets) return;
    RangeTarget* target = &S->t[t];
    const int s = target->stream - 2;
    const int j = poly_plan.nranges[s] > 0 ? poly_plan.range_of[s * POLY_PLAN_RANKS + target->ask] : -1;
    const u64 below = j >= 0 ? rout[s * POLY_RANGES + j] : 0;
    if (j < 0 || rout[2 * POLY_RANGES + s] > P.rcap || target->rank < below) {  // (a rank below its range's lo)
        target->missed = 1;
        return;
    }
    const KT lo = (KT)poly_plan.lo[s * POLY_RANGES + j], hi = (KT)poly_plan.hi[s * POLY_RANGES + j];
    target->rank -= below;
    target->lo = lo;
    target->hi = hi;
    target->prefix = 0;
    target->bits = shared_offset_bits(lo, hi);  // (the offsets' top bits every key of the range shares)
}

// A group of ranks a pass counts: the keys of their range whose offsets from its lo have the known
// top bits, an interval of keys [at, at + width]; the digit after those bits is (key - at) >> shift.
struct RangeSpan {
    KT at, width;
};

// Grid-wide, a warp per region of each stream (stream-major, as Params.rfills has them). Params:
// sel; sel_dbits, the digit bits this pass counts (fewer where a rank has fewer left); sel_slots, the
// shared histograms of 2^sel_dbits counters the launch's dynamic shared memory holds; hist,
// 2 POLY_PLAN_RANKS x POLY_BINS u64 (a row per target, zero before the first pass; the last block
// clears the rows it used); rbuf, rfills, rcap and nregions: the statistics pass's regions. A
// launch with no rank left to narrow returns at once (the host launches as many as the widest
// range may need). A rank beyond its group's keys after the first pass lies above its range: missed.
extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_range_pass(const Params P) {
    constexpr int NT = 2 * POLY_PLAN_RANKS;
    __shared__ RangeTarget st[NT];
    // each stream's groups, ascending (disjoint intervals), then padding up to a power of two: the
    // first keys (searched), the intervals, the digits' shifts, the first target of each (whose
    // row of the global histograms it counts in) and its shared histogram (-1: global memory)
    __shared__ KT gat[2][NT];
    __shared__ RangeSpan gspan[2][NT];
    __shared__ int gshift[2][NT], gtarget[2][NT], gslot[2][NT];
    __shared__ int owner[NT];  // each target's group's first target, -1 when not narrowing
    __shared__ int ngroups[2], gtop[2], nslots;
    RangeSelState* S = (RangeSelState*)P.sel;
    u32* shist = (u32*)smem;
    u64* hist = (u64*)P.hist;
    const int nt = S->ntargets;
    if (threadIdx.x < nt) st[threadIdx.x] = S->t[threadIdx.x];  // (one load a target, all at once)
    __syncthreads();
    if (threadIdx.x == 0) {  // ranks of the same range with the same known bits share a group
        int used = 0;
        for (int s = 0; s < 2; ++s) {
            int ng = 0;
            for (int t = 0; t < nt; ++t) {
                const RangeTarget& x = st[t];
                if (s == 0) owner[t] = -1;
                if (x.stream - 2 != s || x.missed || x.bits >= POLY_KEY_BITS) continue;
                int o = t;
                for (int k = 0; k < ng && o == t; ++k) {
                    const RangeTarget& y = st[gtarget[s][k]];
                    if (y.lo == x.lo && y.bits == x.bits && y.prefix == x.prefix) o = gtarget[s][k];
                }
                owner[t] = o;
                if (o != t) continue;
                // the interval (the offsets below 2^(POLY_KEY_BITS - bits): the prefix and the range bound it)
                const int rest = POLY_KEY_BITS - x.bits;
                const u64 from = x.bits > 0 ? x.prefix << rest : 0;
                const KT at = (KT)(x.lo + from), width = (KT)min(rest >= 64 ? ~0ull : (1ull << rest) - 1, x.hi - x.lo - from);
                int k = ng++;  // inserted in order
                for (; k > 0 && gat[s][k - 1] > at; --k) {
                    gat[s][k] = gat[s][k - 1];
                    gspan[s][k] = gspan[s][k - 1];
                    gshift[s][k] = gshift[s][k - 1];
                    gtarget[s][k] = gtarget[s][k - 1];
                    gslot[s][k] = gslot[s][k - 1];
                }
                gat[s][k] = at;
                gspan[s][k].at = at;
                gspan[s][k].width = width;
                gshift[s][k] = rest - min(P.sel_dbits, rest);
                gtarget[s][k] = t;
                gslot[s][k] = used < P.sel_slots ? used++ : -1;
            }
            int top = 1;
            while (top < ng) top <<= 1;
            for (int k = ng; k < top; ++k) {  // never found: searched past (the top key), or holding no key
                gat[s][k] = ~(KT)0;
                gspan[s][k].at = 0;
                gspan[s][k].width = 0;
            }
            ngroups[s] = ng;
            gtop[s] = top >> 1;
        }
        nslots = used;
    }
    __syncthreads();
    if (ngroups[0] + ngroups[1] == 0) return;  // (the same in every block)
    for (int k = threadIdx.x; k < (nslots << P.sel_dbits); k += blockDim.x) shist[k] = 0;
    __syncthreads();
    // A key's group: the last whose first key is at most the key (a binary search of the stream's
    // groups, the same steps for the whole warp), if its interval holds the key.
    auto count = [&](int s, KT key) {
        int j = 0;
        for (int step = gtop[s]; step > 0; step >>= 1)
            if (gat[s][j + step] <= key) j += step;
        const RangeSpan g = gspan[s][j];
        const KT d = key - g.at;
        if (d > g.width) return;  // (below its first key: wraps above the width; key 0 never counts)
        const u32 digit = (u32)(d >> gshift[s][j]);
        const int slot = gslot[s][j];
        if (slot >= 0) atomicAdd(&shist[(slot << P.sel_dbits) + digit], 1u);
        else atomicAdd(&hist[(u64)gtarget[s][j] * POLY_BINS + digit], (u64)1);
    };
    // A region's keys are read eight loads a lane at once (a region holds a few hundred), its fill
    // fetched a region ahead: a warp waits on memory about once a region.
    constexpr int LOADS = 8;
    const u32* fills = (const u32*)P.rfills;
    const u32 items = 2 * P.nregions, warps = gridDim.x * (blockDim.x / 32), lane = threadIdx.x & 31;
    auto fill_of = [&](u32 w) -> u32 { return w < items && ngroups[w >= P.nregions] ? min(__ldg(fills + w), P.rcap) : 0u; };
    u32 w = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    for (u32 len = fill_of(w); w < items; w += warps) {
        const int s = w >= P.nregions;
        const KT* region = (const KT*)P.rbuf[s] + (u64)(w - s * P.nregions) * P.rcap;
        const u32 next = fill_of(w + warps);
        for (u32 base = 0; base < len; base += 32 * LOADS) {
            KT k[LOADS];
#pragma unroll
            for (int u = 0; u < LOADS; ++u) {
                const u32 i = base + lane + 32 * u;
                k[u] = i < len ? __ldg(region + i) : (KT)0;
            }
#pragma unroll
            for (int u = 0; u < LOADS; ++u)
                count(s, k[u]);
        }
        len = next;
    }
    __syncthreads();
    for (int s = 0; s < 2; ++s)
        for (int k = 0; k < ngroups[s]; ++k) {
            if (gslot[s][k] < 0) continue;
            for (int d = threadIdx.x; d < (1 << P.sel_dbits); d += blockDim.x) {
                const u32 c = shist[(gslot[s][k] << P.sel_dbits) + d];
                if (c) atomicAdd(&hist[(u64)gtarget[s][k] * POLY_BINS + d], (u64)c);
            }
        }
    if (!last_block(&S->done_blocks, gridDim.x)) return;
    const int warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
    for (int t = warp; t < nt; t += nwarps) {
        if (owner[t] < 0) continue;
        RangeTarget* target = &S->t[t];
        const u64 rank = st[t].rank;
        const int dbits = min(P.sel_dbits, POLY_KEY_BITS - st[t].bits);
        const u64 total = warp_descend(target, hist + (u64)owner[t] * POLY_BINS, dbits);
        __syncwarp();
        if (lane == 0 && rank >= total) target->missed = 1;  // (its group is its range, on the first pass)
    }
    __syncthreads();
    for (int t = 0; t < nt; ++t)
        if (owner[t] == t)
            for (int d = threadIdx.x; d < (1 << P.sel_dbits); d += blockDim.x) hist[(u64)t * POLY_BINS + d] = 0;
    if (threadIdx.x == 0) S->done_blocks = 0;
}

#endif  // POLY_RANGE_SELECT_CUH
