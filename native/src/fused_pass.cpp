// (Compiled once per instruction set, see kernels.hpp; strict IEEE semantics.)
// The one-pass float32 kernel: reads a block of two float32 inputs from memory once (while
// prefetching the next) and, over the block in L1, forms |a - b| and the relative difference
// with NumPy's float32 rounding, the statistics of all four streams (extrema and the mismatch
// count in float32, eight lanes; sums in float64, pairwise within an iteration), and the
// rank-window tallies of the order statistics (elements at or above each window, and the keys
// inside the windows, compacted). Each of those is its own short loop over the block, sized
// so that its accumulators stay in registers.
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
typedef std::uint32_t v8u __attribute__((vector_size(32)));
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
// Lane permutations that move the lanes set in an 8-bit mask to the front (AVX2 compaction),
// built at compile time: a function-local static would put a guard (and a call that spills
// the loop's registers) inside the hot loops.
struct CompactTable {
    alignas(32) std::int32_t idx[256][8];
};
constexpr CompactTable make_compact_table() {
    CompactTable t{};
    for (int mask = 0; mask < 256; ++mask) {
        int k = 0;
        for (int j = 0; j < 8; ++j)
            if (mask & (1 << j)) t.idx[mask][k++] = j;
        for (; k < 8; ++k) t.idx[mask][k] = 0;
    }
    return t;
}
constexpr CompactTable kCompact = make_compact_table();
#endif

// Appends the lanes of `bits` selected by `in` to dst (which has room for 8 more).
inline std::size_t compact(v8i bits, v8i in, std::uint32_t* dst) {
#if defined(__AVX2__)
    const int mask = _mm256_movemask_ps((__m256)in);
    const __m256i perm = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCompact.idx[mask]));
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

