// (Compiled once per instruction set, see kernels.hpp; strict IEEE semantics.)
// The one-pass float32 kernel: reads a block of two float32 inputs once and, in registers,
// forms |a - b| and the relative difference with NumPy's float32 rounding, the statistics of
// all four streams (extrema and the mismatch count in float32, eight lanes; sums in float64,
// two products folded per rounding), and the rank-window tallies of the order statistics
// (elements at or above each window, and the keys inside the windows, compacted).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace poly {
namespace POLY_ARCH {
namespace {

typedef float v8f __attribute__((vector_size(32)));
typedef std::int32_t v8i __attribute__((vector_size(32)));
typedef double v4d __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));

constexpr float kInfF = std::numeric_limits<float>::infinity();

inline v8f load8(const float* p) {
    v8f v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}
inline v8f splat8(float x) { return v8f{x, x, x, x, x, x, x, x}; }
inline v8i splat8i(std::int32_t x) { return v8i{x, x, x, x, x, x, x, x}; }
inline v4d splat4(double x) { return v4d{x, x, x, x}; }
inline v8f abs8(v8f x) { return (v8f)((v8i)x & splat8i(0x7FFFFFFF)); }
inline v8f sel8(v8i mask, v8f x, v8f y) { return (v8f)((mask & (v8i)x) | (~mask & (v8i)y)); }
inline v8f min8(v8f x, v8f m) { return x < m ? x : m; }  // keeps m where x is NaN
inline v8f max8(v8f x, v8f m) { return x > m ? x : m; }

inline v4d lo4(v8f x) {
#if defined(__AVX2__)
    return (v4d)_mm256_cvtps_pd(_mm256_castps256_ps128((__m256)x));
#else
    return __builtin_convertvector(__builtin_shufflevector(x, x, 0, 1, 2, 3), v4d);
#endif
}
inline v4d hi4(v8f x) {
#if defined(__AVX2__)
    return (v4d)_mm256_cvtps_pd(_mm256_extractf128_ps((__m256)x, 1));
#else
    return __builtin_convertvector(__builtin_shufflevector(x, x, 4, 5, 6, 7), v4d);
#endif
}
inline v4d abs4(v4d x) {
    typedef long long v4l __attribute__((vector_size(32)));
    const v4l mask = {0x7FFFFFFFFFFFFFFFLL, 0x7FFFFFFFFFFFFFFFLL, 0x7FFFFFFFFFFFFFFFLL, 0x7FFFFFFFFFFFFFFFLL};
    return (v4d)((v4l)x & mask);
}
// x * y + z, fused where the instruction set has FMA (one rounding instead of two).
inline v4d fma4(v4d x, v4d y, v4d z) {
#if defined(__FMA__)
    return (v4d)_mm256_fmadd_pd((__m256d)x, (__m256d)y, (__m256d)z);
#else
    return x * y + z;
#endif
}
inline double hsum4(v4d v) { return (v[0] + v[1]) + (v[2] + v[3]); }
inline float hmin8(v8f v) {
    float r = v[0];
    for (int i = 1; i < 8; ++i) r = v[i] < r ? v[i] : r;
    return r;
}
inline float hmax8(v8f v) {
    float r = v[0];
    for (int i = 1; i < 8; ++i) r = v[i] > r ? v[i] : r;
    return r;
}
inline std::int64_t hsum8i(v8i v) {
    std::int64_t r = 0;
    for (int i = 0; i < 8; ++i) r += v[i];
    return r;
}

#if defined(__AVX2__)
// Lane permutations that move the lanes set in an 8-bit mask to the front (AVX2 compaction).
struct CompactTable {
    alignas(32) std::int32_t idx[256][8];
    CompactTable() {
        for (int mask = 0; mask < 256; ++mask) {
            int k = 0;
            for (int j = 0; j < 8; ++j)
                if (mask & (1 << j)) idx[mask][k++] = j;
            for (; k < 8; ++k) idx[mask][k] = 0;
        }
    }
};
const CompactTable& compact_table() {
    static const CompactTable t;
    return t;
}
#endif

