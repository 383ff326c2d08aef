// (Compiled once per instruction set, see kernels.hpp; strict IEEE semantics.)
// The one-pass kernel, one template for float32 and float64 compute: reads a block of two
// inputs from memory once (while prefetching the next) and, over the block in L1, forms
// |a - b| and the relative difference with NumPy's rounding of the compute type, the
// statistics of all four streams (extrema and the mismatch count in the compute type; sums
// in float64, pairwise within an iteration), and the rank-window tallies of the order
// statistics (window_tally.cpp). Each of those is its own short loop over the block, sized
// so that its accumulators stay in registers.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels.hpp"
#include "lanes.hpp"
#include "window_tally.hpp"

namespace poly {
namespace POLY_ARCH {
namespace {

// Elements per iteration of the float64 sums: four vectors of four doubles.
constexpr std::size_t kSumStep = 16;

// The float64 sums, taken around each stream's shift c (its block's first value) so that the
// block variance s2 - s1^2/m does not cancel. Sixteen elements per iteration, added pairwise
// before they join an accumulator, so that one add per accumulator per iteration is on the
// loop-carried chain (its latency would otherwise bound the loop), and every accumulator
// stays in a register. Sums of squares around zero are derived per block in finish().

inline v4d squares(v4d x, v4d y) { return fma4(y, y, x * x); }

// The extrema of 16 values at v (compute type, Lanes<T>::n per vector) folded into mn/mx.
template <typename T>
inline void extrema16(const T* v, typename Lanes<T>::V& mn, typename Lanes<T>::V& mx) {
    if constexpr (Lanes<T>::n == 8) {
        const auto p = load(v), q = load(v + 8);
        mn = vmin(p, vmin(q, mn));
        mx = vmax(p, vmax(q, mx));
    } else {
        const auto p0 = load(v), p1 = load(v + 4), p2 = load(v + 8), p3 = load(v + 12);
        mn = vmin(vmin(p0, p1), vmin(p2, vmin(p3, mn)));
        mx = vmax(vmax(p0, p1), vmax(p2, vmax(p3, mx)));
    }
}

// One difference stream (absdiff or reldiff, whose sum of |x| is their sum) over m (a
// multiple of 16) values: s1, s2 and the extrema.
template <typename T>
void diff_sums(const T* v, std::size_t m, StreamBlock& out) {
    using V = typename Lanes<T>::V;
    const v4d c = splat(out.shift), zero = splat(0.0);
    v4d s1 = zero, s2 = zero;
    V mn = splat(std::numeric_limits<T>::infinity()), mx = splat(-std::numeric_limits<T>::infinity());
    for (std::size_t i = 0; i < m; i += kSumStep) {
        extrema16(v + i, mn, mx);
        const v4d u0 = widen4(v + i), u1 = widen4(v + i + 4), u2 = widen4(v + i + 8), u3 = widen4(v + i + 12);
        const v4d x0 = minus(u0, c), x1 = minus(u1, c), x2 = minus(u2, c), x3 = minus(u3, c);
        s1 += (x0 + x1) + (x2 + x3);
        s2 += squares(x0, x1) + squares(x2, x3);
    }
    out.s1 = hsum(s1);
    out.s2 = hsum(s2);
    out.mn = static_cast<double>(hmin(mn));
    out.mx = static_cast<double>(hmax(mx));
}

// One input stream over m (a multiple of 8) values: s1, s2 and the sum of |x|, and with DOT
// the dot product with `other` (read in the same loop, so that it is widened to float64 once).
template <typename T, bool DOT>
void input_sums(const T* v, const T* other, std::size_t m, StreamBlock& out, double* dot_out) {
    const v4d c = splat(out.shift), zero = splat(0.0);
    v4d s1 = zero, s2 = zero, sa = zero, dot = zero;
    for (std::size_t i = 0; i < m; i += 8) {
        const v4d u0 = widen4(v + i), u1 = widen4(v + i + 4);
        const v4d x0 = minus(u0, c), x1 = minus(u1, c);
        s1 += x0 + x1;
        s2 += squares(x0, x1);
        sa += plus(vabs<double>(u0), vabs<double>(u1));
        if constexpr (DOT) dot += fma4(u1, widen4(other + i + 4), u0 * widen4(other + i));
    }
    out.s1 = hsum(s1);
    out.s2 = hsum(s2);
    out.sum_abs = hsum(sa);
    if constexpr (DOT) *dot_out = hsum(dot);
}

// Fills the rest of `s` from the fast sums; false when they are not finite (NaN/Inf or
// overflow). The sum of squares around zero follows from those around the shift c:
// sum x^2 = s2 + 2 c s1 + m c^2. c is one of the block's values, so sum x^2 >= c^2 and the
// rounding error stays within a few units of float64 rounding per element of the block.
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

template <typename T>
inline double shift_of(T v) {
    return std::isfinite(v) ? static_cast<double>(v) : 0.0;
}

// |a - b| and the relative difference of m (a multiple of the lanes) elements into ad/rd,
// with the mismatch count and the extrema of a and b (in the compute type: exact).
template <typename T, bool INF_EQ>
std::uint64_t diffs(const CompareConfig& cfg, const T* a, const T* b, std::size_t m, T* ad, T* rd, BlockStats& out) {
    using L = Lanes<T>;
    using V = typename L::V;
    using I = typename L::I;
    constexpr T kInf = std::numeric_limits<T>::infinity();
    constexpr std::size_t kLine = 64 / sizeof(T);  // elements per cache line
    const V eps = splat(static_cast<T>(cfg.eps));
    const V atol = splat(static_cast<T>(cfg.atol)), rtol = splat(static_cast<T>(cfg.rtol));
    const V zero = splat(T{0}), inf = splat(kInf);
    I passes = splat(typename L::Bits{0});
    V mna = splat(kInf), mnb = mna;
    V mxa = splat(-kInf), mxb = mxa;
    for (std::size_t i = 0; i < m; i += L::n) {
        // The inputs two blocks ahead, one cache line per line read: they arrive while the
        // float64 sums run (those read only L1), so reading memory and computing overlap.
        // A prefetch past the end of an array is harmless (it never faults).
        if (i % kLine == 0) {
            __builtin_prefetch(a + i + 2 * kBlock);
            __builtin_prefetch(b + i + 2 * kBlock);
        }
        const V x = load(a + i), y = load(b + i);
        mna = vmin(x, mna); mxa = vmax(x, mxa);
        mnb = vmin(y, mnb); mxb = vmax(y, mxb);
        V d = vabs<T>(x - y);
        if constexpr (INF_EQ) d = select<T>((vabs<T>(x) == inf) & (x == y), zero, d);
        const V den = y == zero ? eps : vabs<T>(y);
        const V r = d / den;
        store(ad + i, d);
        store(rd + i, r);
        passes += (d <= atol) | (r <= rtol);  // -1 per element within a tolerance
    }
    out.s[kA].mn = static_cast<double>(hmin(mna)); out.s[kA].mx = static_cast<double>(hmax(mxa));
    out.s[kB].mn = static_cast<double>(hmin(mnb)); out.s[kB].mx = static_cast<double>(hmax(mxb));
    return m - static_cast<std::uint64_t>(-hsum_int(passes));
}

template <typename T, bool INF_EQ>
bool fused_loop(const CompareConfig& cfg, const T* a, const T* b, std::size_t m, const WindowSet* w,
                WindowTallyOf<WindowKey<T>>* t, BlockStats& out, FusedScratchOf<T>& sc) {
    constexpr std::size_t n = Lanes<T>::n;
    if (m == 0 || m > kBlock) return false;
    const std::size_t mv = (m + n - 1) / n * n;
    if (mv != m) {
        // A partial block: pad to whole vectors with the block's first element; the padding
        // is subtracted back out below (a duplicate cannot move an extremum).
        for (std::size_t j = 0; j < mv; ++j) {
            sc.a[j] = j < m ? a[j] : a[0];
            sc.b[j] = j < m ? b[j] : b[0];
        }
        a = sc.a;
        b = sc.b;
    }
    out.fails = diffs<T, INF_EQ>(cfg, a, b, mv, sc.ad, sc.rd, out);
    if (w != nullptr) {
        if (w->count[0] > 0) tally_windows(sc.ad, mv, *w, 0, *t);
        if (w->count[1] > 0) tally_windows(sc.rd, mv, *w, 1, *t);
    }
    if (mv != m) {
        // Take the padding (copies of element 0) back out of the counts and tallies.
        const std::size_t pad = mv - m;
        const T d0 = sc.ad[0], r0 = sc.rd[0];
        out.fails -= pad * static_cast<std::uint64_t>(!(d0 <= static_cast<T>(cfg.atol)) && !(r0 <= static_cast<T>(cfg.rtol)));
        if (w != nullptr) {
            untally_padding(d0, pad, *w, 0, *t);
            untally_padding(r0, pad, *w, 1, *t);
        }
        // The sums would see the padding too: the exact path does them over the m elements.
        return false;
    }
    // The sums take 16 elements per iteration: a block of another length (the last one)
    // has them done by the exact path.
    if (m % kSumStep != 0) return false;
    out.s[kA].shift = shift_of(a[0]);
    out.s[kB].shift = shift_of(b[0]);
    out.s[kAbs].shift = shift_of(sc.ad[0]);
    out.s[kRel].shift = shift_of(sc.rd[0]);
    input_sums<T, true>(a, b, m, out.s[kA], &out.dot);
    input_sums<T, false>(b, a, m, out.s[kB], nullptr);
    diff_sums(sc.ad, m, out.s[kAbs]);
    diff_sums(sc.rd, m, out.s[kRel]);
    out.s[kAbs].sum_abs = out.s[kAbs].s1 + out.s[kAbs].shift * static_cast<double>(m);
    out.s[kRel].sum_abs = out.s[kRel].s1 + out.s[kRel].shift * static_cast<double>(m);
    bool ok = finish(out.s[kA], m);
    ok &= finish(out.s[kB], m);
    ok &= finish(out.s[kAbs], m);
    ok &= finish(out.s[kRel], m);
    out.s[kRel].sum_sq = 0;  // unused for reldiff
    return ok;
}

template <typename T>
bool fused(const CompareConfig& cfg, const T* a, const T* b, std::size_t m, const WindowSet* w,
           WindowTallyOf<WindowKey<T>>* t, BlockStats& out, FusedScratchOf<T>& scratch) {
    if (cfg.inf_equal) return fused_loop<T, true>(cfg, a, b, m, w, t, out, scratch);
    return fused_loop<T, false>(cfg, a, b, m, w, t, out, scratch);
}

}  // namespace

bool fused_f32(const CompareConfig& cfg, const float* a, const float* b, std::size_t m, const WindowSet* w,
               WindowTally32* t, BlockStats& out, FusedScratchOf<float>& scratch) {
    return fused(cfg, a, b, m, w, t, out, scratch);
}

bool fused_f64(const CompareConfig& cfg, const double* a, const double* b, std::size_t m, const WindowSet* w,
               WindowTally64* t, BlockStats& out, FusedScratchOf<double>& scratch) {
    return fused(cfg, a, b, m, w, t, out, scratch);
}

}  // namespace POLY_ARCH
}  // namespace poly