// Window tallies of one stream's block (bits of non-negative floats, m a multiple of 8), any
// number of windows: per window one compare for "at or above" and one for "past its end".
void tally_any(const float* v, std::size_t m, const WindowSet& w, int s, WindowTally& t) {
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

// hi[k] per lane index k (AVX2 permute; the generic build picks lane by lane).
inline v8i pick8(v8i table, v8i k) {
#if defined(__AVX2__)
    return (v8i)_mm256_permutevar8x32_epi32((__m256i)table, (__m256i)k);
#else
    v8i r;
    for (int j = 0; j < 8; ++j) r[j] = table[k[j] & 7];
    return r;
#endif
}

// 1 << (8 (k - 1)) per lane, 0 where k == 0 (k <= 4).
inline v8i field8(v8i k) {
    const v8i shift = (k << 3) - splat8i(8);
#if defined(__AVX2__)
    return (v8i)_mm256_sllv_epi32((__m256i)splat8i(1), (__m256i)shift);  // counts past 31 give 0
#else
    return (splat8i(1) << (shift & splat8i(31))) & (k > splat8i(0));
#endif
}

// The same tallies for up to four windows with fewer instructions: the windows are disjoint
// and ascending, so the number k of windows an element is at or above says everything. The
// element lies inside window k exactly when it is not past that window's end (one lookup,
// one compare), and a per-lane count of each k is kept in the four bytes of one 32-bit lane
// (a lane sees at most kBlock / 8 = 128 elements per block: a byte holds that).
template <int NW>
void tally_few(const float* v, std::size_t m, const WindowSet& w, int s, WindowTally& t) {
    static_assert(NW >= 1 && NW <= 4, "one byte per window in a 32-bit lane");
    v8i lo[NW];
    std::int32_t hi[kMaxWindows] = {};
    for (int k = 0; k < NW; ++k) {
        lo[k] = splat8i(w.lo_minus1[s][k]);
        hi[k] = w.hi[s][k];
    }
    // hi_of_k[k]: the end of window k (k == 0: inside no window). Built as one vector value:
    // filled lane by lane in memory, the compiler would read it from there every iteration,
    // and that load then waits behind the compaction's stores.
    const v8i hi_of_k = {std::numeric_limits<std::int32_t>::min(), hi[0], hi[1], hi[2], hi[3], 0, 0, 0};
    std::uint32_t* dst = t.dst[s] + t.used[s];
    std::size_t used = 0;
    v8u counts = {0, 0, 0, 0, 0, 0, 0, 0};  // unsigned: the top byte may reach bit 31
    for (std::size_t i = 0; i < m; i += 8) {
        const v8i bits = (v8i)load8(v + i);
        v8i minus_k = bits > lo[0];
        for (int k = 1; k < NW; ++k) minus_k += bits > lo[k];
        const v8i k = -minus_k;
        counts += (v8u)field8(k);
        used += compact(bits, ~(bits > pick8(hi_of_k, k)), dst + used);
    }
    t.used[s] += used;
    std::uint64_t above = 0;  // elements at or above window j: those with k > j
    for (int j = NW - 1; j >= 0; --j) {
        above += static_cast<std::uint64_t>(hsum8i((v8i)((counts >> (8 * j)) & 0xFFu)));
        t.at_or_above[s][j] += above;
    }
}

void tally(const float* v, std::size_t m, const WindowSet& w, int s, WindowTally& t) {
    switch (w.count[s]) {
        case 1: return tally_few<1>(v, m, w, s, t);
        case 2: return tally_few<2>(v, m, w, s, t);
        case 3: return tally_few<3>(v, m, w, s, t);
        case 4: return tally_few<4>(v, m, w, s, t);
        default: return tally_any(v, m, w, s, t);
    }
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

// The float64 sums, taken around each stream's shift c (its block's first value) so that the
// block variance s2 - s1^2/m does not cancel. Sixteen elements per iteration, added pairwise
// before they join an accumulator, so that one add per accumulator per iteration is on the
// loop-carried chain (its latency would otherwise bound the loop), and every accumulator
// stays in a register. Sums of squares around zero are derived per block in finish().

inline v4d squares(v4d x, v4d y) { return fma4(y, y, x * x); }

// x - c and x + y on the multiply-add units (x * 1 - c, x * 1 + y: exact, the same result):
// the sums are bound by the float64 adders, which then share the work with the FMA units.
inline v4d minus(v4d x, v4d c) {
#if defined(__FMA__)
    return (v4d)_mm256_fmsub_pd((__m256d)x, _mm256_set1_pd(1.0), (__m256d)c);
#else
    return x - c;
#endif
}
inline v4d plus(v4d x, v4d y) {
#if defined(__FMA__)
    return (v4d)_mm256_fmadd_pd((__m256d)x, _mm256_set1_pd(1.0), (__m256d)y);
#else
    return x + y;
#endif
}

// One stream over m (a multiple of 16) values: s1, s2, and the sum of |x| (ABS: a and b) or
// the float32 extrema (EXTREMA: absdiff and reldiff, whose sum of |x| is their sum).
template <bool ABS, bool EXTREMA>
void stream_sums(const float* v, std::size_t m, StreamBlock& out) {
    const v4d c = splat4(out.shift), zero = splat4(0.0);
    v4d s1 = zero, s2 = zero, sa = zero;
    v8f mn = splat8(kInfF), mx = splat8(-kInfF);
    for (std::size_t i = 0; i < m; i += 16) {
        if constexpr (EXTREMA) {
            const v8f p = load8(v + i), q = load8(v + i + 8);
            mn = min8(p, min8(q, mn));
            mx = max8(p, max8(q, mx));
        }
        const v4d u0 = load4(v + i), u1 = load4(v + i + 4), u2 = load4(v + i + 8), u3 = load4(v + i + 12);
        const v4d x0 = minus(u0, c), x1 = minus(u1, c), x2 = minus(u2, c), x3 = minus(u3, c);
        s1 += (x0 + x1) + (x2 + x3);
        s2 += squares(x0, x1) + squares(x2, x3);
        if constexpr (ABS) sa += plus(abs4(u0), abs4(u1)) + plus(abs4(u2), abs4(u3));
    }
    out.s1 = hsum4(s1);
    out.s2 = hsum4(s2);
    if constexpr (ABS) out.sum_abs = hsum4(sa);
    if constexpr (EXTREMA) {
        out.mn = hmin8(mn);
        out.mx = hmax8(mx);
    }
}

// The dot product of a and b over m (a multiple of 16) values.
double dot_sum(const float* a, const float* b, std::size_t m) {
    v4d dot = splat4(0.0);
    for (std::size_t i = 0; i < m; i += 16) {
        const v4d p = fma4(load4(a + i + 4), load4(b + i + 4), load4(a + i) * load4(b + i));
        const v4d q = fma4(load4(a + i + 12), load4(b + i + 12), load4(a + i + 8) * load4(b + i + 8));
        dot += p + q;
    }
    return hsum4(dot);
}

// Fills the rest of `s` from the fast sums; false when they are not finite (NaN/Inf or
// overflow). The sum of squares around zero follows from those around the shift c:
// sum x^2 = s2 + 2 c s1 + m c^2 (float32 values in float64: no overflow, and no cancellation
// beyond a few units of float64 rounding, far below the float32 inputs' own precision).
bool finish(StreamBlock& s, std::size_t m) {
    if (!(std::isfinite(s.s1) && std::isfinite(s.s2))) return false;
    const double md = static_cast<double>(m);
    s.sum = s.shift * md + s.s1;
    s.mean = s.shift + s.s1 / md;
    const double m2 = s.s2 - s.s1 * (s.s1 / md);
    s.m2 = m2 > 0 ? m2 : 0.0;
    const double sq = s.s2 + s.shift * (2.0 * s.s1 + md * s.shift);
    s.sum_sq = sq > 0 ? sq : 0.0;
    s.nan = s.inf = 0;
    s.valid = m;
    return true;
}

inline double shift_of(float v) { return std::isfinite(v) ? static_cast<double>(v) : 0.0; }

// |a - b| and the relative difference of m (a multiple of 8) elements into ad/rd, with the
// mismatch count and the extrema of a and b (float32, eight lanes: exact).
template <bool INF_EQ>
std::uint64_t diffs(const CompareConfig& cfg, const float* a, const float* b, std::size_t m, float* ad, float* rd,
                    BlockStats& out) {
    const v8f eps = splat8(static_cast<float>(cfg.eps));
    const v8f atol = splat8(static_cast<float>(cfg.atol)), rtol = splat8(static_cast<float>(cfg.rtol));
    v8i passes = splat8i(0);
    v8f mna = splat8(kInfF), mnb = mna;
    v8f mxa = splat8(-kInfF), mxb = mxa;
    for (std::size_t i = 0; i < m; i += 8) {
        // The inputs two blocks ahead, one cache line per two iterations: they arrive while
        // the float64 sums run (those read only L1), so reading memory and computing overlap.
        // A prefetch past the end of an array is harmless (it never faults).
        if ((i & 15) == 0) {
            __builtin_prefetch(a + i + 2 * kBlock);
            __builtin_prefetch(b + i + 2 * kBlock);
        }
        const v8f x = load8(a + i), y = load8(b + i);
        mna = min8(x, mna); mxa = max8(x, mxa);
        mnb = min8(y, mnb); mxb = max8(y, mxb);
        v8f d = abs8(x - y);
        if constexpr (INF_EQ) d = sel8((abs8(x) == splat8(kInfF)) & (x == y), splat8(0.0f), d);
        const v8f den = y == splat8(0.0f) ? eps : abs8(y);
        const v8f r = d / den;
        std::memcpy(ad + i, &d, sizeof(d));
        std::memcpy(rd + i, &r, sizeof(r));
        passes += (d <= atol) | (r <= rtol);  // -1 per element within a tolerance
    }
    out.s[kA].mn = hmin8(mna); out.s[kA].mx = hmax8(mxa);
    out.s[kB].mn = hmin8(mnb); out.s[kB].mx = hmax8(mxb);
    return m - static_cast<std::uint64_t>(-hsum8i(passes));
}

template <bool INF_EQ>
bool fused_loop(const CompareConfig& cfg, const float* a, const float* b, std::size_t m, const WindowSet* w,
                WindowTally* t, BlockStats& out, FusedScratch& sc) {
    if (m == 0 || m > kBlock) return false;
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
        // The sums would see the padding too: the exact path does them over the m elements.
        return false;
    }
    // The sums take 16 elements per iteration: a block of another length (the last one)
    // has them done by the exact path.
    if (m % 16 != 0) return false;
    out.s[kA].shift = shift_of(a[0]);
    out.s[kB].shift = shift_of(b[0]);
    out.s[kAbs].shift = shift_of(sc.ad[0]);
    out.s[kRel].shift = shift_of(sc.rd[0]);
    stream_sums<true, false>(a, m, out.s[kA]);
    stream_sums<true, false>(b, m, out.s[kB]);
    stream_sums<false, true>(sc.ad, m, out.s[kAbs]);
    stream_sums<false, true>(sc.rd, m, out.s[kRel]);
    out.dot = dot_sum(a, b, m);
    out.s[kAbs].sum_abs = out.s[kAbs].s1 + out.s[kAbs].shift * static_cast<double>(m);
    out.s[kRel].sum_abs = out.s[kRel].s1 + out.s[kRel].shift * static_cast<double>(m);
    bool ok = finish(out.s[kA], m);
    ok &= finish(out.s[kB], m);
    ok &= finish(out.s[kAbs], m);
    ok &= finish(out.s[kRel], m);
    out.s[kRel].sum_sq = 0;  // unused for reldiff
    return ok;
}

}  // namespace

bool fused_f32(const CompareConfig& cfg, const float* a, const float* b, std::size_t m, const WindowSet* w,
               WindowTally* t, BlockStats& out, FusedScratch& scratch) {
    if (cfg.inf_equal) return fused_loop<true>(cfg, a, b, m, w, t, out, scratch);
    return fused_loop<false>(cfg, a, b, m, w, t, out, scratch);
}

}  // namespace POLY_ARCH
}  // namespace poly
