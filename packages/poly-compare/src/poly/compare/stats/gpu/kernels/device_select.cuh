// The ranks of a mid-size input, selected on the device (poly_select_first, poly_select_input).
#ifndef POLY_DEVICE_SELECT_CUH
#define POLY_DEVICE_SELECT_CUH

#include "layouts.cuh"
#include "streaming.cuh"

// -- the ranks of a mid-size input, selected on the device ------------------------------------------
// The wanted ranks of absdiff and reldiff (``SelState``, at Params.sel) are narrowed with no host
// round trip: poly_select_first descends them by the statistics pass's first digit, then each
// poly_select_input pass counts the next ``sel_dbits`` key bits of the elements in each target's
// group over the input, and the last of its blocks to finish descends every target by the merged
// histograms (at Params.hist, ntargets x 2^sel_dbits u64, zero before the first pass) and clears
// them for the next pass, launched right behind it. With Params.sel_fine, a pass also counts the
// following sel_dbits bits of each counted key in global memory (a group's 2^(2 sel_dbits) counts,
// zero before the pass), and its last block descends both digits: one pass where two were.
// Targets of one group (a rank and its neighbour) share the first one's histogram. A block counts in shared memory for
// ceil(ntargets / POLY_SEL_PER_SLOT) groups (half the targets: a rank and its neighbour nearly always share
// one), so that three blocks fit an SM with 16 targets where two did; the groups beyond those
// count straight into the global histogram (correct, slower, and rare).

// Block-wide (every thread calls it, once its block's share of a pass is written to global memory):
// whether this block is the last of the pass's `blocks` to get here, counted at `done`. The last
// block sees every other block's writes (it descends the targets by the merged histograms).
__device__ __forceinline__ bool last_block(u32* done, u32 blocks) {
    __shared__ int last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(done, 1u) == blocks - 1;
    __syncthreads();
    if (!last) return false;
    __threadfence();
    return true;
}

