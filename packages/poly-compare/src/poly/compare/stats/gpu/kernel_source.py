"""
The CUDA C++ source of the on-device error statistics, compiled at run time by NVRTC.

One source serves every dtype pair: ``kernel_options`` turns a pair into preprocessor
definitions, so each compiled variant has its loads and its difference arithmetic fixed at
compile time (contiguity, ``infinities_compare_equal`` and the histogram are run-time flags,
so that a pair compiles once). The definitions mirror the CPU engine's
(poly-core's native/src: element loads, ``CompareConfig``, the float32/float64/integer
differences, the order-preserving keys); the structures here mirror ``device_run.LaunchParams``
(and ``predicted_ranges``' PLAN_ASK, PLAN_STATE and RANGE_TABLE for the device's plan of the ranges).

How the input is read: when both arrays are contiguous, 16-byte aligned and of one item size
(``Params.chunked``), each thread streams 16-byte chunks of both arrays through a ring of
``POLY_STAGES`` slots in shared memory filled by asynchronous copies (``cp.async``), so that
the loads of the next chunks are in flight while the current one is computed: the passes run
at the memory's speed although their arithmetic is heavy. Otherwise (strided views, mixed item
sizes) each thread loads ``POLY_UNROLL`` elements at a time through the view's strides.

Kernels:

- ``poly_stats``: one pass over both arrays; per block, the four streams' (count, mean, M2)
  moments, plain sums, extrema with their first indices, NaN/Inf counts, the dot product and
  the mismatch count, merged in float64 and written as one record per block. Chunks whose
  values are all finite take a fast path (extrema per chunk, no NaN/Inf bookkeeping). Given a
  histogram buffer, it also counts the top ``POLY_FIRST_BITS`` key bits of absdiff and reldiff
  (the order statistics' first radix digit).
- ``poly_stats_ranges``: the same pass, and given predicted ranges (the constant ``poly_plan``),
  each thread counts the keys of absdiff and reldiff below each range and writes those within one
  to a region of its own (predicted_ranges); a stream without ranges has its first digit counted.
- ``poly_merge_parts``: the statistics pass's per-block records merged into one on the device (one
  block, queued behind the pass), so that one record comes back.
- ``poly_radix_hist``: one radix pass over the input: for up to ``HIST_GROUPS`` (stream,
  key prefix) groups, a histogram of the next key digit of the elements with that prefix.
- ``poly_radix_gather``: the keys of the elements of up to ``MAX_GROUPS`` groups, appended to
  one buffer per stream (staged per warp in shared memory, written into runs of the buffer each
  warp reserves with one atomic per 4 KiB; the unused rest of a run holds key 0). An element
  belongs to at most one group per stream.
- ``poly_keys_hist``: a radix pass over one gathered buffer (its length read from the gather's
  counter on the device), or over one stream's regions of the statistics pass (a warp per
  region, up to its fill), for all the groups it holds. A group may be bounded to a key range.
- ``poly_keys_collect``: the same read, copying the keys of its groups to one small buffer (the
  last radix passes' work done on the host, once the groups hold few keys).
- ``poly_keys_hist_planned``: ``poly_keys_hist`` over one stream's regions whose groups are that
  stream's planned ranges (read from ``poly_plan``): the first radix pass over them, queued
  behind the statistics pass before the host knows the ranges.
- ``poly_select_first``, ``poly_select_input``: a radix select run on the device (a mid-size input),
  queued right behind the statistics pass: the wanted ranks of absdiff and reldiff, kept in device
  memory, are descended by the pass's first-digit histograms, then each pass over the input counts
  the next key digit of the elements of each rank's group and its last block descends every rank
  by them, so that the passes follow each other with no host round trip.
- ``poly_sample``: the keys of absdiff and reldiff at a stratified random sample of places.
- ``poly_plan_ranges``: the predicted ranges planned from that sample on the device (a select of
  the sample keys ending each rank's range, 8 bits a launch over 16 blocks a stream, then the plan
  made by one thread), written to a ``RangeTable`` that the host copies into ``poly_plan`` in
  stream order.
- ``poly_count_zeros``: the number of zeros in ``b`` (the simple comparison's warning).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KERNEL_SOURCE", "KernelVariant", "kernel_options", "DIGIT_BITS", "FIRST_BITS", "MAX_GROUPS", "HIST_GROUPS", "MAX_DIMS",
           "THREADS", "STAGES", "RING_BYTES", "STATS_HIST_BYTES", "GATHER_STAGE_BYTES", "GATHER_RESERVE_BYTES", "RANGES", "PLAN_RANKS", "PLAN_BLOCKS", "SELECT_TARGETS",
           "SELECT_BITS",
           "KERNEL_NAMES"]

FIRST_BITS = 12  # key bits counted by the statistics pass: 4096 bins per stream (an eighth of an octave)
DIGIT_BITS = 11  # later radix digits: 2048 bins, 8 KiB of shared counters per group
MAX_GROUPS = 16  # groups per gather or gathered-keys launch
HIST_GROUPS = 8  # groups per histogram pass over the input (64 KiB of shared counters at most)
MAX_DIMS = 8  # dimensions of a strided view after collapsing
THREADS = 256  # threads per block of every kernel
STAGES = 4  # chunks of each array in flight per thread (the asynchronous-copy ring)
RING_BYTES = STAGES * 2 * THREADS * 16  # shared memory of the ring
STATS_HIST_BYTES = RING_BYTES + 2 * (1 << FIRST_BITS) * 4  # the statistics pass's with its first-digit histograms
GATHER_STAGE_BYTES = (THREADS // 32) * 4 * 128 * 4  # the gather's staging: per warp and stream, 128 float32 keys (64 float64)
GATHER_RESERVE_BYTES = 4096  # the run of a stream's buffer a gathering warp reserves at a time
RANGES = 4  # predicted ranges per stream (absdiff, reldiff) the statistics pass gathers
PLAN_RANKS = 16  # ranks per stream whose predicted ranges the device plans (a median and 7 quantiles)
PLAN_BLOCKS = 16  # blocks per stream of the device's plan (each a slice of the sample)
SELECT_TARGETS = 20  # ranks a device-side select narrows at once (2 ranks each of the medians and up to 4 quantiles of 2 streams)
SELECT_BITS = 10  # key bits each pass of a device-side select counts: 1024 bins, 4 KiB of shared counters per rank

KERNEL_NAMES = ("poly_stats", "poly_stats_ranges", "poly_merge_parts", "poly_radix_hist", "poly_radix_gather",
                "poly_keys_hist", "poly_keys_collect", "poly_keys_hist_planned", "poly_select_first",
                "poly_select_input", "poly_sample", "poly_plan_ranges", "poly_count_zeros")

# Integer differences as poly's CPU engine forms them (kernel.hpp's IntDiff).
INT_DIFF_NONE, INT_DIFF_I32, INT_DIFF_I64, INT_DIFF_U64 = 0, 1, 2, 3


@dataclass(frozen=True)
class KernelVariant:
    """What one compiled variant is specialised for."""

    code_a: int  # dtype codes (DTYPE_CODES order: bool, int8..int64, uint8..uint64, f16, bf16, f32, f64)
    code_b: int
    f32: bool
    xor_mode: bool
    int_diff: int
    den_wrap: bool


def kernel_options(v: KernelVariant) -> list[str]:
    """NVRTC options (preprocessor definitions) of one variant."""
    flags = {
        "POLY_DTA": v.code_a, "POLY_DTB": v.code_b, "POLY_F32": int(v.f32), "POLY_XOR": int(v.xor_mode),
        "POLY_INT_DIFF": v.int_diff, "POLY_DEN_WRAP": int(v.den_wrap),
        "POLY_DIGIT_BITS": DIGIT_BITS, "POLY_FIRST_BITS": FIRST_BITS, "POLY_MAX_GROUPS": MAX_GROUPS,
        "POLY_MAX_DIMS": MAX_DIMS, "POLY_THREADS": THREADS, "POLY_STAGES": STAGES,
        "POLY_RESERVE_BYTES": GATHER_RESERVE_BYTES, "POLY_RANGES": RANGES, "POLY_SEL_TARGETS": SELECT_TARGETS,
        "POLY_PLAN_RANKS": PLAN_RANKS, "POLY_PLAN_BLOCKS": PLAN_BLOCKS,
    }
    return [f"-D{k}={int(val)}" for k, val in flags.items()]


KERNEL_SOURCE = r"""
typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