// Appends the lanes of `bits` selected by `in` to dst (which has room for 8 more).
inline std::size_t compact(v8i bits, v8i in, std::uint32_t* dst) {
#if defined(__AVX2__)
    const int mask = _mm256_movemask_ps((__m256)in);
    const __m256i perm = _mm256_load_si256(reinterpret_cast<const __m256i*>(compact_table().idx[mask]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permutevar8x32_epi32((__m256i)bits, perm));
    return static_cast<std::size_t>(__builtin_popcount(static_cast<unsigned>(mask)));
#else
    std::size_t k = 0;
    for (int j = 0; j < 8; ++j) {
        dst[k] = static_cast<std::uint32_t>(bits[j]);
        k += static_cast<std::size_t>(in[j] & 1);
    }
    return k;
#endif
}

// Window tallies of one stream's block (bits of non-negative floats, m a multiple of 8).
void tally(const float* v, std::size_t m, const WindowSet& w, int s, WindowTally& t) {
    const int nw = w.count[s];
    v8i ge_acc[kMaxWindows];
    v8i lo[kMaxWindows], hi[kMaxWindows];
    for (int k = 0; k < nw; ++k) {
        ge_acc[k] = splat8i(0);
        lo[k] = splat8i(w.lo_minus1[s][k]);
        hi[k] = splat8i(w.hi[s][k]);
    }
    std::uint32_t* dst = t.dst[s] + t.used[s];
    std::size_t used = 0;
    for (std::size_t i = 0; i < m; i += 8) {
        const v8i bits = (v8i)load8(v + i);
        v8i any = splat8i(0);
        for (int k = 0; k < nw; ++k) {
            const v8i ge = bits > lo[k];
            ge_acc[k] -= ge;
            any |= ge & ~(bits > hi[k]);
        }
        used += compact(bits, any, dst + used);
    }
    t.used[s] += used;
    for (int k = 0; k < nw; ++k) t.at_or_above[s][k] += static_cast<std::uint64_t>(hsum8i(ge_acc[k]));
}

inline v4d load4(const float* p) {
    v4f v;
    std::memcpy(&v, p, sizeof(v));
#if defined(__AVX2__)
    return (v4d)_mm256_cvtps_pd((__m128)v);
#else
    return __builtin_convertvector(v, v4d);
#endif
}

// The sums of block_stats.cpp, operation for operation (four lanes, lane j taking elements
// j, j+4, ... in order, products fused where that build fuses them), so that the figures
// equal those of the general path bit for bit: a, b and their dot product...
void sums_ab(const float* a, const float* b, std::size_t m, BlockStats& out) {
    const v4d ca = splat4(out.s[kA].shift), cb = splat4(out.s[kB].shift), zero = splat4(0.0);
    v4d s1a = zero, s2a = zero, sqa = zero, saa = zero, s1b = zero, s2b = zero, sqb = zero, sab = zero, dot = zero;
    for (std::size_t i = 0; i < m; i += 4) {
        const v4d x = load4(a + i), y = load4(b + i);
        const v4d xs = x - ca, ys = y - cb;
        s1a += xs; s2a = fma4(xs, xs, s2a); sqa = fma4(x, x, sqa); saa += abs4(x);
        s1b += ys; s2b = fma4(ys, ys, s2b); sqb = fma4(y, y, sqb); sab += abs4(y);
        dot = fma4(x, y, dot);
    }
    out.s[kA].s1 = hsum4(s1a); out.s[kA].s2 = hsum4(s2a); out.s[kA].sum_sq = hsum4(sqa); out.s[kA].sum_abs = hsum4(saa);
    out.s[kB].s1 = hsum4(s1b); out.s[kB].s2 = hsum4(s2b); out.s[kB].sum_sq = hsum4(sqb); out.s[kB].sum_abs = hsum4(sab);
    out.dot = hsum4(dot);
}

// ...and absdiff and reldiff.
void sums_dr(const float* ad, const float* rd, std::size_t m, BlockStats& out) {
    const v4d cd = splat4(out.s[kAbs].shift), cr = splat4(out.s[kRel].shift), zero = splat4(0.0);
    v4d s1d = zero, s2d = zero, sqd = zero, s1r = zero, s2r = zero;
    for (std::size_t i = 0; i < m; i += 4) {
        const v4d d = load4(ad + i), r = load4(rd + i);
        const v4d ds = d - cd, rs = r - cr;
        s1d += ds; s2d = fma4(ds, ds, s2d); sqd = fma4(d, d, sqd);
        s1r += rs; s2r = fma4(rs, rs, s2r);
    }
    out.s[kAbs].s1 = hsum4(s1d); out.s[kAbs].s2 = hsum4(s2d); out.s[kAbs].sum_sq = hsum4(sqd);
    out.s[kRel].s1 = hsum4(s1r); out.s[kRel].s2 = hsum4(s2r); out.s[kRel].sum_sq = 0;  // unused for reldiff
}

// Fills the rest of `s` from the fast sums; false when they are not finite (NaN/Inf or
// overflow).
bool finish(StreamBlock& s, std::size_t m) {
    if (!(std::isfinite(s.s1) && std::isfinite(s.s2))) return false;
    const double md = static_cast<double>(m);
    s.sum = s.shift * md + s.s1;
    s.mean = s.shift + s.s1 / md;
    const double m2 = s.s2 - s.s1 * s.s1 / md;
    s.m2 = m2 > 0 ? m2 : 0.0;
    s.nan = s.inf = 0;
    s.valid = m;
    return true;
}

inline double shift_of(float v) { return std::isfinite(v) ? static_cast<double>(v) : 0.0; }

// |a - b| and the relative difference of m (a multiple of 8) elements into ad/rd, with the
// mismatch count and the extrema of the four streams (float32, eight lanes: exact).
template <bool INF_EQ>
std::uint64_t diffs(const CompareConfig& cfg, const float* a, const float* b, std::size_t m, float* ad, float* rd,
                    BlockStats& out) {
    const v8f eps = splat8(static_cast<float>(cfg.eps));
    const v8f atol = splat8(static_cast<float>(cfg.atol)), rtol = splat8(static_cast<float>(cfg.rtol));
    v8i fails = splat8i(0);
    v8f mna = splat8(kInfF), mnb = mna, mnd = mna, mnr = mna;
    v8f mxa = splat8(-kInfF), mxb = mxa, mxd = mxa, mxr = mxa;
    for (std::size_t i = 0; i < m; i += 8) {
        const v8f x = load8(a + i), y = load8(b + i);
        mna = min8(x, mna); mxa = max8(x, mxa);
        mnb = min8(y, mnb); mxb = max8(y, mxb);
        v8f d = abs8(x - y);
        if constexpr (INF_EQ) d = sel8((abs8(x) == splat8(kInfF)) & (x == y), splat8(0.0f), d);
        const v8f den = sel8(y == splat8(0.0f), eps, abs8(y));
        const v8f r = d / den;
        std::memcpy(ad + i, &d, sizeof(d));
        std::memcpy(rd + i, &r, sizeof(r));
        fails -= ~(d <= atol) & ~(r <= rtol);
        mnd = min8(d, mnd); mxd = max8(d, mxd);
        mnr = min8(r, mnr); mxr = max8(r, mxr);
    }
    out.s[kA].mn = hmin8(mna); out.s[kA].mx = hmax8(mxa);
    out.s[kB].mn = hmin8(mnb); out.s[kB].mx = hmax8(mxb);
    out.s[kAbs].mn = hmin8(mnd); out.s[kAbs].mx = hmax8(mxd);
    out.s[kRel].mn = hmin8(mnr); out.s[kRel].mx = hmax8(mxr);
    return static_cast<std::uint64_t>(hsum8i(fails));
}

struct Scratch {
    alignas(64) float a[kBlock], b[kBlock], ad[kBlock], rd[kBlock];
};

template <bool INF_EQ>
bool fused_loop(const CompareConfig& cfg, const float* a, const float* b, std::size_t m, const WindowSet* w,
                WindowTally* t, BlockStats& out) {
    if (m == 0 || m > kBlock) return false;
    thread_local Scratch sc;
    const std::size_t m8 = (m + 7) & ~std::size_t{7};
    if (m8 != m) {
        // A partial block: pad to a multiple of 8 with the block's first element; the padding
        // is subtracted back out below (a duplicate cannot move an extremum).
        for (std::size_t j = 0; j < m8; ++j) {
            sc.a[j] = j < m ? a[j] : a[0];
            sc.b[j] = j < m ? b[j] : b[0];
        }
        a = sc.a;
        b = sc.b;
    }
    const std::uint64_t fails = diffs<INF_EQ>(cfg, a, b, m8, sc.ad, sc.rd, out);
    out.s[kA].shift = shift_of(a[0]);
    out.s[kB].shift = shift_of(b[0]);
    out.s[kAbs].shift = shift_of(sc.ad[0]);
    out.s[kRel].shift = shift_of(sc.rd[0]);
    sums_ab(a, b, m8, out);
    sums_dr(sc.ad, sc.rd, m8, out);
    out.fails = fails;
    if (w != nullptr) {
        if (w->count[0] > 0) tally(sc.ad, m8, *w, 0, *t);
        if (w->count[1] > 0) tally(sc.rd, m8, *w, 1, *t);
    }
    if (m8 != m) {
        // Take the padding (copies of element 0) back out of the counts and tallies.
        const std::size_t pad = m8 - m;
        const float d0 = sc.ad[0], r0 = sc.rd[0];
        out.fails -= pad * static_cast<std::uint64_t>(!(d0 <= static_cast<float>(cfg.atol)) && !(r0 <= static_cast<float>(cfg.rtol)));
        if (w != nullptr) {
            const float v0[2] = {d0, r0};
            for (int s = 0; s < 2; ++s) {
                std::int32_t bits;
                std::memcpy(&bits, &v0[s], 4);
                bool in = false;
                for (int k = 0; k < w->count[s]; ++k) {
                    if (bits > w->lo_minus1[s][k]) {
                        t->at_or_above[s][k] -= pad;
                        in = in || bits <= w->hi[s][k];
                    }
                }
                if (in) t->used[s] -= pad;  // the padding's copies are the last ones gathered
            }
        }
        // The sums saw the padding too: the exact path redoes them over the m elements.
        return false;
    }
    out.s[kAbs].sum_abs = out.s[kAbs].s1 + out.s[kAbs].shift * static_cast<double>(m);
    out.s[kRel].sum_abs = out.s[kRel].s1 + out.s[kRel].shift * static_cast<double>(m);
    bool ok = finish(out.s[kA], m);
    ok &= finish(out.s[kB], m);
    ok &= finish(out.s[kAbs], m);
    ok &= finish(out.s[kRel], m);
    return ok;
}

}  // namespace

bool fused_f32(const CompareConfig& cfg, const float* a, const float* b, std::size_t m, const WindowSet* w,
               WindowTally* t, BlockStats& out) {
    if (cfg.inf_equal) return fused_loop<true>(cfg, a, b, m, w, t, out);
    return fused_loop<false>(cfg, a, b, m, w, t, out);
}

}  // namespace POLY_ARCH
}  // namespace poly