// Warp-wide (the whole warp calls it): descends target `t` (a SelTarget or a RangeTarget: its
// prefix, rank and bits) by histogram `h` of its next `dbits` key bits: the digit whose running
// count passes its rank joins its prefix. Returns the histogram's total (every lane). `h` is read from L2
// (other blocks' atomics wrote it). Each lane owns a run of bins and loads POLY_DESCEND_LOADS of
// them at once, two bins a load where aligned: one round trip to L2 per batch, not per bin (a
// 4096-bin descend took ~30 us), and half the requests (the lanes' runs share no cache line).
#define POLY_DESCEND_LOADS 16
template <typename C>
__device__ __forceinline__ void descend_load(u64 (&c)[POLY_DESCEND_LOADS], const C* h, int from, int end) {
    if (sizeof(C) == 8 && from + POLY_DESCEND_LOADS <= end && ((size_t)(h + from) & 15) == 0) {
        const ulonglong2* v = (const ulonglong2*)(h + from);
#pragma unroll
        for (int j = 0; j < POLY_DESCEND_LOADS / 2; ++j) {
            const ulonglong2 x = __ldcg(v + j);
            c[2 * j] = x.x;
            c[2 * j + 1] = x.y;
        }
        return;
    }
    if (sizeof(C) == 4 && from + POLY_DESCEND_LOADS <= end && ((size_t)(h + from) & 15) == 0) {
        const uint4* v = (const uint4*)(h + from);
#pragma unroll
        for (int j = 0; j < POLY_DESCEND_LOADS / 4; ++j) {
            const uint4 x = __ldcg(v + j);
            c[4 * j] = x.x;
            c[4 * j + 1] = x.y;
            c[4 * j + 2] = x.z;
            c[4 * j + 3] = x.w;
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < POLY_DESCEND_LOADS; ++j) c[j] = from + j < end ? (u64)__ldcg(h + from + j) : 0;
}

template <typename T, typename C>
__device__ __noinline__ u64 warp_descend(T* t, const C* h, int dbits) {
    const int lane = threadIdx.x & 31;
    const int bins = 1 << dbits;
    const int per = (bins + 31) / 32;  // bins a lane scans
    const int first = lane * per, end = min(first + per, bins);
    u64 c[POLY_DESCEND_LOADS];
    u64 sum = 0;
    for (int k = first; k < end; k += POLY_DESCEND_LOADS) {
        descend_load(c, h, k, end);
#pragma unroll
        for (int j = 0; j < POLY_DESCEND_LOADS; ++j) sum += c[j];
    }
    u64 incl = sum;
    for (int d = 1; d < 32; d <<= 1) {
        const u64 o = __shfl_up_sync(0xFFFFFFFFu, incl, d);
        if (lane >= d) incl += o;
    }
    const u64 total = __shfl_sync(0xFFFFFFFFu, incl, 31);
    u64 r = t->rank;
    if (total == 0) return 0;  // cannot happen: the rank lies among the group's keys
    if (r >= total) r = total - 1;
    const unsigned owner = __ballot_sync(0xFFFFFFFFu, incl - sum <= r && r < incl);
    if (lane != __ffs(owner) - 1) return total;
    u64 below = incl - sum;
    for (int k = first; k < end; k += POLY_DESCEND_LOADS) {
        descend_load(c, h, k, end);
#pragma unroll
        for (int j = 0; j < POLY_DESCEND_LOADS; ++j) {
            if (below + c[j] > r) {  // (bins past the end load 0: never taken)
                t->prefix = (t->prefix << dbits) | (u64)(k + j);
                t->rank = r - below;
                t->bits += dbits;
                return total;
            }
            below += c[j];
        }
    }
    return total;
}

// The first descend, right behind the statistics pass: every target (its prefix empty) by the
// pass's first-digit histogram of its stream (at Params.hist: absdiff's, then reldiff's). Launched
// with a block per target, of which one warp works: a descend's loads are bound by its SM's
// requests to L2, so the targets are spread over as many SMs. A stream whose elements all hold
// one value (the merged record at Params.out: its minimum's key is its maximum's, no NaN; two
// equal outputs give it) has every rank's key from the record, and no pass counts it.
extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_select_first(const Params P) {
    SelState* S = (SelState*)P.sel;
    const int t = blockIdx.x;
    if (threadIdx.x >= 32 || t >= S->ntargets) return;
    SelTarget* target = &S->t[t];
    if (target->stream < 2 || target->stream > 3 || target->bits != 0) return;
    const Acc& s = ((const Part*)P.out)->s[target->stream];
    const KT lo = order_key((VT)s.mn);
    if (s.nnan == 0 && lo == order_key((VT)s.mx)) {
        if (threadIdx.x == 0) {
            target->prefix = lo;
            target->rank = 0;
            target->bits = POLY_KEY_BITS;
        }
        return;
    }
    warp_descend(target, (const u64*)P.hist + (u64)(target->stream - 2) * POLY_FIRST_BINS, POLY_FIRST_BITS);
}

// dynamic shared memory: the ring, then ceil(ntargets / POLY_SEL_PER_SLOT) x 2^sel_dbits counters
extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_select_input(const Params P) {
    __shared__ SelTarget st[POLY_SEL_TARGETS];
    __shared__ int owner[POLY_SEL_TARGETS];  // the first target of the same group: whose histogram counts
    __shared__ int slot[POLY_SEL_TARGETS];   // a counting target's shared histogram (-1: it counts in global memory)
    __shared__ int slot_owner[POLY_SEL_TARGETS];  // the target whose group each shared histogram counts
    __shared__ int nslots;  // the shared histograms in use
    __shared__ int counting;  // whether any target counts this pass (none: every key is known)
    __shared__ int direct;  // whether every counting group is a whole table entry with a shared histogram
    // per stream and value of a key's top POLY_TABLE_BITS bits (all known: the first digit came
    // from the statistics pass), the first counting target whose prefix starts so, then the next
    __shared__ signed char head[2 << POLY_TABLE_BITS];
    __shared__ signed char next[POLY_SEL_TARGETS];
    static_assert(POLY_FIRST_BITS >= POLY_TABLE_BITS, "the table needs the top bits of every prefix");
    SelState* S = (SelState*)P.sel;
    const int nt = S->ntargets, dbits = P.sel_dbits, bins = 1 << dbits, slots = (nt + POLY_SEL_PER_SLOT - 1) / POLY_SEL_PER_SLOT;
    uint4* ring = smem;
    u32* shist = (u32*)(smem + POLY_RING_BYTES / sizeof(uint4));
    u64* hist = (u64*)P.hist;
    u32* fine = (u32*)P.sel_fine;  // (a pass that counts two digits: the second in global memory)
    const int span = fine != nullptr ? 2 * dbits : dbits;  // key bits this pass finds
    for (int k = threadIdx.x; k < slots * bins; k += blockDim.x) shist[k] = 0;
    for (int k = threadIdx.x; k < (2 << POLY_TABLE_BITS); k += blockDim.x) head[k] = -1;
    if (threadIdx.x < nt) st[threadIdx.x] = S->t[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        int used = 0, owners = 0, whole = 1;
        for (int t = 0; t < nt; ++t) {
            slot[t] = -1;
            // (every target has its first digit and room for this one: the statistics pass counts
            // every element; a target that had not is left as it is, its key reported unknown)
            if (st[t].bits < POLY_TABLE_BITS || st[t].bits + span > POLY_KEY_BITS || st[t].stream < 2 || st[t].stream > 3) {
                owner[t] = -1;
                continue;
            }
            int o = t;
            for (int u = 0; u < t && o == t; ++u)
                if (owner[u] >= 0 && st[u].stream == st[t].stream && st[u].bits == st[t].bits && st[u].prefix == st[t].prefix) o = u;
            owner[t] = o;
            ++owners;
            if (o == t) {
                if (used < slots) {
                    slot_owner[used] = t;
                    slot[t] = used++;
                }
                const int at = ((st[t].stream - 2) << POLY_TABLE_BITS) + (int)(st[t].prefix >> (st[t].bits - POLY_TABLE_BITS));
                next[t] = head[at];
                head[at] = (signed char)t;
                whole &= st[t].bits == POLY_TABLE_BITS && slot[t] >= 0;
            }
        }
        nslots = used;
        counting = owners > 0;
        direct = whole;
    }
    __syncthreads();
    if (!counting) return;  // (the same in every block: no block reads the input, none merges)
    auto count_fine = [&](int t, KT key, int bits) {  // the next 2 dbits bits, in the group's global counts
        if (fine != nullptr) atomicAdd(&fine[((u64)t << (2 * dbits)) + key_digit(key, bits, 2 * dbits)], 1u);
    };
    auto one = [&](u64, const Vals& v, bool) {
#pragma unroll
        for (int s = 0; s < 2; ++s) {
            const KT key = order_key(v.v[2 + s]);
            // a stream's groups are disjoint: one holds the key at most
            for (int t = head[(s << POLY_TABLE_BITS) + (int)(key >> (POLY_KEY_BITS - POLY_TABLE_BITS))]; t >= 0; t = next[t]) {
                const int bits = st[t].bits;
                if ((u64)(key >> (POLY_KEY_BITS - bits)) == st[t].prefix) {
                    const u32 digit = key_digit(key, bits, dbits);
                    if (slot[t] >= 0) atomicAdd(&shist[slot[t] * bins + digit], 1u);
                    else atomicAdd(&hist[(u64)t * bins + digit], (u64)1);
                    count_fine(t, key, bits);
                    break;
                }
            }
        }
    };
    // The first pass behind the statistics (every prefix of POLY_TABLE_BITS bits, as a float32
    // key's single pass has it): a table entry is its group, so that a key's counts need no
    // prefix test and no walk; the lanes of a warp that hold such a key (a few in a hundred, yet
    // in most warps) ran the general path's two dozen instructions for each of them, and the pass
    // was bound by instruction issue.
    auto whole_entry = [&](u64, const Vals& v, bool) {
#pragma unroll
        for (int s = 0; s < 2; ++s) {
            const KT key = order_key(v.v[2 + s]);
            const int t = head[(s << POLY_TABLE_BITS) + (int)(key >> (POLY_KEY_BITS - POLY_TABLE_BITS))];
            if (t >= 0) {
                atomicAdd(&shist[slot[t] * bins + key_digit(key, POLY_TABLE_BITS, dbits)], 1u);
                count_fine(t, key, POLY_TABLE_BITS);
            }
        }
    };
    if (direct) for_each_value(P, ring, whole_entry);
    else for_each_value(P, ring, one);
    __syncthreads();
    for (int k = threadIdx.x; k < slots * bins; k += blockDim.x) {
        const u32 c = shist[k];
        if (c && k / bins < nslots) atomicAdd(&hist[(u64)slot_owner[k / bins] * bins + (k & (bins - 1))], (u64)c);
    }
    if (!last_block(&S->done_blocks, gridDim.x)) return;
    const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
    for (int t = warp; t < nt; t += warps) {
        if (owner[t] < 0) continue;
        warp_descend(&S->t[t], hist + (u64)owner[t] * bins, dbits);
        if (fine == nullptr) continue;
        __syncwarp();  // (one lane wrote the target)
        // the second digit, among the group's keys whose first digit is the target's
        const u64 first = S->t[t].prefix & (u64)(bins - 1);
        warp_descend(&S->t[t], fine + ((u64)owner[t] << (2 * dbits)) + (first << dbits), dbits);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < nt * bins; k += blockDim.x) hist[k] = 0;
    if (threadIdx.x == 0) S->done_blocks = 0;
}

#endif  // POLY_DEVICE_SELECT_CUH