#define POLY_BINS (1 << POLY_DIGIT_BITS)
#define POLY_FIRST_BINS (1 << POLY_FIRST_BITS)
#define POLY_UNROLL 8

struct View {
    u64 ptr;
    i64 shape[POLY_MAX_DIMS];
    i64 strides[POLY_MAX_DIMS];  // bytes
    int ndim;
    int itemsize;
};

struct Group {
    u64 prefix;  // known top `bits` bits of the key
    int stream;  // 0 a, 1 b, 2 absdiff, 3 reldiff
    int bits;
    int dbits;   // digit bits counted by this pass
    int pad;
    u64 lo, hi;  // and keys within [lo, hi] only (a predicted range's keys; 0 and all ones for any key),
                 // prefix and digits taken of key - lo
};

struct Params {
    View a, b;
    u64 n;
    double atol, rtol, eps;
    u64 den_min_bits;
    u64 out;      // poly_stats: one Part per block; gather: one u64 counter per group
    u64 hist;     // poly_stats (optional, 0 for none): 2 x POLY_FIRST_BINS u64; radix passes: groups x POLY_BINS u64
    int ngroups;
    int inf_equal;  // equal infinities give absdiff 0
    int chunked;    // both arrays contiguous, 16-byte aligned, of one item size
    float eps32;    // eps in float (the float32 arithmetic's)
    Group groups[POLY_MAX_GROUPS];
    u64 seg[POLY_MAX_GROUPS];      // gather: each group's key buffer; keys_hist: each group's gathered keys
    u64 seg_len[POLY_MAX_GROUPS];  // gather: its capacity; keys_hist: its length
    // Predicted ranges (poly_stats_ranges; the ranges themselves in the constant poly_plan): each
    // thread writes the keys of absdiff and reldiff within up to POLY_RANGES ranges each to its own
    // region of rcap keys of rbuf[stream] (no atomics), and counts the keys below each range's lo.
    u64 rout;      // 2 x POLY_RANGES u64 counts below each lo, the 2 streams' largest region fill, their sums
    u64 rfills;    // 2 x (threads of the grid) u32 region fills (keys found, written or not)
    u64 rbuf[2];
    u32 rcap;      // poly_stats_ranges, poly_keys_hist (region mode): keys per region, a power of two
    u32 nregions;  // poly_keys_hist: nonzero for region mode (seg[0] holds nregions regions, their u32 fills at out)
    u64 sel;        // poly_select_input: the SelState of the targets
    int sel_dbits;  // poly_select_input: key bits counted by this pass
    int plan_stream;  // poly_keys_hist_planned: 0 absdiff, 1 reldiff (its groups: that stream's planned ranges)
    int plan_phase;   // poly_plan_ranges: its phase (hist: its PlanStates)
    int plan_pad;
};

// -- the predicted ranges, planned on the device ------------------------------------------------------
// The host asks per stream (absdiff, reldiff) for the sample keys at the sorted positions that end
// each wanted rank's range (PlanAsk); poly_plan_ranges selects them and plans the ranges
// (RangeTable, as predicted_ranges.stream_ranges plans them from a sorted sample), and the table
// is copied, in stream order, into the constant poly_plan that the statistics pass and the first
// radix pass over the ranges' keys read. An unused range is [0, 0] (key 0 is a NaN's); a stream
// with no ranges (none asked, too many keys in them, or more than its regions were sized for) has
// its first key digit counted by the statistics pass instead, for the ordinary select.
#define POLY_PLAN_ENDS (2 * POLY_PLAN_RANKS)

struct PlanAsk {
    i64 at_lo[POLY_PLAN_RANKS], at_hi[POLY_PLAN_RANKS];  // sample positions of each rank's range ends (outside [0, S): open)
    u64 max_expected;  // a stream whose ranges hold more of the input's keys (estimated) is not predicted
    int nranks;        // ranks asked, ascending
    int pad;
};

struct RangeTable {
    u64 lo[2 * POLY_RANGES], hi[2 * POLY_RANGES];
    u64 expected[2];                    // the input's keys the ranges should hold, from the sample's
    int nranges[2];                     // 0: not predicted
    int range_of[2 * POLY_PLAN_RANKS];  // each asked rank's range
    Group groups[2 * POLY_RANGES];      // the first radix pass over each range's keys
};

__constant__ RangeTable poly_plan;

struct Acc {
    double n, mean, m2, sum, sq, ab, mn, mx;
    i64 imn, imx, inan;
    u64 nnan, ninf;
    i64 pad;
};

struct Part {
    Acc s[4];
    double dot;
    u64 fails;
};

