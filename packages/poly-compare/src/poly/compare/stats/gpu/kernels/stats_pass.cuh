// The statistics pass (poly_stats, poly_stats_ranges) and the merge of its per-block records
// (poly_merge_parts).
#ifndef POLY_STATS_PASS_CUH
#define POLY_STATS_PASS_CUH

#include "layouts.cuh"
#include "streaming.cuh"

// -- the statistics pass ----------------------------------------------------------------------------
// Per-thread running statistics of one stream: sums shifted by the stream's first value (when
// finite; the element count is shared by the four streams). NaN and Inf counts and the first
// NaN's index are rare events, kept per block in shared memory (``Tallies``).
// Few registers on purpose (spilled or recomputed values cost more than the arithmetic): the
// extrema's positions are the thread's own element ordinals (32 bits; ``global_index`` maps
// them back at the end) and, for float32 values, the sum of squares around zero follows from
// those around the shift (x^2 summed = s2 + c (2 s1 + n c), as the CPU engine derives it; float32
// values in float64 leave no cancellation beyond a few units of float64 rounding).
#define POLY_NONE 0xFFFFFFFFu
#if POLY_F32
#define POLY_DIRECT_SQ 0
#else
#define POLY_DIRECT_SQ 1
#endif
struct Stream {
    double c, s1, s2, ab;
#if POLY_DIRECT_SQ
    double sq;
#endif
    VT mn, mx;
    u32 imn, imx;
};

struct Tallies {
    u32 nan[4], inf[4];
    u64 first_nan[4];
};

__device__ __forceinline__ void stream_init(Stream& r) {
    r.c = 0; r.s1 = 0; r.s2 = 0; r.ab = 0;
#if POLY_DIRECT_SQ
    r.sq = 0;
#endif
    r.mn = POLY_INF; r.mx = -POLY_INF;
    r.imn = POLY_NONE; r.imx = POLY_NONE;
}

// Sums of one value into a stream (SQ: a stream whose sum of squares around zero is wanted).
template <bool SQ, bool AB>
__device__ __forceinline__ void sum_value(Stream& r, double x) {
    const double xs = __dsub_rn(x, r.c);
    r.s1 = __dadd_rn(r.s1, xs);
    r.s2 = __fma_rn(xs, xs, r.s2);
#if POLY_DIRECT_SQ
    if (SQ) r.sq = __fma_rn(x, x, r.sq);
#endif
    if (AB) r.ab = __dadd_rn(r.ab, fabs(x));
}

// One element of any value: `i` its index, `ord` its ordinal among this thread's elements.
template <int K, bool SQ, bool AB>
__device__ __forceinline__ void feed_one(Stream& r, VT xv, u64 i, u32 ord, Tallies& t) {
    const double x = (double)xv;
    if (ord == 0) r.c = isfinite(xv) ? x : 0.0;
    sum_value<SQ, AB>(r, x);
    if (isnan(xv)) {
        atomicAdd(&t.nan[K], 1u);
        atomicMin(&t.first_nan[K], i);
    } else {
        if (isinf(xv)) atomicAdd(&t.inf[K], 1u);
        if (r.imn == POLY_NONE || xv < r.mn) { r.mn = xv; r.imn = ord; }
        if (r.imx == POLY_NONE || xv > r.mx) { r.mx = xv; r.imx = ord; }
    }
}

// Sub-chunks of at most four elements keep few values live.
#define POLY_SUB (POLY_ELEMS < 4 ? POLY_ELEMS : 4)


// An extremum's ordinal with this bit names the first element of the sub-chunk holding it, not
// the element itself: the finite path records a sub-chunk without branching (a branch per stream
// and extremum, taken by some lane of a warp at a fair share of the chunks, cost more than the
// arithmetic), and resolve_extremum finds the element once the block's records are merged.
#define POLY_IN_SUBCHUNK 0x80000000u

// The extrema of stream K over a sub-chunk of finite values (its first element's ordinal ord0):
// a sub-chunk holding a new extremum is recorded; the first of equal values wins, as a
// sequential scan would have it (an earlier sub-chunk keeps an equal value, and
// resolve_extremum takes the first equal element of a sub-chunk).
template <int K>
__device__ __forceinline__ void extrema_finite(Stream& r, const Vals* v, u32 ord0) {
    VT cmn = v[0].v[K], cmx = v[0].v[K];
#pragma unroll
    for (int e = 1; e < POLY_SUB; ++e) {
        cmn = fmin(cmn, v[e].v[K]);
        cmx = fmax(cmx, v[e].v[K]);
    }
    const bool lo = cmn < r.mn, hi = cmx > r.mx;
    r.mn = lo ? cmn : r.mn;
    r.imn = lo ? (ord0 | POLY_IN_SUBCHUNK) : r.imn;
    r.mx = hi ? cmx : r.mx;
    r.imx = hi ? (ord0 | POLY_IN_SUBCHUNK) : r.imx;
}

