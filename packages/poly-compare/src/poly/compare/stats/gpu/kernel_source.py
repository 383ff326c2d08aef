"""
The CUDA C++ source of the on-device error statistics, compiled at run time by NVRTC.

One source serves every dtype pair: ``kernel_options`` turns a pair into preprocessor
definitions, so each compiled variant has its loads and its difference arithmetic fixed at
compile time (contiguity, ``infinities_compare_equal`` and the histogram are run-time flags,
so that a pair compiles once). The definitions mirror the CPU engine's
(poly-core's native/src: element loads, ``CompareConfig``, the float32/float64/integer
differences, the order-preserving keys); the structures here mirror ``launch_params``.

Kernels:

- ``poly_stats``: one pass over both arrays; per block, the four streams' (count, mean, M2)
  moments, plain sums, extrema with their first indices, NaN/Inf counts, the dot product and
  the mismatch count, merged in float64 and written as one record per block. Given a
  histogram buffer, it also counts the top key digit of absdiff and reldiff (the order statistics'
  first radix pass).
- ``poly_radix_hist``: one radix-select pass: for up to ``POLY_MAX_GROUPS`` (stream, key
  prefix) groups, a histogram of the next key digit of the elements with that prefix.
- ``poly_radix_gather``: the keys of the elements with a group's prefix, once few enough.
- ``poly_count_zeros``: the number of zeros in ``b`` (the simple comparison's warning).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KERNEL_SOURCE", "KernelVariant", "kernel_options", "DIGIT_BITS", "MAX_GROUPS", "MAX_DIMS", "THREADS", "STATS_THREADS"]

DIGIT_BITS = 11  # radix digit: 2048 bins, 8 KiB of shared counters per group
MAX_GROUPS = 8  # groups per radix launch (64 KiB of shared counters at most)
MAX_DIMS = 8  # dimensions of a strided view after collapsing
THREADS = 256  # threads per block of the radix and zero-count kernels
STATS_THREADS = 128  # threads per block of the statistics kernel (its many accumulators limit occupancy)

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
        "POLY_DIGIT_BITS": DIGIT_BITS, "POLY_MAX_GROUPS": MAX_GROUPS, "POLY_MAX_DIMS": MAX_DIMS,
        "POLY_THREADS": THREADS, "POLY_STATS_THREADS": STATS_THREADS,
    }
    return [f"-D{k}={int(val)}" for k, val in flags.items()]


KERNEL_SOURCE = r"""
typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

#define POLY_BINS (1 << POLY_DIGIT_BITS)

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
};

struct Params {
    View a, b;
    u64 n;
    double atol, rtol, eps;
    u64 den_min_bits;
    u64 out;      // poly_stats: one Part per block; radix: u64 counters
    u64 hist;     // poly_stats (optional, 0 for none): 2 x POLY_BINS u64 counts; radix_hist: groups x POLY_BINS
    u64 keys;     // poly_radix_gather: groups x cap keys
    u64 cap;
    int ngroups;
    int inf_equal;  // equal infinities give absdiff 0
    Group groups[POLY_MAX_GROUPS];
};

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

__device__ __forceinline__ bool is_contiguous(const View& v) { return v.ndim == 1 && v.strides[0] == v.itemsize; }