// -- element loads ---------------------------------------------------------------------------------
__device__ __forceinline__ i64 offset_of(const View& v, u64 i) {
    if (v.ndim == 1) return (i64)i * v.strides[0];
    i64 off = 0;
    u64 rem = i;
    for (int d = v.ndim - 1; d >= 0; --d) {
        const u64 dim = (u64)v.shape[d];
        off += (i64)(rem % dim) * v.strides[d];
        rem /= dim;
    }
    return off;
}

__device__ __forceinline__ float half_to_float(unsigned short h) {
    const u32 sign = ((u32)h & 0x8000u) << 16;
    const u32 exp = ((u32)h >> 10) & 0x1Fu;
    u32 man = (u32)h & 0x3FFu;
    u32 bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {
            int e = -1;
            do { ++e; man <<= 1; } while ((man & 0x400u) == 0);
            man &= 0x3FFu;
            bits = sign | ((u32)(127 - 15 - e) << 23) | (man << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7F800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    return __uint_as_float(bits);
}

// codes: 0 bool, 1 i8, 2 i16, 3 i32, 4 i64, 5 u8, 6 u16, 7 u32, 8 u64, 9 f16, 10 bf16, 11 f32, 12 f64
template <int T>
struct Size { static const int value = (T == 0 || T == 1 || T == 5) ? 1 : (T == 2 || T == 6 || T == 9 || T == 10) ? 2
                                      : (T == 3 || T == 7 || T == 11) ? 4 : 8; };

// An element's bytes, zero-extended: loads are issued for several elements before any arithmetic.
template <int T>
__device__ __forceinline__ u64 load_raw(const char* p) {
    if (Size<T>::value == 1) return (u64)*(const unsigned char*)p;
    if (Size<T>::value == 2) return (u64)*(const unsigned short*)p;
    if (Size<T>::value == 4) return (u64)*(const u32*)p;
    return *(const u64*)p;
}

// Element e of a 16-byte chunk of elements of `size` bytes, zero-extended.
template <int SIZE>
__device__ __forceinline__ u64 lane_raw(const uint4& c, int e) {
    const u32 w = (SIZE == 8 ? 2 * e : SIZE == 4 ? e : SIZE == 2 ? e >> 1 : e >> 2);
    const u32 word = w == 0 ? c.x : w == 1 ? c.y : w == 2 ? c.z : c.w;
    if (SIZE == 8) return (u64)word | ((u64)(e == 0 ? c.y : c.w) << 32);
    if (SIZE == 4) return (u64)word;
    if (SIZE == 2) return (u64)((word >> ((e & 1) * 16)) & 0xFFFFu);
    return (u64)((word >> ((e & 3) * 8)) & 0xFFu);
}

template <int T>
__device__ __forceinline__ double value_of(u64 r) {
    if (T == 0) return r != 0 ? 1.0 : 0.0;
    if (T == 1) return (double)(signed char)(unsigned char)r;
    if (T == 2) return (double)(short)(unsigned short)r;
    if (T == 3) return (double)(int)(u32)r;
    if (T == 4) return __ll2double_rn((i64)r);
    if (T == 5) return (double)(unsigned char)r;
    if (T == 6) return (double)(unsigned short)r;
    if (T == 7) return (double)(u32)r;
    if (T == 8) return __ull2double_rn(r);
    if (T == 9) return (double)half_to_float((unsigned short)r);
    if (T == 10) return (double)__uint_as_float(((u32)r) << 16);
    if (T == 11) return (double)__uint_as_float((u32)r);
    return __longlong_as_double((i64)r);
}

template <int T>
__device__ __forceinline__ float fvalue_of(u64 r) {
    if (T == 9) return half_to_float((unsigned short)r);
    if (T == 10) return __uint_as_float(((u32)r) << 16);
    if (T == 11) return __uint_as_float((u32)r);
    return (float)value_of<T>(r);  // bool
}

// An integer (or bool) element as 64-bit two's complement: sign-extended from signed types.
template <int T>
__device__ __forceinline__ u64 bits_of(u64 r) {
    if (T == 0) return r != 0 ? 1ull : 0ull;
    if (T == 1) return (u64)(i64)(signed char)(unsigned char)r;
    if (T == 2) return (u64)(i64)(short)(unsigned short)r;
    if (T == 3) return (u64)(i64)(int)(u32)r;
    return r;
}

// Values of the compute precision: float for float16/bfloat16/float32 (and bool beside them)
// pairs, whose values are all exact in float, double otherwise. Sums are always double.
#if POLY_F32
typedef float VT;
typedef u32 KT;  // order keys
#define POLY_KEY_BITS 32
#else
typedef double VT;
typedef u64 KT;
#define POLY_KEY_BITS 64
#endif
#if POLY_F32
#define POLY_INF __int_as_float(0x7f800000)
#else
#define POLY_INF __longlong_as_double(0x7ff0000000000000ll)
#endif

struct Vals { VT v[4]; };

__device__ __forceinline__ double divisor(const Params& P, double y, u64 ybits) {
#if POLY_DEN_WRAP
    if (ybits == P.den_min_bits) return y;
#endif
    return fabs(y);
}

// a, b, |a - b| and |a - b| / |b'| of one element from its raw bytes, with the CPU engine's rounding.
__device__ __forceinline__ void element_raw(const Params& P, u64 ra, u64 rb, Vals& out) {
#if POLY_F32
    const float fx = fvalue_of<POLY_DTA>(ra), fy = fvalue_of<POLY_DTB>(rb);
    float d = fabsf(__fsub_rn(fx, fy));
    if (P.inf_equal && fx == fy) d = 0.0f;  // equal infinities (equal finite values give 0 anyway)
    const float den = (fy == 0.0f) ? P.eps32 : fabsf(fy);
    out.v[0] = fx;
    out.v[1] = fy;
    out.v[2] = d;
    float q = __fdiv_rn(d, den);
    asm("" : "+f"(q));  // computed once: the compilers would otherwise repeat the division at each use
    out.v[3] = q;
#else
    const double x = value_of<POLY_DTA>(ra);
    const double y = value_of<POLY_DTB>(rb);
    out.v[0] = x;
    out.v[1] = y;
#if POLY_INT_DIFF != 0
    const u64 xa = bits_of<POLY_DTA>(ra), xb = bits_of<POLY_DTB>(rb);
    double d;
#if POLY_INT_DIFF == 1
    {
        const u32 w = (u32)xa - (u32)xb;
        const i64 s = (i64)(int)w;
        d = (s == (i64)(-2147483647 - 1)) ? (double)s : (double)(s < 0 ? -s : s);
    }
#elif POLY_INT_DIFF == 2
    {
        const i64 s = (i64)(xa - xb);
        d = (s == (i64)0x8000000000000000ull) ? __ll2double_rn(s) : __ll2double_rn(s < 0 ? -s : s);
    }
#else
    d = __ull2double_rn(xa - xb);
#endif
    const double den = (y == 0.0) ? P.eps : divisor(P, y, xb);
#else
#if POLY_XOR
    double d = ((x != 0.0) != (y != 0.0)) ? 1.0 : 0.0;
#else
    double d = fabs(__dsub_rn(x, y));
#endif
    if (P.inf_equal && x == y) d = 0.0;  // equal infinities (equal finite values give 0 anyway)
#if POLY_DEN_WRAP
    const double den = (y == 0.0) ? P.eps : divisor(P, y, bits_of<POLY_DTB>(rb));
#else
    const double den = (y == 0.0) ? P.eps : fabs(y);
#endif
#endif
    out.v[2] = d;
    out.v[3] = __ddiv_rn(d, den);
#endif
}

// Order-preserving key of a value of the compute precision.
__device__ __forceinline__ KT order_key(VT v) {
#if POLY_F32
    const u32 u = __float_as_uint(v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
#else
    const u64 u = (u64)__double_as_longlong(v);
    return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
#endif
}

// A group's prefix and digits are those of the key's offset from the group's lo (the key itself
// for a group of any key, lo 0): a narrow range's offsets share many top bits even where its
// keys straddle a power of two.
__device__ __forceinline__ bool in_group(const Group& g, KT key) {
    const KT off = key - (KT)g.lo;
    return (u64)key >= g.lo && (u64)key <= g.hi && (g.bits == 0 || (u64)(off >> (POLY_KEY_BITS - g.bits)) == g.prefix);
}

__device__ __forceinline__ u32 digit_of(const Group& g, KT key) {
    return (u32)(((KT)(key - (KT)g.lo) >> (POLY_KEY_BITS - g.bits - g.dbits)) & (KT)((1u << g.dbits) - 1u));
}

// -- streaming both arrays ------------------------------------------------------------------------
__device__ __forceinline__ void copy16_async(uint4* dst, const uint4* src) {
#if __CUDA_ARCH__ >= 800
    const u32 s = (u32)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src));
#else
    *dst = *src;
#endif
}
__device__ __forceinline__ void copies_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}
__device__ __forceinline__ void copies_wait_all_but_newest() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(POLY_STAGES - 1));
#endif
}