// Whether a sub-chunk's values (computed without `infinities_compare_equal`) are all finite: its
// reldiffs summed are NaN or infinite when any of its a, b or absdiff is not finite (a NaN
// propagates into absdiff and reldiff; an infinite a alone makes absdiff infinite and reldiff
// infinite, an infinite b makes reldiff Inf / Inf, and equal infinities give NaN without that
// rule), or when a reldiff is infinite by itself or their sum overflows, which only sends the
// sub-chunk down the element-wise path, where the values are computed again with every rule. A
// zero absdiff is two equal finite values (its reldiff is set to zero without the division).
__device__ __forceinline__ bool sub_chunk_finite(const Vals* v) {
    VT s = v[0].v[3];
#pragma unroll
    for (int e = 1; e < POLY_SUB; ++e) s += v[e].v[3];
    return s < POLY_INF;
}

// fails += (absdiff > atol and reldiff > rtol): two comparisons and one predicated add (written
// in the compilers' own terms, which otherwise add 1 and select back: a fourth instruction an
// element of the statistics pass, bound by instruction issue).
__device__ __forceinline__ void count_fail(u32& fails, VT d, VT r, VT atol, VT rtol) {
#if POLY_F32
    asm("{\n\t.reg .pred p, q;\n\tsetp.gt.f32 p, %1, %2;\n\tsetp.gt.and.f32 q, %3, %4, p;\n\t@q add.u32 %0, %0, 1;\n\t}"
        : "+r"(fails) : "f"(d), "f"(atol), "f"(r), "f"(rtol));
#else
    asm("{\n\t.reg .pred p, q;\n\tsetp.gt.f64 p, %1, %2;\n\tsetp.gt.and.f64 q, %3, %4, p;\n\t@q add.u32 %0, %0, 1;\n\t}"
        : "+r"(fails) : "d"(d), "d"(atol), "d"(r), "d"(rtol));
#endif
}

// Where this thread's elements lie (for_each_pair's order: its chunks, then its elements past the
// last whole chunk), worked out once a thread: its eight extrema's ordinals are mapped through it.
struct Ordinals {
    u64 first, stride;  // the thread's first chunk (or element) and the grid's stride
    u64 start, mine;    // the first element past the whole chunks, and this thread's chunks
};

__device__ __forceinline__ Ordinals thread_ordinals(const Params& P) {
    Ordinals o;
    o.stride = (u64)gridDim.x * blockDim.x;
    o.first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    o.start = 0;
    o.mine = 0;
    if (POLY_CAN_CHUNK && P.chunked) {
        const u64 nchunks = P.n / POLY_ELEMS;
        o.start = nchunks * POLY_ELEMS;
        o.mine = strided_count(o.first, nchunks, o.stride);
    }
    return o;
}

// The index of this thread's element of ordinal `ord`.
__device__ __forceinline__ i64 global_index(const Ordinals& o, u32 ord) {
    if (ord == POLY_NONE) return -1;
    if ((u64)ord < o.mine * POLY_ELEMS)
        return (i64)((o.first + (u64)(ord / POLY_ELEMS) * o.stride) * POLY_ELEMS + ord % POLY_ELEMS);
    return (i64)(o.start + o.first + ((u64)ord - o.mine * POLY_ELEMS) * o.stride);
}

