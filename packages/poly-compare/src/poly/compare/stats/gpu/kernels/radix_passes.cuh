// The order statistics' radix passes: histograms and gathers over the input and over gathered keys.
#ifndef POLY_RADIX_PASSES_CUH
#define POLY_RADIX_PASSES_CUH

#include "layouts.cuh"
#include "streaming.cuh"

// -- order statistics: radix passes -------------------------------------------------------------------
// Keys of one stream on their way to its buffer: each warp stages them in shared memory and
// writes POLY_FLUSH of them at a time (coalesced stores) into a run of POLY_RESERVE slots of the
// buffer it reserved with one atomic: a stream's counter, which every warp of the grid shares,
// sees one atomic per POLY_RESERVE keys (one per POLY_FLUSH keys made it the gather's bottleneck).
#define POLY_STAGE_KEYS (POLY_STAGE_BYTES / (POLY_KEY_BITS / 8))  // 128 float32 keys, 64 float64
#define POLY_FLUSH (POLY_STAGE_KEYS / 2)
#define POLY_RESERVE (POLY_RESERVE_BYTES / (POLY_KEY_BITS / 8))

// A warp's reserved run of one stream's buffer: its next slot and how many are left (warp-uniform).
struct Reserved {
    u64 pos;
    u32 left;
};

// Writes `count` staged keys from slot `sent` on; every lane of the warp calls it together.
__device__ __forceinline__ void staging_write(const KT* keys, u32 sent, u32 count, Reserved& r, u64* counter, KT* buf,
                                              u64 cap) {
    __syncwarp();
    const int lane = threadIdx.x & 31;
    for (u32 done = 0; done < count;) {
        if (r.left == 0) {
            u64 base = 0;
            if (lane == 0) base = atomicAdd(counter, (u64)POLY_RESERVE);
            r.pos = __shfl_sync(0xFFFFFFFFu, base, 0);
            r.left = POLY_RESERVE;
        }
        const u32 take = min(count - done, r.left);
        for (u32 i = lane; i < take; i += 32) {
            const u64 pos = r.pos + i;
            if (pos < cap) buf[pos] = keys[(sent + done + i) & (POLY_STAGE_KEYS - 1)];
        }
        r.pos += take;
        r.left -= take;
        done += take;
    }
    __syncwarp();
}

// Fills the unused rest of a warp's run with key 0: a NaN's key, which no radix pass counts (a
// stream holding NaN has no order statistics), so that the buffer holds no stale memory.
__device__ __forceinline__ void reserved_close(const Reserved& r, KT* buf, u64 cap) {
    for (u32 i = threadIdx.x & 31; i < r.left; i += 32)
        if (r.pos + i < cap) buf[r.pos + i] = 0;
}

#define POLY_TABLE_BITS 12  // the group lookup table: one entry per value of a key's top 12 bits
#define POLY_NO_GROUP ((signed char)-1)
#define POLY_SEVERAL ((signed char)-2)
#define POLY_EXACT 64  // table entry POLY_EXACT + g: group g, whose prefix the top bits decide alone

// The group of stream `s` holding `key`, or -1 (the groups of one stream are disjoint): for
// absdiff and reldiff, looked up by the key's top bits (which decide it alone for a group of at
// most POLY_TABLE_BITS bits), then checked where several groups share them or a group is
// longer; for a and b, searched.
__device__ __forceinline__ int group_of(const Params& P, const signed char* table, int s, KT key) {
    const signed char t = s < 2 ? POLY_SEVERAL : table[(s - 2) * (1 << POLY_TABLE_BITS) + (int)(key >> (POLY_KEY_BITS - POLY_TABLE_BITS))];
    if (t == POLY_NO_GROUP) return -1;
    if (t >= POLY_EXACT) return t - POLY_EXACT;  // no look at the group (a load per distinct group in the warp)
    if (t >= 0) return in_group(P.groups[t], key) ? t : -1;
    int gid = -1;
    for (int g = 0; g < P.ngroups; ++g)
        if (P.groups[g].stream == s && in_group(P.groups[g], key)) gid = g;
    return gid;
}