#define POLY_ELEMS (16 / Size<POLY_DTA>::value)  // elements per 16-byte chunk
#define POLY_CAN_CHUNK (Size<POLY_DTA>::value == Size<POLY_DTB>::value)

// Calls chunk(j0, raw_a, raw_b, valid) for each 16-byte chunk (elements j0 .. j0 + POLY_ELEMS - 1)
// of this thread and one(j, values, valid) for each remaining element; with `chunked` false,
// one() for every element. With UNIFORM, the loops are uniform across a warp (a lane past the
// end calls with `valid` false), so that the callbacks may use warp collectives; otherwise
// `valid` is always true. `ring`: POLY_STAGES x 2 x blockDim.x slots of shared memory; each
// thread only reads the slots it filled, so no block barrier is needed.
template <bool UNIFORM, typename FC, typename FE>
__device__ __forceinline__ void for_each_pair(const Params& P, uint4* ring, FC&& chunk, FE&& one) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 lane = UNIFORM ? threadIdx.x & 31 : 0;  // loops end together with the warp's first lane
    u64 start = 0;
    if (POLY_CAN_CHUNK && P.chunked) {
        const int E = POLY_ELEMS;
        const u64 nchunks = P.n / E;
        const uint4* ga = (const uint4*)P.a.ptr;
        const uint4* gb = (const uint4*)P.b.ptr;
        const int T = blockDim.x, t = threadIdx.x;
#pragma unroll
        for (int s = 0; s < POLY_STAGES - 1; ++s) {
            const u64 k = first + (u64)s * stride;
            if (k < nchunks) {
                copy16_async(&ring[(2 * s) * T + t], ga + k);
                copy16_async(&ring[(2 * s + 1) * T + t], gb + k);
            }
            copies_commit();
        }
        int slot = 0;
        for (u64 k = first; k - lane < nchunks; k += stride) {
            const u64 kn = k + (u64)(POLY_STAGES - 1) * stride;
            const int ns = slot == 0 ? POLY_STAGES - 1 : slot - 1;  // the slot consumed last time
            if (kn < nchunks) {
                copy16_async(&ring[(2 * ns) * T + t], ga + kn);
                copy16_async(&ring[(2 * ns + 1) * T + t], gb + kn);
            }
            copies_commit();
            copies_wait_all_but_newest();
            const uint4 ra = ring[(2 * slot) * T + t], rb = ring[(2 * slot + 1) * T + t];
            chunk(k * E, ra, rb, !UNIFORM || k < nchunks);
            slot = slot + 1 == POLY_STAGES ? 0 : slot + 1;
        }
        start = nchunks * E;
    }
    for (u64 i = start + first; i - lane < P.n; i += stride * POLY_UNROLL) {
        u64 ra[POLY_UNROLL], rb[POLY_UNROLL];
#pragma unroll
        for (int u = 0; u < POLY_UNROLL; ++u) {
            const u64 j = i + (u64)u * stride;
            ra[u] = 0;
            rb[u] = 0;
            if (j < P.n) {
                ra[u] = load_raw<POLY_DTA>((const char*)P.a.ptr + offset_of(P.a, j));
                rb[u] = load_raw<POLY_DTB>((const char*)P.b.ptr + offset_of(P.b, j));
            }
        }
#pragma unroll
        for (int u = 0; u < POLY_UNROLL; ++u) {
            const u64 j = i + (u64)u * stride;
            if (j - lane >= P.n) break;  // uniform across the warp
            Vals v;
            element_raw(P, ra[u], rb[u], v);
            one(j, v, !UNIFORM || j < P.n);
        }
    }
}

// The values of a chunk's elements.
__device__ __forceinline__ void chunk_values(const Params& P, const uint4& ra, const uint4& rb, Vals* v) {
#pragma unroll
    for (int e = 0; e < POLY_ELEMS; ++e)
        element_raw(P, lane_raw<Size<POLY_DTA>::value>(ra, e), lane_raw<Size<POLY_DTB>::value>(rb, e), v[e]);
}