// An extremum recorded by its sub-chunk travels as the sub-chunk's first index, marked in the
// record's `pad` (POLY_MN_SUB, POLY_MX_SUB), through the warps' and the block's merges: sub-chunks
// never overlap, so the first index of a sub-chunk orders it among other candidates as its element
// would. Only the block's merged extrema are resolved (the winning sub-chunk read again, the first
// element equal to the value taken, its own value kept: the sign of a zero extremum is the
// element's), by eight threads, one an extremum. Resolved by every thread once the pass was over,
// the sub-chunks' reads had cost a third of the pass over 16.7M float32 pairs (35 of 113 us on
// an H200); resolved by the merge kernel, only the record's eight, that kernel took 7 us longer
// (its code runs once, fetched cold), against 3 us more for the pass this way.
#define POLY_MN_SUB 1
#define POLY_MX_SUB 2
__device__ __forceinline__ void resolve_extremum(const Params& P, int k, double& value, i64& index) {
    const VT want = (VT)value;
    u64 ra[POLY_SUB], rb[POLY_SUB];
#pragma unroll
    for (int e = 0; e < POLY_SUB; ++e) {  // all loads in flight at once: one round trip, not one an element
        const u64 g = (u64)index + (u64)e;
        ra[e] = load_raw<POLY_DTA>((const char*)P.a.ptr + offset_of(P.a, g));
        rb[e] = load_raw<POLY_DTB>((const char*)P.b.ptr + offset_of(P.b, g));
    }
#pragma unroll 1
    for (int e = 0; e < POLY_SUB; ++e) {  // (one copy of the arithmetic: it runs once a block, and its code is fetched cold)
        Vals v;
        element_raw<false>(P, ra[e], rb[e], v);
        if (v.v[k] == want) {
            value = (double)v.v[k];
            index += e;
            return;
        }
    }
}  // (the sub-chunk holds the value: the loop returns)

// One extremum of a block's merged record of stream k resolved (see above): the minimum (which 0) or
// the maximum (which 1).
__device__ __forceinline__ void resolve_extrema(const Params& P, Acc& a, int k, int which) {
    if (which == 0 && (a.pad & POLY_MN_SUB)) resolve_extremum(P, k, a.mn, a.imn);
    if (which == 1 && (a.pad & POLY_MX_SUB)) resolve_extremum(P, k, a.mx, a.imx);
}

// A thread's extremum ordinal as a record's index (its sub-chunk's first, marked by `flag`).
__device__ __forceinline__ i64 extremum_index(const Ordinals& o, u32 ord, i64 flag, i64& pad) {
    if (ord == POLY_NONE) return -1;
    if (ord & POLY_IN_SUBCHUNK) pad |= flag;
    return global_index(o, ord & ~POLY_IN_SUBCHUNK);
}

// `ab` is false for absdiff and reldiff: their mean |x| is their mean, as the CPU engine has it.
// `sq`: whether the stream's sum of squares is wanted.
__device__ __forceinline__ void stream_finish(const Ordinals& o, const Stream& r, double cnt, bool ab, bool sq, Acc& a) {
    a.n = cnt;
    if (cnt > 0) {
        const double c = r.c;
        a.mean = c + r.s1 / cnt;
        const double m2 = r.s2 - r.s1 * r.s1 / cnt;
        a.m2 = m2 > 0 ? m2 : 0.0;
        a.sum = c * cnt + r.s1;  // used only where NaN or Inf make it NaN or +-Inf
    } else {
        a.mean = 0; a.m2 = 0; a.sum = 0;
    }
#if POLY_DIRECT_SQ
    a.sq = r.sq;
#else
    // Non-finite s2 (NaN or Inf among the values) is the sum of squares' own value.
    const double dsq = r.s2 + r.c * (2.0 * r.s1 + cnt * r.c);
    a.sq = !sq ? 0.0 : !isfinite(r.s2) ? r.s2 : (dsq > 0 ? dsq : 0.0);
#endif
    a.ab = ab ? r.ab : a.sum;
    a.mn = (double)r.mn; a.mx = (double)r.mx;
    a.pad = 0;
    a.imn = extremum_index(o, r.imn, POLY_MN_SUB, a.pad);
    a.imx = extremum_index(o, r.imx, POLY_MX_SUB, a.pad);
    a.inan = -1; a.nnan = 0; a.ninf = 0;  // the block's tallies are added after the merge (warps_to_part's threads)
}

__device__ __forceinline__ void acc_merge(Acc& r, const Acc& o) {
    if (o.n > 0) {
        if (r.n == 0) {
            r.n = o.n; r.mean = o.mean; r.m2 = o.m2;
        } else {
            const double tot = r.n + o.n;
            const double delta = o.mean - r.mean;
            // Equal counts (most merges of a pass's shares): the weights are halves, exactly what
            // the divisions give while n * n is exact, without the two float64 divisions.
            const bool halves = r.n == o.n && r.n < 67108864.0;
            r.mean += delta * (halves ? 0.5 : o.n / tot);
            r.m2 += o.m2 + delta * delta * (halves ? r.n * 0.5 : r.n * o.n / tot);
            r.n = tot;
        }
    }
    r.sum += o.sum; r.sq += o.sq; r.ab += o.ab;
    if (o.imn >= 0 && (r.imn < 0 || o.mn < r.mn || (o.mn == r.mn && o.imn < r.imn))) {
        r.mn = o.mn; r.imn = o.imn; r.pad = (r.pad & ~(i64)POLY_MN_SUB) | (o.pad & POLY_MN_SUB);
    }
    if (o.imx >= 0 && (r.imx < 0 || o.mx > r.mx || (o.mx == r.mx && o.imx < r.imx))) {
        r.mx = o.mx; r.imx = o.imx; r.pad = (r.pad & ~(i64)POLY_MX_SUB) | (o.pad & POLY_MX_SUB);
    }
    if (o.inan >= 0 && (r.inan < 0 || o.inan < r.inan)) r.inan = o.inan;
    r.nnan += o.nnan; r.ninf += o.ninf;
}