// Fills (block-wide; a barrier must follow) table[s - 2][top]: the one group of stream s (absdiff,
// reldiff) whose prefix agrees with `top` (a key's top bits), POLY_SEVERAL where more do,
// POLY_NO_GROUP where none does; and first_of[s]: stream s's first group, or -1.
__device__ void group_table(const Params& P, signed char* table, int* first_of) {
    for (int i = threadIdx.x; i < (2 << POLY_TABLE_BITS); i += blockDim.x) {
        const int st = 2 + (i >> POLY_TABLE_BITS);
        const u64 top = (u64)(i & ((1 << POLY_TABLE_BITS) - 1));
        signed char t = POLY_NO_GROUP;
        for (int g = 0; g < P.ngroups; ++g) {
            const Group& gr = P.groups[g];
            const int common = gr.bits < POLY_TABLE_BITS ? gr.bits : POLY_TABLE_BITS;
            if (gr.stream != st || (common > 0 && (top >> (POLY_TABLE_BITS - common)) != (gr.prefix >> (gr.bits - common))))
                continue;
            t = t != POLY_NO_GROUP ? POLY_SEVERAL : (signed char)(gr.bits <= POLY_TABLE_BITS ? POLY_EXACT + g : g);
        }
        table[i] = t;
    }
    if (threadIdx.x < 4) {
        int k = -1;
        for (int g = P.ngroups - 1; g >= 0; --g)
            if (P.groups[g].stream == (int)threadIdx.x) k = g;
        first_of[threadIdx.x] = k;
    }
}

// dynamic shared memory: the ring, then (POLY_THREADS / 32) x 4 x POLY_STAGE_KEYS keys (a stage per
// warp and stream). The groups of one stream share one buffer, its counter at the stream's first
// group: a warp's keys of a stream go out in one step, however many groups they belong to (the
// radix passes over the buffer tell the groups apart). A warp's staging counts are warp-uniform
// and live in registers: appending a key costs a ballot, a population count and a store.
extern "C" __global__ void __launch_bounds__(POLY_THREADS, 3) poly_radix_gather(const Params P) {
    __shared__ signed char table[2 << POLY_TABLE_BITS];
    __shared__ int first_of[4];
    const int warp = threadIdx.x / 32;
    KT* stage = (KT*)(smem + POLY_RING_BYTES / sizeof(uint4)) + warp * 4 * POLY_STAGE_KEYS;
    group_table(P, table, first_of);
    __syncthreads();
    int first[4];
    u32 fill[4], sent[4];
    Reserved res[4];
#pragma unroll
    for (int s = 0; s < 4; ++s) {
        first[s] = first_of[s];
        fill[s] = sent[s] = 0;
        res[s].pos = 0;
        res[s].left = 0;
    }
    const unsigned below = (1u << (threadIdx.x & 31)) - 1u;
    auto one = [&](u64, const Vals& v, bool valid) {
#pragma unroll
        for (int s = 0; s < 4; ++s) {
            if (first[s] < 0) continue;
            const KT key = order_key(v.v[s]);
            const bool mine = valid && group_of(P, table, s, key) >= 0;
            const unsigned peers = __ballot_sync(0xFFFFFFFFu, mine);
            if (!peers) continue;
            if (mine) stage[s * POLY_STAGE_KEYS + ((fill[s] + __popc(peers & below)) & (POLY_STAGE_KEYS - 1))] = key;
            fill[s] += __popc(peers);
            if (fill[s] - sent[s] >= POLY_FLUSH) {
                const int g = first[s];
                staging_write(stage + s * POLY_STAGE_KEYS, sent[s], POLY_FLUSH, res[s], (u64*)P.out + g, (KT*)P.seg[g],
                              P.seg_len[g]);
                sent[s] += POLY_FLUSH;
            }
        }
    };
    auto chunk = [&](u64 j0, const uint4& ra, const uint4& rb, bool valid) {
        Vals v[POLY_ELEMS];
        chunk_values(P, ra, rb, v);
#pragma unroll
        for (int e = 0; e < POLY_ELEMS; ++e) one(j0 + e, v[e], valid);
    };
    for_each_pair<true>(P, smem, chunk, one);
#pragma unroll
    for (int s = 0; s < 4; ++s) {
        const int g = first[s];
        if (g < 0) continue;
        if (fill[s] != sent[s])
            staging_write(stage + s * POLY_STAGE_KEYS, sent[s], fill[s] - sent[s], res[s], (u64*)P.out + g, (KT*)P.seg[g],
                          P.seg_len[g]);
        reserved_close(res[s], (KT*)P.seg[g], P.seg_len[g]);
    }
}