__device__ __forceinline__ i64 offset_of(const View& v, u64 i, bool contiguous) {
    if (contiguous) return (i64)i * v.itemsize;
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
// An element's bytes, zero-extended: loads are issued for several elements before any arithmetic.
template <int T>
__device__ __forceinline__ u64 load_raw(const char* p) {
    if (T == 0 || T == 1 || T == 5) return (u64)*(const unsigned char*)p;
    if (T == 2 || T == 6 || T == 9 || T == 10) return (u64)*(const unsigned short*)p;
    if (T == 3 || T == 7 || T == 11) return (u64)*(const u32*)p;
    return *(const u64*)p;
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

// An integer (or bool) element as 64-bit two's complement: sign-extended from signed types.
template <int T>
__device__ __forceinline__ u64 bits_of(u64 r) {
    if (T == 0) return r != 0 ? 1ull : 0ull;
    if (T == 1) return (u64)(i64)(signed char)(unsigned char)r;
    if (T == 2) return (u64)(i64)(short)(unsigned short)r;
    if (T == 3) return (u64)(i64)(int)(u32)r;
    return r;
}

__device__ __forceinline__ bool is_int_code(int t) { return t <= 8; }

// Values of the compute precision: float for float16/bfloat16/float32 (and bool beside them)
// pairs, whose values are all exact in float, double otherwise. Sums are always double.
#if POLY_F32
typedef float VT;
#else
typedef double VT;
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
    const float fx = (float)value_of<POLY_DTA>(ra), fy = (float)value_of<POLY_DTB>(rb);
    float d = fabsf(__fsub_rn(fx, fy));
    if (P.inf_equal && isinf(fx) && fx == fy) d = 0.0f;
    const float den = (fy == 0.0f) ? (float)P.eps : fabsf(fy);
    out.v[0] = fx;
    out.v[1] = fy;
    out.v[2] = d;
    out.v[3] = __fdiv_rn(d, den);
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
    if (P.inf_equal && isinf(x) && x == y) d = 0.0;
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

// Order-preserving key of a value of the compute precision (float32 keys in the high 32 bits).
__device__ __forceinline__ u64 order_key(VT v) {
#if POLY_F32
    u32 u = __float_as_uint(v);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return (u64)u << 32;
#else
    u64 u = (u64)__double_as_longlong(v);
    return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
#endif
}

#define POLY_UNROLL 8

// Calls f(j, values) for every element j of this thread (grid-stride), loading POLY_UNROLL
// elements of both arrays before any arithmetic so that enough loads are in flight.
template <typename F>
__device__ __forceinline__ void for_each_element(const Params& P, F&& f) {
    const bool ca = is_contiguous(P.a), cb = is_contiguous(P.b);
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < P.n; i += stride * POLY_UNROLL) {
        u64 ra[POLY_UNROLL], rb[POLY_UNROLL];
#pragma unroll
        for (int u = 0; u < POLY_UNROLL; ++u) {
            const u64 j = i + (u64)u * stride;
            if (j < P.n) {
                ra[u] = load_raw<POLY_DTA>((const char*)P.a.ptr + offset_of(P.a, j, ca));
                rb[u] = load_raw<POLY_DTB>((const char*)P.b.ptr + offset_of(P.b, j, cb));
            }
        }
#pragma unroll
        for (int u = 0; u < POLY_UNROLL; ++u) {
            const u64 j = i + (u64)u * stride;
            if (j >= P.n) break;
            Vals v;
            element_raw(P, ra[u], rb[u], v);
            f(j, v);
        }
    }
}

// Per-thread running statistics of one stream: sums shifted by the stream's first finite value
// (the element count is shared by the four streams).
struct Raw {
    double c, s1, s2, sq, ab;
    VT mn, mx;
    i64 imn, imx, inan;
    u32 nnan, ninf;
};

__device__ __forceinline__ void raw_init(Raw& r) {
    r.c = 0; r.s1 = 0; r.s2 = 0; r.sq = 0; r.ab = 0; r.mn = 0; r.mx = 0;
    r.imn = -1; r.imx = -1; r.inan = -1; r.nnan = 0; r.ninf = 0;
}

template <bool SQ, bool AB>
__device__ __forceinline__ void raw_feed(Raw& r, VT xv, i64 i, bool first) {
    const double x = (double)xv;
    if (first) r.c = isfinite(xv) ? x : 0.0;
    const double xs = __dsub_rn(x, r.c);
    r.s1 = __dadd_rn(r.s1, xs);
    r.s2 = __dadd_rn(r.s2, __dmul_rn(xs, xs));
    if (SQ) r.sq = __dadd_rn(r.sq, __dmul_rn(x, x));
    if (AB) r.ab = __dadd_rn(r.ab, fabs(x));
    if (isnan(xv)) {
        ++r.nnan;
        if (r.inan < 0) r.inan = i;
    } else {
        if (isinf(xv)) ++r.ninf;
        if (r.imn < 0 || xv < r.mn) { r.mn = xv; r.imn = i; }
        if (r.imx < 0 || xv > r.mx) { r.mx = xv; r.imx = i; }
    }
}

// `ab` is false for absdiff and reldiff: their mean |x| is their mean, as the CPU engine has it.
__device__ __forceinline__ void raw_finish(const Raw& r, double cnt, bool ab, Acc& a) {
    a.n = cnt;
    if (cnt > 0) {
        a.mean = r.c + r.s1 / cnt;
        const double m2 = r.s2 - r.s1 * r.s1 / cnt;
        a.m2 = m2 > 0 ? m2 : 0.0;
        a.sum = r.c * cnt + r.s1;  // used only where NaN or Inf make it NaN or +-Inf
    } else {
        a.mean = 0; a.m2 = 0; a.sum = 0;
    }
    a.sq = r.sq; a.ab = ab ? r.ab : a.sum;
    a.mn = (double)r.mn; a.mx = (double)r.mx; a.imn = r.imn; a.imx = r.imx; a.inan = r.inan;
    a.nnan = r.nnan; a.ninf = r.ninf; a.pad = 0;
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

extern "C" __global__ void __launch_bounds__(POLY_STATS_THREADS, 3) poly_stats(const Params P) {
    __shared__ Acc warp_acc[POLY_STATS_THREADS / 32][4];
    __shared__ double warp_dot[POLY_STATS_THREADS / 32];
    __shared__ u64 warp_fails[POLY_STATS_THREADS / 32];
    __shared__ u32 hist[2][POLY_BINS];
    const bool with_hist = P.hist != 0;
    if (with_hist) {
        for (int k = threadIdx.x; k < 2 * POLY_BINS; k += blockDim.x) (&hist[0][0])[k] = 0;
        __syncthreads();
    }
    Raw r[4];
    for (int k = 0; k < 4; ++k) raw_init(r[k]);
    double cnt = 0, dot = 0;
    u64 fails = 0;
    const double atol = P.atol, rtol = P.rtol;
    for_each_element(P, [&](u64 j, const Vals& v) {
        const bool first = cnt == 0.0;
        cnt += 1.0;
        raw_feed<true, true>(r[0], v.v[0], (i64)j, first);
        raw_feed<true, true>(r[1], v.v[1], (i64)j, first);
        raw_feed<true, false>(r[2], v.v[2], (i64)j, first);
        raw_feed<false, false>(r[3], v.v[3], (i64)j, first);
        dot = __dadd_rn(dot, __dmul_rn((double)v.v[0], (double)v.v[1]));
        fails += (!((double)v.v[2] <= atol)) & (!((double)v.v[3] <= rtol));
        if (with_hist) {
            atomicAdd(&hist[0][order_key(v.v[2]) >> (64 - POLY_DIGIT_BITS)], 1u);
            atomicAdd(&hist[1][order_key(v.v[3]) >> (64 - POLY_DIGIT_BITS)], 1u);
        }
    });
    Acc a[4];
    raw_finish(r[0], cnt, true, a[0]);
    raw_finish(r[1], cnt, true, a[1]);
    raw_finish(r[2], cnt, false, a[2]);
    raw_finish(r[3], cnt, false, a[3]);
    for (int delta = 16; delta > 0; delta >>= 1) {
        for (int k = 0; k < 4; ++k) {
            const Acc o = acc_shfl(a[k], delta);
            acc_merge(a[k], o);
        }
        dot += __shfl_down_sync(0xFFFFFFFFu, dot, delta);
        fails += __shfl_down_sync(0xFFFFFFFFu, fails, delta);
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) {
        for (int k = 0; k < 4; ++k) warp_acc[warp][k] = a[k];
        warp_dot[warp] = dot;
        warp_fails[warp] = fails;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        Part* out = (Part*)P.out + blockIdx.x;
        for (int k = 0; k < 4; ++k) {
            Acc t = warp_acc[0][k];
            for (int w = 1; w < POLY_STATS_THREADS / 32; ++w) acc_merge(t, warp_acc[w][k]);
            out->s[k] = t;
        }
        double d = 0;
        u64 f = 0;
        for (int w = 0; w < POLY_STATS_THREADS / 32; ++w) { d += warp_dot[w]; f += warp_fails[w]; }
        out->dot = d;
        out->fails = f;
    }
    if (with_hist) {
        __syncthreads();
        u64* g = (u64*)P.hist;
        for (int k = threadIdx.x; k < 2 * POLY_BINS; k += blockDim.x) {
            const u32 c = (&hist[0][0])[k];
            if (c) atomicAdd(&g[k], (u64)c);
        }
    }
}

__device__ __forceinline__ bool in_group(const Group& g, u64 key) {
    return g.bits == 0 || (key >> (64 - g.bits)) == g.prefix;
}

extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_radix_hist(const Params P) {
    extern __shared__ u32 shist[];
    const int total = P.ngroups * POLY_BINS;
    for (int k = threadIdx.x; k < total; k += blockDim.x) shist[k] = 0;
    __syncthreads();
    for_each_element(P, [&](u64, const Vals& v) {
        for (int g = 0; g < P.ngroups; ++g) {
            const Group& gr = P.groups[g];
            const u64 key = order_key(v.v[gr.stream]);
            if (in_group(gr, key)) {
                const u32 digit = (u32)((key >> (64 - gr.bits - gr.dbits)) & ((1ull << gr.dbits) - 1));
                atomicAdd(&shist[g * POLY_BINS + digit], 1u);
            }
        }
    });
    __syncthreads();
    u64* out = (u64*)P.hist;
    for (int k = threadIdx.x; k < total; k += blockDim.x) {
        const u32 c = shist[k];
        if (c) atomicAdd(&out[k], (u64)c);
    }
}

extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_radix_gather(const Params P) {
    u64* counts = (u64*)P.out;
    u64* keys = (u64*)P.keys;
    for_each_element(P, [&](u64, const Vals& v) {
        for (int g = 0; g < P.ngroups; ++g) {
            const Group& gr = P.groups[g];
            const u64 key = order_key(v.v[gr.stream]);
            if (in_group(gr, key)) {
                const u64 pos = atomicAdd(&counts[g], 1ull);
                if (pos < P.cap) keys[(u64)g * P.cap + pos] = key;
            }
        }
    });
}

extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_count_zeros(const Params P) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 zeros = 0;
    const bool cb = is_contiguous(P.b);
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < P.n; i += stride) {
        const char* pb = (const char*)P.b.ptr + offset_of(P.b, i, cb);
        zeros += value_of<POLY_DTB>(load_raw<POLY_DTB>(pb)) == 0.0;
    }
    for (int delta = 16; delta > 0; delta >>= 1) zeros += __shfl_down_sync(0xFFFFFFFFu, zeros, delta);
    if (threadIdx.x % 32 == 0 && zeros) atomicAdd((u64*)P.out, zeros);
}
"""