// Record `a` of the lane `delta` above (TALLIES: with the NaN and Inf tallies, which the threads'
// own records leave to the block's and so need not travel).
template <bool TALLIES = true>
__device__ __forceinline__ Acc acc_shfl(const Acc& a, int delta) {
    const unsigned m = 0xFFFFFFFFu;
    Acc o;
    o.n = __shfl_down_sync(m, a.n, delta); o.mean = __shfl_down_sync(m, a.mean, delta);
    o.m2 = __shfl_down_sync(m, a.m2, delta); o.sum = __shfl_down_sync(m, a.sum, delta);
    o.sq = __shfl_down_sync(m, a.sq, delta); o.ab = __shfl_down_sync(m, a.ab, delta);
    o.mn = __shfl_down_sync(m, a.mn, delta); o.mx = __shfl_down_sync(m, a.mx, delta);
    o.imn = __shfl_down_sync(m, a.imn, delta); o.imx = __shfl_down_sync(m, a.imx, delta);
    if (TALLIES) {
        o.inan = __shfl_down_sync(m, a.inan, delta);
        o.nnan = __shfl_down_sync(m, a.nnan, delta); o.ninf = __shfl_down_sync(m, a.ninf, delta);
    } else {
        o.inan = -1; o.nnan = 0; o.ninf = 0;
    }
    o.pad = __shfl_down_sync(m, a.pad, delta);
    return o;
}

// The merge of a block's warp shares (the first `rows` rows of the four streams; the dot product
// and the mismatch count of every warp) into the Part at `out`: thread k < 4 merges stream k,
// thread 4 the rest (called by every thread; the others return at once). Four threads, not one:
// a block's tail is this serial chain.
__device__ __forceinline__ void warps_to_part(Part* out, const Acc (*warp_acc)[4], int rows, const double* warp_dot,
                                              const u64* warp_fails) {
    const int k = threadIdx.x;
    if (k < 4) {
        Acc t = warp_acc[0][k];
        for (int w = 1; w < rows; ++w) acc_merge(t, warp_acc[w][k]);
        out->s[k] = t;
    } else if (k == 4) {
        double d = 0;
        u64 f = 0;
        for (int w = 0; w < POLY_THREADS / 32; ++w) { d += warp_dot[w]; f += warp_fails[w]; }
        out->dot = d;
        out->fails = f;
    }
}

// The counts of keys below each predicted range, per thread: for float32 keys and four ranges a stream,
// two to a register (range 2h in the low half of below[2 S + h], range 2h + 1 in the high half), so
// that the pass with the ranges holds its counts without spilling them (the eight counts of the two
// streams in eight registers went to the stack at the 128-register cap). A thread counts fewer than
// 2^16 keys (order_select.plan_ranges predicts no ranges for an input that would give it more), so
// the halves never carry into each other.
#if POLY_F32 && POLY_RANGES == 4
#define POLY_PACKED_BELOW 1
#else
#define POLY_PACKED_BELOW 0
#endif

// This thread's count of keys below range j (stream j / POLY_RANGES, range j % POLY_RANGES).
__device__ __forceinline__ u32 below_count(const u32* below, int j) {
#if POLY_PACKED_BELOW
    return (below[j >> 1] >> (16 * (j & 1))) & 0xFFFFu;
#else
    return below[j];
#endif
}

