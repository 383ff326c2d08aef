// The sample of absdiff's and reldiff's keys (poly_sample) and the predicted ranges planned from it
// on the device (poly_plan_ranges).
#ifndef POLY_RANGE_PLAN_CUH
#define POLY_RANGE_PLAN_CUH

#include "layouts.cuh"
#include "device_select.cuh"

// The keys of absdiff and reldiff at seg_len[0] (S) places of the input, one drawn at random in each
// of S equal strata (the first S keys at out are absdiff's, the next S reldiff's): a sample that
// predicts where the wanted ranks lie (order_select.plan_ranges).
extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_sample(const Params P) {
    const u64 S = P.seg_len[0];
    KT* out = (KT*)P.out;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x; k < S; k += stride) {
        const u64 lo = k * P.n / S, span = (k + 1) * P.n / S - lo;
        u64 h = (k + 1) * 0x9E3779B97F4A7C15ull;  // a mix of k (splitmix64's finaliser)
        h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
        h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
        h ^= h >> 31;
        const u64 j = lo + (span > 1 ? h % span : 0);
        Vals v;
        element_raw(P, load_raw<POLY_DTA>((const char*)P.a.ptr + offset_of(P.a, j)),
                    load_raw<POLY_DTB>((const char*)P.b.ptr + offset_of(P.b, j)), v);
        out[k] = order_key(v.v[2]);
        out[S + k] = order_key(v.v[3]);
    }
}

// Stream s's RangeTable from its ends' keys and the sample keys below and up to each, as
// predicted_ranges.ranges_from_ends plans it: each rank's span, the overlapping or adjacent spans
// merged, the neighbours with the fewest sample keys between them joined while more than
// POLY_RANGES remain, and the keys of the input the ranges should hold. One thread.
__device__ void plan_table(const Params& P, int s, const PlanAsk& ask, const KT* value, const u32* below,
                           const u32* upto) {
    const int nr = ask.nranks;
    const u32 S = (u32)P.seg_len[0];
    KT slo[POLY_PLAN_RANKS], shi[POLY_PLAN_RANKS];  // each rank's span [lo, max(lo, hi)]
    u32 sbelow[POLY_PLAN_RANKS], supto[POLY_PLAN_RANKS];
    int order[POLY_PLAN_RANKS], range_of[POLY_PLAN_RANKS];
    for (int i = 0; i < nr; ++i) {
        slo[i] = value[2 * i];
        sbelow[i] = below[2 * i];
        const bool up = value[2 * i + 1] >= slo[i];
        shi[i] = up ? value[2 * i + 1] : slo[i];
        supto[i] = up ? upto[2 * i + 1] : upto[2 * i];
        int k = i;  // stable insertion by lo
        while (k > 0 && slo[order[k - 1]] > slo[i]) {
            order[k] = order[k - 1];
            --k;
        }
        order[k] = i;
    }
    KT mlo[POLY_PLAN_RANKS], mhi[POLY_PLAN_RANKS];
    u32 mbelow[POLY_PLAN_RANKS], mupto[POLY_PLAN_RANKS];
    int nm = 0;
    for (int k = 0; k < nr; ++k) {
        const int i = order[k];
        if (nm > 0 && (slo[i] <= mhi[nm - 1] || slo[i] - mhi[nm - 1] == 1)) {
            if (shi[i] > mhi[nm - 1]) {
                mhi[nm - 1] = shi[i];
                mupto[nm - 1] = supto[i];
            }
        } else {
            mlo[nm] = slo[i];
            mbelow[nm] = sbelow[i];
            mhi[nm] = shi[i];
            mupto[nm] = supto[i];
            ++nm;
        }
        range_of[i] = nm - 1;
    }
    while (nm > POLY_RANGES) {
        int best = 0;
        i64 fewest = 0;
        for (int j = 0; j + 1 < nm; ++j) {
            const i64 between = (i64)mbelow[j + 1] - (i64)mupto[j];
            if (j == 0 || between < fewest) {
                best = j;
                fewest = between;
            }
        }
        mhi[best] = mhi[best + 1];
        mupto[best] = mupto[best + 1];
        for (int j = best + 1; j + 1 < nm; ++j) {
            mlo[j] = mlo[j + 1];
            mhi[j] = mhi[j + 1];
            mbelow[j] = mbelow[j + 1];
            mupto[j] = mupto[j + 1];
        }
        for (int i = 0; i < nr; ++i)
            if (range_of[i] > best) --range_of[i];
        --nm;
    }
    u64 inside = 0;
    for (int j = 0; j < nm; ++j) inside += mupto[j] - mbelow[j];
    const u64 expected = (u64)ceil((double)((inside + (u64)nm) * P.n) / (double)S);
    const bool predicted = nr > 0 && expected <= ask.max_expected;
    RangeTable* table = (RangeTable*)P.out;
    table->nranges[s] = predicted ? nm : 0;
    table->expected[s] = expected;
    for (int i = 0; i < POLY_PLAN_RANKS; ++i) table->range_of[s * POLY_PLAN_RANKS + i] = i < nr ? range_of[i] : -1;
    for (int j = 0; j < POLY_RANGES; ++j) {
        const bool used = predicted && j < nm;
        const KT lo = used ? mlo[j] : (KT)0, hi = used ? mhi[j] : (KT)0;
        table->lo[s * POLY_RANGES + j] = lo;
        table->hi[s * POLY_RANGES + j] = hi;
    }
}