// Calls one(j, values, true) for every element: for_each_pair with each chunk's values unpacked.
template <typename FE>
__device__ __forceinline__ void for_each_value(const Params& P, uint4* ring, FE&& one) {
    auto chunk = [&](u64 j0, const uint4& ra, const uint4& rb, bool) {
        Vals v[POLY_ELEMS];
        chunk_values(P, ra, rb, v);
#pragma unroll
        for (int e = 0; e < POLY_ELEMS; ++e) one(j0 + e, v[e], true);
    };
    for_each_pair<false>(P, ring, chunk, one);
}

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


// The extrema of stream K over a sub-chunk of finite values, found as a sequential scan would
// find them (the first of equal values wins).
template <int K>
__device__ __forceinline__ void extrema_finite(Stream& r, const Vals* v, u32 ord0) {
    VT cmn = v[0].v[K], cmx = v[0].v[K];
#pragma unroll
    for (int e = 1; e < POLY_SUB; ++e) {
        cmn = fmin(cmn, v[e].v[K]);
        cmx = fmax(cmx, v[e].v[K]);
    }
    if (cmn < r.mn) {
#pragma unroll
        for (int e = POLY_SUB - 1; e >= 0; --e)
            if (v[e].v[K] == cmn) { r.mn = v[e].v[K]; r.imn = ord0 + e; }
    }
    if (cmx > r.mx) {
#pragma unroll
        for (int e = POLY_SUB - 1; e >= 0; --e)
            if (v[e].v[K] == cmx) { r.mx = v[e].v[K]; r.imx = ord0 + e; }
    }
}

// Whether a sub-chunk's values are all finite: |a|, |b| below infinity and absdiff + reldiff
// finite (NaN and infinity propagate through the sum; an overflowing sum only sends the
// sub-chunk down the element-wise path).
__device__ __forceinline__ bool sub_chunk_finite(const Vals* v) {
    VT m = 0, s = 0;
#pragma unroll
    for (int e = 0; e < POLY_SUB; ++e) {
        m = fmax(m, fmax(fabs(v[e].v[0]), fabs(v[e].v[1])));
        s += v[e].v[2] + v[e].v[3];
    }
    return m < POLY_INF && s < POLY_INF;
}

// The index of this thread's element of ordinal `ord` (for_each_pair's order: its chunks, then
// its elements past the last whole chunk).
__device__ __forceinline__ i64 global_index(const Params& P, u32 ord) {
    if (ord == POLY_NONE) return -1;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 start = 0, mine = 0;  // this thread's chunks
    if (POLY_CAN_CHUNK && P.chunked) {
        const u64 nchunks = P.n / POLY_ELEMS;
        start = nchunks * POLY_ELEMS;
        mine = first < nchunks ? (nchunks - first + stride - 1) / stride : 0;
        if ((u64)ord < mine * POLY_ELEMS)
            return (i64)((first + (u64)(ord / POLY_ELEMS) * stride) * POLY_ELEMS + ord % POLY_ELEMS);
    }
    return (i64)(start + first + ((u64)ord - mine * POLY_ELEMS) * stride);
}

// `ab` is false for absdiff and reldiff: their mean |x| is their mean, as the CPU engine has it.
// `sq`: whether the stream's sum of squares is wanted.
__device__ __forceinline__ void stream_finish(const Params& P, const Stream& r, double cnt, bool ab, bool sq, Acc& a) {
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
    a.imn = global_index(P, r.imn); a.imx = global_index(P, r.imx);
    a.inan = -1; a.nnan = 0; a.ninf = 0; a.pad = 0;  // the block's tallies are added after the merge (warps_to_part's threads)
}

__device__ __forceinline__ void acc_merge(Acc& r, const Acc& o) {
    if (o.n > 0) {
        if (r.n == 0) {
            r.n = o.n; r.mean = o.mean; r.m2 = o.m2;
        } else {
            const double tot = r.n + o.n;
            const double delta = o.mean - r.mean;
            r.mean += delta * (o.n / tot);
            r.m2 += o.m2 + delta * delta * (r.n * o.n / tot);
            r.n = tot;
        }
    }
    r.sum += o.sum; r.sq += o.sq; r.ab += o.ab;
    if (o.imn >= 0 && (r.imn < 0 || o.mn < r.mn || (o.mn == r.mn && o.imn < r.imn))) { r.mn = o.mn; r.imn = o.imn; }
    if (o.imx >= 0 && (r.imx < 0 || o.mx > r.mx || (o.mx == r.mx && o.imx < r.imx))) { r.mx = o.mx; r.imx = o.imx; }
    if (o.inan >= 0 && (r.inan < 0 || o.inan < r.inan)) r.inan = o.inan;
    r.nnan += o.nnan; r.ninf += o.ninf;
}