// Key `key` of stream S against the stream's predicted ranges (poly_plan): counts the key below each
// range it is under (below_count) and says whether it lies in a range (lo <= key <= hi, unsigned).
// Float32 keys take one block of PTX, four instructions a range: d = key - lo; the key is below lo
// exactly when d wrapped, i.e. d > key (a predicated add into the range's half register); and d
// compared with the range's width, chained on one predicate. The compilers' own code for the same
// expressions took seven (a compare, an add, a select back and a move for the count; a subtraction
// and a compare for the test), and the eight counts in their own registers spilled.
//
// With POLY_PACKED_BELOW (float32), `key` is the difference's own bits: float32 differences are never
// negative (|a - b|, and |a - b| / |b'| with |b'| > 0, their NaN included: fabsf clears its sign and
// a division gives the positive canonical NaN), so a key is those bits with the top bit set, and the
// bits are tested against bounds moved down by 2^31 (the same differences d; the two instructions of
// each key's order_key saved). The caller sets the top bit where it stores a key. A range's lo below
// 2^31 (a range open below) is taken as 2^31, where the keys start: moved down, it would have wrapped
// and counted every key as below it (the first version did; its ranks then looked outside their ranges
// and were gathered, exact but slower). A stream's unused ranges count every key as below them;
// nothing reads those counts.
template <int S>
__device__ __forceinline__ bool key_in_ranges(KT key, u32* below) {
    KT lo[POLY_RANGES], width[POLY_RANGES];
#pragma unroll
    for (int j = 0; j < POLY_RANGES; ++j) {
        const KT rlo = (KT)poly_plan.lo[S * POLY_RANGES + j], rhi = (KT)poly_plan.hi[S * POLY_RANGES + j];
#if POLY_PACKED_BELOW
        // (the range's part among the keys of non-negative values, 2^31 and up: a range open below
        // has lo 0; one that holds none of them, as an unused range, lo = hi = 0, gets a lo that no
        // bits reach and no width, so that no key lies in it)
        const KT from = rlo > (KT)0x80000000u ? rlo : (KT)0x80000000u;
        lo[j] = rhi >= from ? (KT)(from - 0x80000000u) : (KT)0xFFFFFFFFu;
        width[j] = rhi >= from ? (KT)(rhi - from) : (KT)0;
#else
        lo[j] = rlo;
        width[j] = (KT)(rhi - rlo);
#endif
    }
#if POLY_PACKED_BELOW
    u32 in;
    asm("{\n\t.reg .u32 d0, d1, d2, d3;\n\t.reg .pred p, q;\n\t"
        "sub.u32 d0, %3, %4;\n\tsetp.gt.u32 q, d0, %3;\n\t@q add.u32 %1, %1, 1;\n\t"
        "sub.u32 d1, %3, %5;\n\tsetp.gt.u32 q, d1, %3;\n\t@q add.u32 %1, %1, 65536;\n\t"
        "sub.u32 d2, %3, %6;\n\tsetp.gt.u32 q, d2, %3;\n\t@q add.u32 %2, %2, 1;\n\t"
        "sub.u32 d3, %3, %7;\n\tsetp.gt.u32 q, d3, %3;\n\t@q add.u32 %2, %2, 65536;\n\t"
        "setp.le.u32 p, d0, %8;\n\tsetp.le.or.u32 p, d1, %9, p;\n\t"
        "setp.le.or.u32 p, d2, %10, p;\n\tsetp.le.or.u32 p, d3, %11, p;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(in), "+r"(below[2 * S]), "+r"(below[2 * S + 1])
        : "r"(key), "r"(lo[0]), "r"(lo[1]), "r"(lo[2]), "r"(lo[3]),
          "r"(width[0]), "r"(width[1]), "r"(width[2]), "r"(width[3]));
    return in != 0;
#else
    bool in = false;
#pragma unroll
    for (int j = 0; j < POLY_RANGES; ++j) {
        below[S * POLY_RANGES + j] += key < lo[j];
        in |= (KT)(key - lo[j]) <= width[j];
    }
    return in;
#endif
}