// One radix pass over the input: for each of its groups, a histogram of the next key digit of
// the elements with the group's prefix (an element's group found as the gather finds it).
// dynamic shared memory: the ring, then ngroups x POLY_BINS counters
extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_radix_hist(const Params P) {
    __shared__ signed char table[2 << POLY_TABLE_BITS];
    __shared__ int first_of[4];
    __shared__ int shift[POLY_MAX_GROUPS];
    __shared__ u32 mask[POLY_MAX_GROUPS];
    uint4* ring = smem;
    u32* shist = (u32*)(smem + POLY_RING_BYTES / sizeof(uint4));
    const int total = P.ngroups * POLY_BINS;
    for (int k = threadIdx.x; k < total; k += blockDim.x) shist[k] = 0;
    group_table(P, table, first_of);
    if (threadIdx.x < P.ngroups) {  // each group's digit, from shared memory (a lane's own group)
        shift[threadIdx.x] = POLY_KEY_BITS - P.groups[threadIdx.x].bits - P.groups[threadIdx.x].dbits;
        mask[threadIdx.x] = (1u << P.groups[threadIdx.x].dbits) - 1u;
    }
    __syncthreads();
    bool any[4];
#pragma unroll
    for (int s = 0; s < 4; ++s) any[s] = first_of[s] >= 0;
    auto one = [&](u64, const Vals& v, bool) {
#pragma unroll
        for (int s = 0; s < 4; ++s) {
            if (!any[s]) continue;
            const KT key = order_key(v.v[s]);
            const int g = group_of(P, table, s, key);
            if (g >= 0) atomicAdd(&shist[g * POLY_BINS + (u32)((key >> shift[g]) & (KT)mask[g])], 1u);
        }
    };
    for_each_value(P, ring, one);
    __syncthreads();
    u64* out = (u64*)P.hist;
    for (int k = threadIdx.x; k < total; k += blockDim.x) {
        const u32 c = shist[k];
        if (c) atomicAdd(&out[k], (u64)c);
    }
}

// One read of one gathered buffer (``seg[0]``, its length at ``out``: the gather's counter, at
// most its capacity ``seg_len[0]``) for all its groups (up to HIST_GROUPS per launch, disjoint):
// each key counts in the histogram of the group holding it; key 0 fills the runs the gather's
// warps reserved and left unused.
// dynamic shared memory: ngroups x POLY_BINS counters.
// COLLECT (poly_keys_collect): instead, the keys of the groups (few by then: the last digits of
// their ranks) are copied to seg[1] (capacity seg_len[1]), their number counted at hist (u64).
template <bool COLLECT>
__device__ __forceinline__ void keys_pass(const Params& P) {
    extern __shared__ u32 shist[];
    const int ng = P.ngroups;
    const KT* keys = (const KT*)P.seg[0];
    if (!COLLECT) {
        for (int k = threadIdx.x; k < ng * POLY_BINS; k += blockDim.x) shist[k] = 0;
        __syncthreads();
    }
    auto count = [&](KT key) {
        if (key == 0) return;
        for (int g = 0; g < ng; ++g) {
            if (in_group(P.groups[g], key)) {
                if (COLLECT) {
                    const u64 at = atomicAdd((u64*)P.hist, 1ull);
                    if (at < P.seg_len[1]) ((KT*)P.seg[1])[at] = key;
                } else {
                    atomicAdd(&shist[g * POLY_BINS + digit_of(P.groups[g], key)], 1u);
                }
                return;
            }
        }
    };
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 written = *(const u64*)P.out;
    const u64 len = written < P.seg_len[0] ? written : P.seg_len[0];
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    // four loads in flight per thread before their keys are counted (the pass was latency-bound)
    for (; i + 3 * stride < len; i += 4 * stride) {
        const KT k0 = __ldg(keys + i), k1 = __ldg(keys + i + stride), k2 = __ldg(keys + i + 2 * stride),
                 k3 = __ldg(keys + i + 3 * stride);
        count(k0);
        count(k1);
        count(k2);
        count(k3);
    }
    for (; i < len; i += stride) count(__ldg(keys + i));
    if (COLLECT) return;
    __syncthreads();
    u64* out = (u64*)P.hist;
    for (int k = threadIdx.x; k < ng * POLY_BINS; k += blockDim.x) {
        const u32 c = shist[k];
        if (c) atomicAdd(&out[k], (u64)c);
    }
}

extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_keys_hist(const Params P) { keys_pass<false>(P); }
extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_keys_collect(const Params P) { keys_pass<true>(P); }

#endif  // POLY_RADIX_PASSES_CUH