// The predicted ranges of each stream (absdiff, reldiff) from its sample (seg_len[0] keys at seg[0],
// absdiff's then reldiff's, as poly_sample writes them) and its PlanAsk (at seg[1]), written to the
// RangeTable at out. POLY_PLAN_BLOCKS blocks per stream (grid 2 x POLY_PLAN_BLOCKS), each a slice
// of the sample, keep their progress in a PlanState per stream (at hist, zeroed before phase 0).
// Phases 0 .. POLY_KEY_BITS / 8 - 1 (plan_phase, one launch each) select the sample keys at the
// asked sorted positions 8 bits at a time: each block counts its slice's next digit of the keys in
// each target's group (targets whose known bits agree share one histogram; a warp's equal digits
// add at once), and the last block to finish descends the targets (warp_descend) and clears the
// histograms. The last phase counts the sample keys below and up to each range end, and its last
// block's first thread plans the table (plan_table).
extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_plan_ranges(const Params P) {
    __shared__ u32 shist[POLY_PLAN_ENDS][256];
    __shared__ SelTarget st[POLY_PLAN_ENDS];
    __shared__ int owner[POLY_PLAN_ENDS];
    __shared__ KT value[POLY_PLAN_ENDS];
    const int s = blockIdx.x / POLY_PLAN_BLOCKS, slice = blockIdx.x % POLY_PLAN_BLOCKS;
    const u32 S = (u32)P.seg_len[0];
    const KT* keys = (const KT*)P.seg[0] + (u64)s * S;
    const PlanAsk& ask = ((const PlanAsk*)P.seg[1])[s];
    PlanState* state = (PlanState*)P.hist + s;
    const int nt = 2 * ask.nranks;  // target 2i: rank i's low end, 2i + 1: its high end
    const int phase = P.plan_phase, passes = POLY_KEY_BITS / 8;
    const u32 first = (u32)((u64)S * slice / POLY_PLAN_BLOCKS), end = (u32)((u64)S * (slice + 1) / POLY_PLAN_BLOCKS);
    const int lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    auto at_of = [&](int t) -> i64 { return (t & 1) ? ask.at_hi[t >> 1] : ask.at_lo[t >> 1]; };
    if (threadIdx.x < nt) st[threadIdx.x] = state->t[threadIdx.x];  // (all zero before phase 0)
    __syncthreads();
    if (phase < passes) {
        const int shift = POLY_KEY_BITS - 8 * (phase + 1), bits = 8 * phase;
        if (threadIdx.x < nt) {
            int o = threadIdx.x;
            for (int u = 0; u < (int)threadIdx.x && o == (int)threadIdx.x; ++u)
                if (st[u].prefix == st[threadIdx.x].prefix) o = u;
            owner[threadIdx.x] = o;
        }
        for (int k = threadIdx.x; k < nt * 256; k += blockDim.x) (&shist[0][0])[k] = 0u;
        __syncthreads();
        for (u32 i0 = first; i0 < end; i0 += blockDim.x) {
            const u32 i = i0 + threadIdx.x;
            const bool valid = i < end;
            const KT key = valid ? keys[i] : (KT)0;
            const u32 d = (u32)(key >> shift) & 255u;
            for (int t = 0; t < nt; ++t) {
                if (owner[t] != t) continue;
                const bool in = valid && (bits == 0 || (u64)(key >> (POLY_KEY_BITS - bits)) == st[t].prefix);
                const unsigned m = __ballot_sync(0xFFFFFFFFu, in);
                if (in) {
                    const unsigned peers = __match_any_sync(m, d);
                    if (lane == __ffs(peers) - 1) atomicAdd(&shist[t][d], (u32)__popc(peers));
                }
            }
        }
        __syncthreads();
        for (int k = threadIdx.x; k < nt * 256; k += blockDim.x) {
            const u32 c = (&shist[0][0])[k];
            if (c) atomicAdd(&state->hist[k / 256][k % 256], (u64)c);
        }
        if (!last_block(&state->done_blocks, POLY_PLAN_BLOCKS)) return;
        for (int t = warp; t < nt; t += warps) {
            SelTarget* target = &state->t[t];
            if (phase == 0 && lane == 0) {
                const i64 at = at_of(t);
                target->prefix = 0;
                target->bits = 0;
                target->rank = (at >= 0 && at < (i64)S) ? (u64)at : 0;
            }
            __syncwarp();
            warp_descend(target, &state->hist[owner[t]][0], 8);
        }
        __syncthreads();
        for (int k = threadIdx.x; k < nt * 256; k += blockDim.x) state->hist[k / 256][k % 256] = 0;
        if (threadIdx.x == 0) state->done_blocks = 0;
        return;
    }
    if (threadIdx.x < nt) {  // an open end: key 1 below (key 0 is a NaN's, never gathered), the top key above
        const i64 at = at_of(threadIdx.x);
        value[threadIdx.x] = (at >= 0 && at < (i64)S) ? (KT)st[threadIdx.x].prefix
                                                       : ((threadIdx.x & 1) ? ~(KT)0 : (KT)1);
    }
    __syncthreads();
    u32 lt[POLY_PLAN_ENDS], le[POLY_PLAN_ENDS];
#pragma unroll
    for (int t = 0; t < POLY_PLAN_ENDS; ++t) lt[t] = le[t] = 0;
    for (u32 i = first + threadIdx.x; i < end; i += blockDim.x) {
        const KT key = keys[i];
#pragma unroll
        for (int t = 0; t < POLY_PLAN_ENDS; ++t) {
            if (t < nt) {
                lt[t] += key < value[t];
                le[t] += key <= value[t];
            }
        }
    }
#pragma unroll
    for (int t = 0; t < POLY_PLAN_ENDS; ++t) {
        if (t >= nt) break;
        u32 x = lt[t], y = le[t];
        for (int delta = 16; delta > 0; delta >>= 1) {
            x += __shfl_down_sync(0xFFFFFFFFu, x, delta);
            y += __shfl_down_sync(0xFFFFFFFFu, y, delta);
        }
        if (lane == 0) {
            atomicAdd(&state->below[t], x);
            atomicAdd(&state->upto[t], y);
        }
    }
    if (!last_block(&state->done_blocks, POLY_PLAN_BLOCKS) || threadIdx.x != 0) return;
    u32 below[POLY_PLAN_ENDS], upto[POLY_PLAN_ENDS];
    for (int t = 0; t < nt; ++t) {
        below[t] = __ldcg(&state->below[t]);
        upto[t] = __ldcg(&state->upto[t]);
    }
    plan_table(P, s, ask, value, below, upto);
}

#endif  // POLY_RANGE_PLAN_CUH