// dynamic shared memory: the ring (POLY_STAGES x 2 x POLY_THREADS x 16 bytes), then 2 x POLY_FIRST_BINS counters.
// RANGES: the variant that gathers the predicted ranges' keys (poly_stats_ranges), compiled apart so
// that the plain pass keeps its registers.
template <bool RANGES>
__device__ __forceinline__ void stats_pass(const Params& P) {
    uint4* ring = smem;
    u32* hist = (u32*)(smem + POLY_RING_BYTES / sizeof(uint4));
    __shared__ Acc warp_acc[POLY_THREADS / 32][4];
    __shared__ double warp_dot[POLY_THREADS / 32];
    __shared__ u64 warp_fails[POLY_THREADS / 32];
    __shared__ Tallies tallies;
    __shared__ u64 range_counts[2 * POLY_RANGES + 2];  // below each range, then each stream's largest fill
    const bool with_hist = P.hist != 0;
    const bool with_ranges = RANGES;
    if (threadIdx.x < 2 * POLY_RANGES + 2) range_counts[threadIdx.x] = 0;
    if (with_hist)
        for (int k = threadIdx.x; k < 2 * POLY_FIRST_BINS; k += blockDim.x) hist[k] = 0;
    if (threadIdx.x < 4) {
        tallies.nan[threadIdx.x] = 0;
        tallies.inf[threadIdx.x] = 0;
        tallies.first_nan[threadIdx.x] = ~0ull;
    }
    __syncthreads();
    Stream r[4];
    for (int k = 0; k < 4; ++k) stream_init(r[k]);
    u32 cnt = 0;  // this thread's elements so far: the next one's ordinal
    u32 fails = 0;  // per thread: at most its share of the elements
    double dot = 0;
    const VT atol = (VT)P.atol, rtol = (VT)P.rtol;
    u32 below[2 * POLY_RANGES];  // this thread's keys below each range
    u32 rfill[2] = {0, 0};  // and within one, per stream
#pragma unroll
    for (int j = 0; j < 2 * POLY_RANGES; ++j) below[j] = 0;
    const u64 region = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * P.rcap;  // this thread's, in each buffer
    // The predicted ranges: absdiff's and reldiff's keys below each range counted, those within
    // one written to this thread's region of the stream's buffer.
    auto in_ranges = [&](const Vals& v) {
#pragma unroll
        for (int s = 0; s < 2; ++s) {
#if POLY_PACKED_BELOW
            const KT probe = __float_as_uint(v.v[2 + s]);  // (see key_in_ranges: never negative)
            const KT key = probe | 0x80000000u;
#else
            const KT key = order_key(v.v[2 + s]), probe = key;
#endif
            if (poly_plan.nranges[s] == 0) {  // not predicted: the first digit, for the ordinary select
                if (with_hist) atomicAdd(&hist[s * POLY_FIRST_BINS + (int)(key >> (POLY_KEY_BITS - POLY_FIRST_BITS))], 1u);
                continue;
            }
            if (s == 0 ? key_in_ranges<0>(probe, below) : key_in_ranges<1>(probe, below)) {
                if (rfill[s] < P.rcap) ((KT*)P.rbuf[s])[region + rfill[s]] = key;
                ++rfill[s];
            }
        }
    };
    auto tally = [&](const Vals& v) {
        dot = __fma_rn((double)v.v[0], (double)v.v[1], dot);
        fails += (!(v.v[2] <= atol)) & (!(v.v[3] <= rtol));
        if (with_hist && !RANGES) {
            atomicAdd(&hist[order_key(v.v[2]) >> (POLY_KEY_BITS - POLY_FIRST_BITS)], 1u);
            atomicAdd(&hist[POLY_FIRST_BINS + (order_key(v.v[3]) >> (POLY_KEY_BITS - POLY_FIRST_BITS))], 1u);
        }
        if (with_ranges) in_ranges(v);
    };
    auto one = [&](u64 j, const Vals& v, bool) {
        feed_one<0, true, true>(r[0], v.v[0], j, cnt, tallies);
        feed_one<1, true, true>(r[1], v.v[1], j, cnt, tallies);
        feed_one<2, true, false>(r[2], v.v[2], j, cnt, tallies);
        feed_one<3, false, false>(r[3], v.v[3], j, cnt, tallies);
        ++cnt;
        tally(v);
    };
    auto chunk = [&](u64 j0, const uint4& ra, const uint4& rb, bool) {
#pragma unroll
        for (int h = 0; h < POLY_ELEMS; h += POLY_SUB) {
            Vals v[POLY_SUB];
#pragma unroll
            for (int e = 0; e < POLY_SUB; ++e)
                element_raw<false>(P, lane_raw<Size<POLY_DTA>::value>(ra, h + e), lane_raw<Size<POLY_DTB>::value>(rb, h + e),
                                   v[e]);
            if (sub_chunk_finite(v)) {  // (the shifts were set before the loop)
#pragma unroll
                for (int e = 0; e < POLY_SUB; ++e) {
                    const double x = (double)v[e].v[0], y = (double)v[e].v[1];
                    sum_value<true, true>(r[0], x);
                    sum_value<true, true>(r[1], y);
                    sum_value<true, false>(r[2], (double)v[e].v[2]);
                    sum_value<false, false>(r[3], (double)v[e].v[3]);
                    dot = __fma_rn(x, y, dot);
                    count_fail(fails, v[e].v[2], v[e].v[3], atol, rtol);
                    if (with_ranges) in_ranges(v[e]);
                }
                if (with_hist && !RANGES) {  // one test a sub-chunk, not one an element
#pragma unroll
                    for (int e = 0; e < POLY_SUB; ++e) {
                        atomicAdd(&hist[order_key(v[e].v[2]) >> (POLY_KEY_BITS - POLY_FIRST_BITS)], 1u);
                        atomicAdd(&hist[POLY_FIRST_BINS + (order_key(v[e].v[3]) >> (POLY_KEY_BITS - POLY_FIRST_BITS))], 1u);
                    }
                }
                extrema_finite<0>(r[0], v, cnt);
                extrema_finite<1>(r[1], v, cnt);
                extrema_finite<2>(r[2], v, cnt);
                extrema_finite<3>(r[3], v, cnt);
                cnt += POLY_SUB;
            } else {
#pragma unroll
                for (int e = 0; e < POLY_SUB; ++e) {
                    Vals w;
                    element_raw(P, lane_raw<Size<POLY_DTA>::value>(ra, h + e), lane_raw<Size<POLY_DTB>::value>(rb, h + e), w);
                    one(j0 + h + e, w, true);
                }
            }
        }
    };
    // Each stream's shift, set once here rather than tested at every chunk: the thread's first
    // element, as the first chunk would give it (an element-wise path sets it at ordinal 0, by
    // the same rule: a non-finite first value shifts by 0).
    if (POLY_CAN_CHUNK && P.chunked) {
        const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
        if (first < P.n / POLY_ELEMS) {
            Vals v0;
            const u64 j = first * POLY_ELEMS;  // its first chunk's first element
            element_raw(P, load_raw<POLY_DTA>((const char*)P.a.ptr + offset_of(P.a, j)),
                        load_raw<POLY_DTB>((const char*)P.b.ptr + offset_of(P.b, j)), v0);
#pragma unroll
            for (int k = 0; k < 4; ++k) r[k].c = isfinite(v0.v[k]) ? (double)v0.v[k] : 0.0;
        }
    }
    for_each_pair<false>(P, ring, chunk, one);
    Acc a[4];
    const double dcnt = (double)cnt;
    const Ordinals ords = thread_ordinals(P);
    stream_finish(ords, r[0], dcnt, true, true, a[0]);
    stream_finish(ords, r[1], dcnt, true, true, a[1]);
    stream_finish(ords, r[2], dcnt, false, true, a[2]);
    stream_finish(ords, r[3], dcnt, false, false, a[3]);
    u64 f64s = fails;
    for (int delta = 16; delta > 0; delta >>= 1) {
        for (int k = 0; k < 4; ++k) {
            const Acc o = acc_shfl<false>(a[k], delta);
            acc_merge(a[k], o);
        }
        dot += __shfl_down_sync(0xFFFFFFFFu, dot, delta);
        f64s += __shfl_down_sync(0xFFFFFFFFu, f64s, delta);
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (with_ranges) {
#pragma unroll
        for (int j = 0; j < 2 * POLY_RANGES; ++j) {
            u64 x = below_count(below, j);
            for (int delta = 16; delta > 0; delta >>= 1) x += __shfl_down_sync(0xFFFFFFFFu, x, delta);
            if (lane == 0 && x) atomicAdd(&range_counts[j], x);
        }
#pragma unroll
        for (int s = 0; s < 2; ++s) {
            ((u32*)P.rfills)[(u64)s * gridDim.x * blockDim.x + (u64)blockIdx.x * blockDim.x + threadIdx.x] = rfill[s];
            u32 mx = rfill[s];
            for (int delta = 16; delta > 0; delta >>= 1) mx = max(mx, __shfl_down_sync(0xFFFFFFFFu, mx, delta));
            if (lane == 0) atomicMax(&range_counts[2 * POLY_RANGES + s], (u64)mx);
        }
    }
    if (lane == 0) {
        for (int k = 0; k < 4; ++k) warp_acc[warp][k] = a[k];
        warp_dot[warp] = dot;
        warp_fails[warp] = f64s;
    }
    __syncthreads();
    Part* out = (Part*)P.out + blockIdx.x;
    warps_to_part(out, warp_acc, POLY_THREADS / 32, warp_dot, warp_fails);
    if (threadIdx.x < 4) {  // the block's NaN/Inf tallies of stream k, kept apart from the warps' shares
        const int k = threadIdx.x;
        out->s[k].nnan = tallies.nan[k];
        out->s[k].ninf = tallies.inf[k];
        out->s[k].inan = tallies.first_nan[k] == ~0ull ? -1 : (i64)tallies.first_nan[k];
    }
    __syncthreads();  // (warps_to_part's threads wrote the record)
    if (threadIdx.x < 8) resolve_extrema(P, out->s[threadIdx.x % 4], threadIdx.x % 4, threadIdx.x / 4);
    __syncthreads();
    if (threadIdx.x < 4) out->s[threadIdx.x].pad = 0;
    if (with_ranges && threadIdx.x < 2 * POLY_RANGES + 2) {
        u64* ro = (u64*)P.rout;
        const u64 c = range_counts[threadIdx.x];
        if (threadIdx.x >= 2 * POLY_RANGES) atomicMax(&ro[threadIdx.x], c);
        else if (c) atomicAdd(&ro[threadIdx.x], c);
    }
    if (with_hist) {
        u64* g = (u64*)P.hist;
        for (int k = threadIdx.x; k < 2 * POLY_FIRST_BINS; k += blockDim.x) {
            const u32 c = hist[k];
            if (c) atomicAdd(&g[k], (u64)c);
        }
    }
}

extern "C" __global__ void __launch_bounds__(POLY_THREADS, 2) poly_stats(const Params P) { stats_pass<false>(P); }
extern "C" __global__ void __launch_bounds__(POLY_THREADS, 2) poly_stats_ranges(const Params P) { stats_pass<true>(P); }

#define POLY_MERGE_BATCH 4

// The statistics pass's per-block records (P.seg_len[0] of them, at P.out) merged into one Part at
// P.seg[0], so that one record comes back to the host: one block, whose warps each merge one
// stream of a strided share of the records (a pair of warps a stream), then those shares.
extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_merge_parts(const Params P) {
    constexpr int PER_STREAM = POLY_THREADS / 32 / 4;  // warps merging each stream
    static_assert(PER_STREAM >= 1, "a warp per stream at least");
    __shared__ Acc warp_acc[POLY_THREADS / 32][4];
    __shared__ double warp_dot[POLY_THREADS / 32];
    __shared__ u64 warp_fails[POLY_THREADS / 32];
    const Part* parts = (const Part*)P.out;
    const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
    // warp w merges stream w % 4 of every (PER_STREAM x 32)-th record: one Acc a thread, not four
    const int k = warp % 4, share = (warp / 4) * 32 + lane;
    Acc a;
    a.n = a.mean = a.m2 = a.sum = a.sq = a.ab = a.mn = a.mx = 0.0;
    a.imn = a.imx = a.inan = -1;
    a.nnan = a.ninf = 0;
    a.pad = 0;
    // (a thread's records loaded POLY_MERGE_BATCH at a time before they are merged: one round trip to L2
    // a batch, where a load behind each merge made the kernel a chain of them)
    const u64 len = P.seg_len[0];
    for (u64 i0 = share; i0 < len; i0 += POLY_MERGE_BATCH * PER_STREAM * 32) {
        Acc rec[POLY_MERGE_BATCH];
#pragma unroll
        for (int j = 0; j < POLY_MERGE_BATCH; ++j) {
            const u64 i = i0 + (u64)j * PER_STREAM * 32;
            if (i < len) rec[j] = parts[i].s[k];
        }
#pragma unroll
        for (int j = 0; j < POLY_MERGE_BATCH; ++j)
            if (i0 + (u64)j * PER_STREAM * 32 < len) acc_merge(a, rec[j]);
    }
    double dot = 0.0;
    u64 fails = 0;
    for (u64 i = threadIdx.x; i < P.seg_len[0]; i += blockDim.x) {
        dot += parts[i].dot;
        fails += parts[i].fails;
    }
    for (int delta = 16; delta > 0; delta >>= 1) {
        acc_merge(a, acc_shfl(a, delta));
        dot += __shfl_down_sync(0xFFFFFFFFu, dot, delta);
        fails += __shfl_down_sync(0xFFFFFFFFu, fails, delta);
    }
    if (lane == 0) {
        warp_acc[warp / 4][k] = a;  // stream k's shares: rows 0 .. PER_STREAM - 1
        warp_dot[warp] = dot;
        warp_fails[warp] = fails;
    }
    __syncthreads();
    warps_to_part((Part*)P.seg[0], warp_acc, PER_STREAM, warp_dot, warp_fails);
}

#endif  // POLY_STATS_PASS_CUH