__device__ __forceinline__ Acc acc_shfl(const Acc& a, int delta) {
    const unsigned m = 0xFFFFFFFFu;
    Acc o;
    o.n = __shfl_down_sync(m, a.n, delta); o.mean = __shfl_down_sync(m, a.mean, delta);
    o.m2 = __shfl_down_sync(m, a.m2, delta); o.sum = __shfl_down_sync(m, a.sum, delta);
    o.sq = __shfl_down_sync(m, a.sq, delta); o.ab = __shfl_down_sync(m, a.ab, delta);
    o.mn = __shfl_down_sync(m, a.mn, delta); o.mx = __shfl_down_sync(m, a.mx, delta);
    o.imn = __shfl_down_sync(m, a.imn, delta); o.imx = __shfl_down_sync(m, a.imx, delta);
    o.inan = __shfl_down_sync(m, a.inan, delta);
    o.nnan = __shfl_down_sync(m, a.nnan, delta); o.ninf = __shfl_down_sync(m, a.ninf, delta);
    o.pad = 0;
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

// dynamic shared memory: the ring (POLY_STAGES x 2 x POLY_THREADS x 16 bytes), then 2 x POLY_FIRST_BINS counters.
// RANGES: the variant that gathers the predicted ranges' keys (poly_stats_ranges), compiled apart so
// that the plain pass keeps its registers.
template <bool RANGES>
__device__ __forceinline__ void stats_pass(const Params& P) {
    extern __shared__ uint4 smem[];
    uint4* ring = smem;
    u32* hist = (u32*)(smem + POLY_STAGES * 2 * POLY_THREADS);
    __shared__ Acc warp_acc[POLY_THREADS / 32][4];
    __shared__ double warp_dot[POLY_THREADS / 32];
    __shared__ u64 warp_fails[POLY_THREADS / 32];
    __shared__ Tallies tallies;
    __shared__ u64 range_counts[2 * POLY_RANGES + 4];  // below each range, then the largest fill and the fills' sum per stream
    const bool with_hist = P.hist != 0;
    const bool with_ranges = RANGES;
    if (threadIdx.x < 2 * POLY_RANGES + 4) range_counts[threadIdx.x] = 0;
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
            const KT key = order_key(v.v[2 + s]);
            if (poly_plan.nranges[s] == 0) {  // not predicted: the first digit, for the ordinary select
                if (with_hist) atomicAdd(&hist[s * POLY_FIRST_BINS + (int)(key >> (POLY_KEY_BITS - POLY_FIRST_BITS))], 1u);
                continue;
            }
            bool in = false;
#pragma unroll
            for (int j = 0; j < POLY_RANGES; ++j) {
                const KT lo = (KT)poly_plan.lo[s * POLY_RANGES + j];
                below[s * POLY_RANGES + j] += key < lo;
                in |= (KT)(key - lo) <= (KT)((KT)poly_plan.hi[s * POLY_RANGES + j] - lo);
            }
            if (in) {
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
                element_raw(P, lane_raw<Size<POLY_DTA>::value>(ra, h + e), lane_raw<Size<POLY_DTB>::value>(rb, h + e), v[e]);
            if (sub_chunk_finite(v)) {
                if (cnt == 0)
                    for (int k = 0; k < 4; ++k) r[k].c = (double)v[0].v[k];
#pragma unroll
                for (int e = 0; e < POLY_SUB; ++e) {
                    const double x = (double)v[e].v[0], y = (double)v[e].v[1];
                    sum_value<true, true>(r[0], x);
                    sum_value<true, true>(r[1], y);
                    sum_value<true, false>(r[2], (double)v[e].v[2]);
                    sum_value<false, false>(r[3], (double)v[e].v[3]);
                    dot = __fma_rn(x, y, dot);
                    fails += (v[e].v[2] > atol) & (v[e].v[3] > rtol);
                    if (with_hist && !RANGES) {
                        atomicAdd(&hist[order_key(v[e].v[2]) >> (POLY_KEY_BITS - POLY_FIRST_BITS)], 1u);
                        atomicAdd(&hist[POLY_FIRST_BINS + (order_key(v[e].v[3]) >> (POLY_KEY_BITS - POLY_FIRST_BITS))], 1u);
                    }
                    if (with_ranges) in_ranges(v[e]);
                }
                extrema_finite<0>(r[0], v, cnt);
                extrema_finite<1>(r[1], v, cnt);
                extrema_finite<2>(r[2], v, cnt);
                extrema_finite<3>(r[3], v, cnt);
                cnt += POLY_SUB;
            } else {
#pragma unroll
                for (int e = 0; e < POLY_SUB; ++e) one(j0 + h + e, v[e], true);
            }
        }
    };
    for_each_pair<false>(P, ring, chunk, one);
    Acc a[4];
    const double dcnt = (double)cnt;
    stream_finish(P, r[0], dcnt, true, true, a[0]);
    stream_finish(P, r[1], dcnt, true, true, a[1]);
    stream_finish(P, r[2], dcnt, false, true, a[2]);
    stream_finish(P, r[3], dcnt, false, false, a[3]);
    u64 f64s = fails;
    for (int delta = 16; delta > 0; delta >>= 1) {
        for (int k = 0; k < 4; ++k) {
            const Acc o = acc_shfl(a[k], delta);
            acc_merge(a[k], o);
        }
        dot += __shfl_down_sync(0xFFFFFFFFu, dot, delta);
        f64s += __shfl_down_sync(0xFFFFFFFFu, f64s, delta);
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (with_ranges) {
#pragma unroll
        for (int j = 0; j < 2 * POLY_RANGES; ++j) {
            u64 x = below[j];
            for (int delta = 16; delta > 0; delta >>= 1) x += __shfl_down_sync(0xFFFFFFFFu, x, delta);
            if (lane == 0 && x) atomicAdd(&range_counts[j], x);
        }
#pragma unroll
        for (int s = 0; s < 2; ++s) {
            ((u32*)P.rfills)[(u64)s * gridDim.x * blockDim.x + (u64)blockIdx.x * blockDim.x + threadIdx.x] = rfill[s];
            u32 mx = rfill[s];
            u64 sum = rfill[s];
            for (int delta = 16; delta > 0; delta >>= 1) {
                mx = max(mx, __shfl_down_sync(0xFFFFFFFFu, mx, delta));
                sum += __shfl_down_sync(0xFFFFFFFFu, sum, delta);
            }
            if (lane == 0) {
                atomicMax(&range_counts[2 * POLY_RANGES + s], (u64)mx);
                atomicAdd(&range_counts[2 * POLY_RANGES + 2 + s], sum);
            }
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
    if (with_ranges && threadIdx.x < 2 * POLY_RANGES + 4) {
        u64* ro = (u64*)P.rout;
        const u64 c = range_counts[threadIdx.x];
        if (threadIdx.x >= 2 * POLY_RANGES && threadIdx.x < 2 * POLY_RANGES + 2) atomicMax(&ro[threadIdx.x], c);
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
    for (u64 i = share; i < P.seg_len[0]; i += PER_STREAM * 32) acc_merge(a, parts[i].s[k]);
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

// -- order statistics: radix passes -------------------------------------------------------------------
// Keys of one stream on their way to its buffer: each warp stages them in shared memory and
// writes POLY_FLUSH of them at a time (coalesced stores) into a run of POLY_RESERVE slots of the
// buffer it reserved with one atomic: a stream's counter, which every warp of the grid shares,
// sees one atomic per POLY_RESERVE keys (one per POLY_FLUSH keys made it the gather's bottleneck).
#define POLY_STAGE_KEYS (POLY_KEY_BITS == 32 ? 128 : 64)
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
    extern __shared__ uint4 smem[];
    __shared__ signed char table[2 << POLY_TABLE_BITS];
    __shared__ int first_of[4];
    const int warp = threadIdx.x / 32;
    KT* stage = (KT*)(smem + POLY_STAGES * 2 * POLY_THREADS) + warp * 4 * POLY_STAGE_KEYS;
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
    extern __shared__ uint4 smem[];
    __shared__ signed char table[2 << POLY_TABLE_BITS];
    __shared__ int first_of[4];
    __shared__ int shift[POLY_MAX_GROUPS];
    __shared__ u32 mask[POLY_MAX_GROUPS];
    uint4* ring = smem;
    u32* shist = (u32*)(smem + POLY_STAGES * 2 * POLY_THREADS);
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
// PLANNED (poly_keys_hist_planned): the groups are stream plan_stream's planned ranges (poly_plan).
template <bool COLLECT, bool PLANNED = false>
__device__ __forceinline__ void keys_pass(const Params& P) {
    extern __shared__ u32 shist[];
    auto group = [&](int g) -> const Group& {
        if constexpr (PLANNED) return poly_plan.groups[P.plan_stream * POLY_RANGES + g];
        else return P.groups[g];
    };
    const int ng = PLANNED ? poly_plan.nranges[P.plan_stream] : P.ngroups;
    const KT* keys = (const KT*)P.seg[0];
    if (!COLLECT) {
        for (int k = threadIdx.x; k < ng * POLY_BINS; k += blockDim.x) shist[k] = 0;
        __syncthreads();
    }
    auto count = [&](KT key) {
        if (key == 0) return;
        for (int g = 0; g < ng; ++g) {
            if (in_group(group(g), key)) {
                if (COLLECT) {
                    const u64 at = atomicAdd((u64*)P.hist, 1ull);
                    if (at < P.seg_len[1]) ((KT*)P.seg[1])[at] = key;
                } else {
                    atomicAdd(&shist[g * POLY_BINS + digit_of(group(g), key)], 1u);
                }
                return;
            }
        }
    };
    const u64 stride = (u64)gridDim.x * blockDim.x;
    if (P.nregions) {  // the statistics pass's regions (one per thread of it): a warp reads one up to its fill
        const u32* fills = (const u32*)P.out;
        const u32 warps = gridDim.x * (blockDim.x / 32), lane = threadIdx.x & 31;
        for (u32 r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; r < P.nregions; r += warps) {
            const u32 len = min(fills[r], P.rcap);
            const KT* region = keys + (u64)r * P.rcap;
            u32 i = lane;
            // four loads in flight per lane before their keys are counted: a region's read is
            // otherwise a chain of dependent round trips to memory (the pass was latency-bound)
            for (; i + 96 < len; i += 128) {
                const KT k0 = __ldg(region + i), k1 = __ldg(region + i + 32), k2 = __ldg(region + i + 64),
                         k3 = __ldg(region + i + 96);
                count(k0);
                count(k1);
                count(k2);
                count(k3);
            }
            for (; i < len; i += 32) count(__ldg(region + i));
        }
    } else {
        const u64 written = *(const u64*)P.out;
        const u64 len = written < P.seg_len[0] ? written : P.seg_len[0];
        u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
        for (; i + 3 * stride < len; i += 4 * stride) {  // four loads in flight, as for a region
            const KT k0 = __ldg(keys + i), k1 = __ldg(keys + i + stride), k2 = __ldg(keys + i + 2 * stride),
                     k3 = __ldg(keys + i + 3 * stride);
            count(k0);
            count(k1);
            count(k2);
            count(k3);
        }
        for (; i < len; i += stride) count(__ldg(keys + i));
    }
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
extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_keys_hist_planned(const Params P) {
    keys_pass<false, true>(P);
}

// -- the ranks of a mid-size input, selected on the device ------------------------------------------
// The wanted ranks of absdiff and reldiff (``SelState``, at Params.sel) are narrowed with no host
// round trip: poly_select_first descends them by the statistics pass's first digit, then each
// poly_select_input pass counts the next ``sel_dbits`` key bits of the elements in each target's
// group over the input, and the last of its blocks to finish descends every target by the merged
// histograms (at Params.hist, ntargets x 2^sel_dbits u64, zero before the first pass) and clears
// them for the next pass, launched right behind it. Targets of one group (a rank and its
// neighbour) share the first one's histogram.
struct SelTarget {
    u64 prefix;  // known top `bits` bits of the key
    u64 rank;    // rank among the keys with that prefix
    int stream;  // 2 absdiff, 3 reldiff
    int bits;
};

struct SelState {
    SelTarget t[POLY_SEL_TARGETS];
    u32 done_blocks;  // blocks of the current pass that have merged their histograms
    int ntargets;
};

// Warp-wide (the whole warp calls it): descends target `t` by histogram `h` of its next `dbits`
// key bits: the digit whose running count passes its rank joins its prefix. `h` is read from L2
// (other blocks' atomics wrote it). Each lane owns a run of bins and loads POLY_DESCEND_LOADS of
// them at once, two bins a load where aligned: one round trip to L2 per batch, not per bin (a
// 4096-bin descend took ~30 us), and half the requests (the lanes' runs share no cache line).
#define POLY_DESCEND_LOADS 16
__device__ __forceinline__ void descend_load(u64 (&c)[POLY_DESCEND_LOADS], const u64* h, int from, int end) {
    if (from + POLY_DESCEND_LOADS <= end && ((size_t)(h + from) & 15) == 0) {
        const ulonglong2* v = (const ulonglong2*)(h + from);
#pragma unroll
        for (int j = 0; j < POLY_DESCEND_LOADS / 2; ++j) {
            const ulonglong2 x = __ldcg(v + j);
            c[2 * j] = x.x;
            c[2 * j + 1] = x.y;
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < POLY_DESCEND_LOADS; ++j) c[j] = from + j < end ? __ldcg(h + from + j) : 0;
}

__device__ __noinline__ void warp_descend(SelTarget* t, const u64* h, int dbits) {
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
    if (total == 0) return;  // cannot happen: the rank lies among the group's keys
    if (r >= total) r = total - 1;
    const unsigned owner = __ballot_sync(0xFFFFFFFFu, incl - sum <= r && r < incl);
    if (lane != __ffs(owner) - 1) return;
    u64 below = incl - sum;
    for (int k = first; k < end; k += POLY_DESCEND_LOADS) {
        descend_load(c, h, k, end);
#pragma unroll
        for (int j = 0; j < POLY_DESCEND_LOADS; ++j) {
            if (below + c[j] > r) {  // (bins past the end load 0: never taken)
                t->prefix = (t->prefix << dbits) | (u64)(k + j);
                t->rank = r - below;
                t->bits += dbits;
                return;
            }
            below += c[j];
        }
    }
}

// The first descend, right behind the statistics pass: every target (its prefix empty) by the
// pass's first-digit histogram of its stream (at Params.hist: absdiff's, then reldiff's). Launched
// with a block per target, of which one warp works: a descend's loads are bound by its SM's
// requests to L2, so the targets are spread over as many SMs.
extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_select_first(const Params P) {
    SelState* S = (SelState*)P.sel;
    const int t = blockIdx.x;
    if (threadIdx.x < 32 && t < S->ntargets)
        if (S->t[t].stream >= 2 && S->t[t].stream <= 3 && S->t[t].bits == 0)
            warp_descend(&S->t[t], (const u64*)P.hist + (u64)(S->t[t].stream - 2) * POLY_FIRST_BINS, POLY_FIRST_BITS);
}

// dynamic shared memory: the ring, then ntargets x 2^sel_dbits counters
extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_select_input(const Params P) {
    extern __shared__ uint4 smem[];
    __shared__ SelTarget st[POLY_SEL_TARGETS];
    __shared__ int owner[POLY_SEL_TARGETS];  // the first target of the same group: whose histogram counts
    // per stream and value of a key's top POLY_TABLE_BITS bits (all known: the first digit came
    // from the statistics pass), the first counting target whose prefix starts so, then the next
    __shared__ signed char head[2 << POLY_TABLE_BITS];
    __shared__ signed char next[POLY_SEL_TARGETS];
    __shared__ int last;
    static_assert(POLY_FIRST_BITS >= POLY_TABLE_BITS, "the table needs the top bits of every prefix");
    SelState* S = (SelState*)P.sel;
    const int nt = S->ntargets, dbits = P.sel_dbits, bins = 1 << dbits;
    uint4* ring = smem;
    u32* shist = (u32*)(smem + POLY_STAGES * 2 * POLY_THREADS);
    for (int k = threadIdx.x; k < nt * bins; k += blockDim.x) shist[k] = 0;
    for (int k = threadIdx.x; k < (2 << POLY_TABLE_BITS); k += blockDim.x) head[k] = -1;
    if (threadIdx.x < nt) st[threadIdx.x] = S->t[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int t = 0; t < nt; ++t) {
            // (every target has its first digit and room for this one: the statistics pass counts
            // every element; a target that had not is left as it is, its key reported unknown)
            if (st[t].bits < POLY_TABLE_BITS || st[t].bits + dbits > POLY_KEY_BITS || st[t].stream < 2 || st[t].stream > 3) {
                owner[t] = -1;
                continue;
            }
            int o = t;
            for (int u = 0; u < t && o == t; ++u)
                if (owner[u] >= 0 && st[u].stream == st[t].stream && st[u].bits == st[t].bits && st[u].prefix == st[t].prefix) o = u;
            owner[t] = o;
            if (o == t) {
                const int at = ((st[t].stream - 2) << POLY_TABLE_BITS) + (int)(st[t].prefix >> (st[t].bits - POLY_TABLE_BITS));
                next[t] = head[at];
                head[at] = (signed char)t;
            }
        }
    }
    __syncthreads();
    auto one = [&](u64, const Vals& v, bool) {
#pragma unroll
        for (int s = 0; s < 2; ++s) {
            const KT key = order_key(v.v[2 + s]);
            // a stream's groups are disjoint: one holds the key at most
            for (int t = head[(s << POLY_TABLE_BITS) + (int)(key >> (POLY_KEY_BITS - POLY_TABLE_BITS))]; t >= 0; t = next[t]) {
                const int bits = st[t].bits;
                if ((u64)(key >> (POLY_KEY_BITS - bits)) == st[t].prefix) {
                    atomicAdd(&shist[t * bins + (u32)((key >> (POLY_KEY_BITS - bits - dbits)) & (KT)(bins - 1))], 1u);
                    break;
                }
            }
        }
    };
    for_each_value(P, ring, one);
    __syncthreads();
    u64* hist = (u64*)P.hist;
    for (int k = threadIdx.x; k < nt * bins; k += blockDim.x) {
        const u32 c = shist[k];
        if (c && owner[k / bins] == k / bins) atomicAdd(&hist[k], (u64)c);
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(&S->done_blocks, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
    for (int t = warp; t < nt; t += warps)
        if (owner[t] >= 0) warp_descend(&S->t[t], hist + (u64)owner[t] * bins, dbits);
    __syncthreads();
    for (int k = threadIdx.x; k < nt * bins; k += blockDim.x) hist[k] = 0;
    if (threadIdx.x == 0) S->done_blocks = 0;
}

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
struct PlanState {
    SelTarget t[POLY_PLAN_ENDS];  // each asked position's key, narrowed 8 bits a phase
    u64 hist[POLY_PLAN_ENDS][256];
    u32 below[POLY_PLAN_ENDS], upto[POLY_PLAN_ENDS];  // sample keys below and up to each end's key
    u32 done_blocks;
    int pad;
};

__device__ __forceinline__ int bit_length(KT x) {
    return x == 0 ? 0 : POLY_KEY_BITS - (POLY_KEY_BITS == 32 ? __clz((u32)x) : __clzll((u64)x));
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
        Group g;
        g.prefix = 0;
        g.stream = 2 + s;
        g.bits = min(POLY_KEY_BITS - bit_length((KT)(hi - lo)), POLY_KEY_BITS - 1);
        g.dbits = min(POLY_DIGIT_BITS, POLY_KEY_BITS - g.bits);
        g.pad = 0;
        g.lo = lo;
        g.hi = hi;
        table->groups[s * POLY_RANGES + j] = g;
    }
}

extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_plan_ranges(const Params P) {
    __shared__ u32 shist[POLY_PLAN_ENDS][256];
    __shared__ SelTarget st[POLY_PLAN_ENDS];
    __shared__ int owner[POLY_PLAN_ENDS];
    __shared__ KT value[POLY_PLAN_ENDS];
    __shared__ int last;
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
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0) last = atomicAdd(&state->done_blocks, 1u) == POLY_PLAN_BLOCKS - 1;
        __syncthreads();
        if (!last) return;
        __threadfence();
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
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(&state->done_blocks, 1u) == POLY_PLAN_BLOCKS - 1;
    __syncthreads();
    if (!last || threadIdx.x != 0) return;
    __threadfence();
    u32 below[POLY_PLAN_ENDS], upto[POLY_PLAN_ENDS];
    for (int t = 0; t < nt; ++t) {
        below[t] = __ldcg(&state->below[t]);
        upto[t] = __ldcg(&state->upto[t]);
    }
    plan_table(P, s, ask, value, below, upto);
}

extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_count_zeros(const Params P) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 zeros = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < P.n; i += stride) {
        const char* pb = (const char*)P.b.ptr + offset_of(P.b, i);
        zeros += value_of<POLY_DTB>(load_raw<POLY_DTB>(pb)) == 0.0;
    }
    for (int delta = 16; delta > 0; delta >>= 1) zeros += __shfl_down_sync(0xFFFFFFFFu, zeros, delta);
    if (threadIdx.x % 32 == 0 && zeros) atomicAdd((u64*)P.out, zeros);
}
"""
