// (Compiled once per instruction set, see kernels.hpp; strict IEEE semantics.)
// The one-pass kernel, one template for float32 and float64 compute: reads a block of two
// inputs from memory once (while prefetching the next) and, over the block in L1, forms
// |a - b| and the relative difference with NumPy's rounding of the compute type, the
// statistics of all four streams (extrema and the mismatch count in the compute type; sums
// in float64, pairwise within an iteration), and the rank-window tallies of the order
// statistics (window_tally.cpp). Each of those is its own short loop over the block, sized
// so that its accumulators stay in registers. The loops run on WideLanes (lanes.hpp): 64-byte
// vectors where the instruction set has AVX-512, 32-byte ones elsewhere.
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

using D = SumVec;
constexpr std::size_t kD = lanes_of<D>();  // doubles a vector of the sums: 4 or 8
// Elements per iteration of a difference stream's sums: four vectors of doubles.
constexpr std::size_t kSumStep = 4 * kD;
static_assert(kBlock % kSumStep == 0, "a whole block takes the fast sums");

// The float64 sums, taken around each stream's shift c (its block's first value) so that the
// block variance s2 - s1^2/m does not cancel. kSumStep elements per iteration, added pairwise
// before they join an accumulator, so that one add per accumulator per iteration is on the
// loop-carried chain (its latency would otherwise bound the loop), and every accumulator
// stays in a register. Sums of squares around zero are derived per block in finish().

inline D squares(D x, D y) { return fma4(y, y, x * x); }

// The extrema of the kSumStep values at v folded into mn/mx. The differences are >= +0 or NaN
// (a block with NaN has NaN sums and is redone by the exact path), so they are ordered as their
// bits: where the instruction set has integer min/max for their lanes, the extrema are taken
// on the integer units, leaving the float adders, which also convert, to the sums.
template <typename T>
using ExtremaLanes = std::conditional_t<has_integer_minmax<typename WideLanes<T>::I>(), typename WideLanes<T>::I,
                                        typename WideLanes<T>::V>;
// One vector x of differences (their lanes as E) folded into the extrema mn/mx.
template <typename E>
inline void fold_extrema(E x, E& mn, E& mx) {
    if constexpr (has_integer_minmax<E>()) {
        mn = imin(x, mn);
        mx = imax(x, mx);
    } else {
        mn = vmin(x, mn);
        mx = vmax(x, mx);
    }
}
template <typename T>
inline void diff_extrema(const T* v, ExtremaLanes<T>& mn, ExtremaLanes<T>& mx) {
    using E = ExtremaLanes<T>;
    constexpr std::size_t n = WideLanes<T>::n;
    for (std::size_t k = 0; k < kSumStep; k += 2 * n) {
        fold_extrema(loadv<E>(v + k + n), mn, mx);
        fold_extrema(loadv<E>(v + k), mn, mx);
    }
}

// One difference stream (absdiff or reldiff, whose sum of |x| is their sum) over m (a
// multiple of kSumStep) values: s1, s2 and the extrema.
template <typename T>
void diff_sums(const T* v, std::size_t m, StreamBlock& out) {
    using V = typename WideLanes<T>::V;
    using E = ExtremaLanes<T>;
    const D c = broadcast<D>(out.shift), zero = broadcast<D>(0.0);
    D s1 = zero, s2 = zero;
    // +inf's bits are above every finite non-negative value's; +0's are the least
    E mn = (E)broadcast<V>(std::numeric_limits<T>::infinity()), mx = (E)broadcast<V>(T{0});
    for (std::size_t i = 0; i < m; i += kSumStep) {
        diff_extrema(v + i, mn, mx);
        const D u0 = widen(v + i), u1 = widen(v + i + kD), u2 = widen(v + i + 2 * kD), u3 = widen(v + i + 3 * kD);
        const D x0 = minus(u0, c), x1 = minus(u1, c), x2 = minus(u2, c), x3 = minus(u3, c);
        s1 += (x0 + x1) + (x2 + x3);
        s2 += squares(x0, x1) + squares(x2, x3);
    }
    out.s1 = hsum(s1);
    out.s2 = hsum(s2);
    // The extrema read back as floats (the same order, and no store of the integer lanes).
    out.mn = static_cast<double>(hmin((V)mn));
    out.mx = static_cast<double>(hmax((V)mx));
}

// One input stream's sums around its shift: s1, s2 and the sum of |x|, taken two vectors of
// widened values at a time (added pairwise, as the difference streams' sums).
struct InputSums {
    D c, s1, s2, sa;
    explicit InputSums(double shift) : c(broadcast<D>(shift)), s1(broadcast<D>(0.0)), s2(s1), sa(s1) {}
    void add(D u0, D u1) {
        const SumBits magnitude = broadcast<SumBits>(std::numeric_limits<long long>::max());
        const D x0 = minus(u0, c), x1 = minus(u1, c);
        s1 += x0 + x1;
        s2 += squares(x0, x1);
        sa += plus((D)((SumBits)u0 & magnitude), (D)((SumBits)u1 & magnitude));
    }
    void finish(StreamBlock& out) const {
        out.s1 = hsum(s1);
        out.s2 = hsum(s2);
        out.sum_abs = hsum(sa);
    }
};

// One input stream over m (a multiple of 2 kD) values, and with DOT the dot product with `other`
// (read in the same loop, so that it is widened to float64 once).
template <typename T, bool DOT>
void input_sums(const T* v, const T* other, std::size_t m, StreamBlock& out, double* dot_out) {
    InputSums sums(out.shift);
    D dot = broadcast<D>(0.0);
    for (std::size_t i = 0; i < m; i += 2 * kD) {
        const D u0 = widen(v + i), u1 = widen(v + i + kD);
        sums.add(u0, u1);
        if constexpr (DOT) dot += fma4(u1, widen(other + i + kD), u0 * widen(other + i));
    }
    sums.finish(out);
    if constexpr (DOT) *dot_out = hsum(dot);
}

// Both input streams over m (a multiple of 2 kD) values in one loop: each element of a and b
// widened to float64 once (input_sums widens b twice: for a's dot product and for its own sums),
// each stream's operations those of input_sums, so the same figures to the bit. Ten vector
// registers of accumulators and constants: for the 32 of AVX-512 (16 would spill them).
template <typename T>
void both_input_sums(const T* a, const T* b, std::size_t m, StreamBlock& oa, StreamBlock& ob, double* dot_out) {
    InputSums sa(oa.shift), sb(ob.shift);
    D dot = broadcast<D>(0.0);
    for (std::size_t i = 0; i < m; i += 2 * kD) {
        const D a0 = widen(a + i), a1 = widen(a + i + kD), b0 = widen(b + i), b1 = widen(b + i + kD);
        sa.add(a0, a1);
        sb.add(b0, b1);
        dot += fma4(a1, b1, a0 * b0);
    }
    sa.finish(oa);
    sb.finish(ob);
    *dot_out = hsum(dot);
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

// The bits of tolerance t as the threshold of `bits(x) > threshold`, which for x >= +0 says
// !(x <= t): -0 counts as +0, and a negative or NaN t, which no x is within, gives -1.
template <typename Bits, typename T>
inline Bits tolerance_bits(T t) {
    Bits bits = -1;
    if (t >= T{0}) {
        const T positive = t + T{0};
        std::memcpy(&bits, &positive, sizeof(bits));
    }
    return bits;
}

// |a - b| and the relative difference of m (a multiple of the lanes) elements into ad/rd,
// with the mismatch count and the extrema of a and b (in the compute type: exact). The count
// and the zero test of b compare bits as integers (the float compares would share the adders
// with the sums): the differences are >= +0 in every block the exact path does not redo, and
// that path counts again where they are not (NaN, Inf).
//
// With SUMS (the 32 registers of AVX-512 hold it all) the same loop also takes the sums and
// extrema of both difference streams around the shifts already in out.s[kAbs] and out.s[kRel]
// (m a multiple of kSumStep): the divider, whose throughput bounds this loop, then works beside
// the float64 units instead of before them.
template <typename T, bool INF_EQ, bool SUMS>
std::uint64_t diffs(const CompareConfig& cfg, const T* a, const T* b, std::size_t m, T* ad, T* rd, BlockStats& out) {
    using W = WideLanes<T>;
    using V = typename W::V;
    using I = typename W::I;
    using E = ExtremaLanes<T>;
    using Bits = typename W::Bits;
    constexpr T kInf = std::numeric_limits<T>::infinity();
    constexpr std::size_t kLine = 64 / sizeof(T);  // elements per cache line
    const I eps = (I)broadcast<V>(static_cast<T>(cfg.eps));
    const I atol = broadcast<I>(tolerance_bits<Bits>(static_cast<T>(cfg.atol)));
    const I rtol = broadcast<I>(tolerance_bits<Bits>(static_cast<T>(cfg.rtol)));
    const I magnitude = broadcast<I>(std::numeric_limits<Bits>::max()), none = broadcast<I>(Bits{0});
    const V zero = broadcast<V>(T{0}), inf = broadcast<V>(kInf);
    I fails = none;
    V mna = inf, mnb = inf, mxa = -inf, mxb = -inf;
    const D cd = broadcast<D>(out.s[kAbs].shift), cr = broadcast<D>(out.s[kRel].shift);
    D s1d = broadcast<D>(0.0), s2d = s1d, s1r = s1d, s2r = s1d;
    E mnd = (E)inf, mxd = (E)zero, mnr = mnd, mxr = mxd;
    for (std::size_t i = 0; i < m; i += W::n) {
        // The inputs two blocks ahead, one cache line per line read: they arrive while the
        // float64 sums run (those read only L1), so reading memory and computing overlap.
        // A prefetch past the end of an array is harmless (it never faults).
        for (std::size_t k = 0; k < W::n; k += kLine) {
            if ((i + k) % kLine == 0) {
                __builtin_prefetch(a + i + k + 2 * kBlock);
                __builtin_prefetch(b + i + k + 2 * kBlock);
            }
        }
        const V x = loadv<V>(a + i), y = loadv<V>(b + i);
        mna = vmin(x, mna); mxa = vmax(x, mxa);
        mnb = vmin(y, mnb); mxb = vmax(y, mxb);
        V d = (V)((I)(x - y) & magnitude);
        if constexpr (INF_EQ) d = (((I)x & magnitude) == (I)inf) & (x == y) ? zero : d;
        const I y_bits = (I)y & magnitude;
        const V den = (V)(y_bits | ((y_bits == none) & eps));  // |b|, eps where b is +-0
        const V r = d / den;
        std::memcpy(ad + i, &d, sizeof(d));
        std::memcpy(rd + i, &r, sizeof(r));
        fails -= ((I)d > atol) & ((I)r > rtol);  // -1 per mismatch
        if constexpr (SUMS) {
            fold_extrema((E)d, mnd, mxd);
            fold_extrema((E)r, mnr, mxr);
            // widened back from the stores just made (forwarded, not read from the cache)
            if constexpr (W::n >= 2 * kD) {
                for (std::size_t k = 0; k < W::n; k += 2 * kD) {
                    const D x0 = minus(widen(ad + i + k), cd), x1 = minus(widen(ad + i + k + kD), cd);
                    const D y0 = minus(widen(rd + i + k), cr), y1 = minus(widen(rd + i + k + kD), cr);
                    s1d += x0 + x1;
                    s2d += squares(x0, x1);
                    s1r += y0 + y1;
                    s2r += squares(y0, y1);
                }
            } else {
                const D x0 = minus(widen(ad + i), cd), y0 = minus(widen(rd + i), cr);
                s1d += x0;
                s2d = fma4(x0, x0, s2d);
                s1r += y0;
                s2r = fma4(y0, y0, s2r);
            }
        }
    }
    out.s[kA].mn = static_cast<double>(hmin(mna)); out.s[kA].mx = static_cast<double>(hmax(mxa));
    out.s[kB].mn = static_cast<double>(hmin(mnb)); out.s[kB].mx = static_cast<double>(hmax(mxb));
    if constexpr (SUMS) {
        out.s[kAbs].s1 = hsum(s1d);
        out.s[kAbs].s2 = hsum(s2d);
        out.s[kRel].s1 = hsum(s1r);
        out.s[kRel].s2 = hsum(s2r);
        out.s[kAbs].mn = static_cast<double>(hmin((V)mnd)); out.s[kAbs].mx = static_cast<double>(hmax((V)mxd));
        out.s[kRel].mn = static_cast<double>(hmin((V)mnr)); out.s[kRel].mx = static_cast<double>(hmax((V)mxr));
    }
    return static_cast<std::uint64_t>(hsum_int(fails));
}

// The first element's |a - b| and relative difference as diffs() forms them (the difference
// streams' shifts).
template <typename T, bool INF_EQ>
void first_differences(const CompareConfig& cfg, T x, T y, T& d, T& r) {
    d = std::fabs(x - y);
    if (INF_EQ && std::isinf(x) && x == y) d = T{0};
    r = d / (y == T{0} ? static_cast<T>(cfg.eps) : std::fabs(y));
}

// 32 vector registers (AVX-512): the differences loop also takes the difference streams' sums,
// and both inputs' sums share one loop. With 16 either loop would spill its accumulators.
#if defined(POLY_WIDE_VECTORS)
constexpr bool kWideRegisters = true;
#else
constexpr bool kWideRegisters = false;
#endif

template <typename T, bool INF_EQ>
bool fused_loop(const CompareConfig& cfg, const T* a, const T* b, std::size_t m, const WindowSet* w,
                WindowTallyOf<WindowKey<T>>* t, BlockStats& out, FusedScratchOf<T>& sc) {
    constexpr std::size_t n = WideLanes<T>::n;
    static_assert(tally_room(1) % n == 0, "tally_room() covers the padding below: whole vectors of n lanes");
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
    T d0, r0;
    first_differences<T, INF_EQ>(cfg, a[0], b[0], d0, r0);
    out.s[kA].shift = shift_of(a[0]);
    out.s[kB].shift = shift_of(b[0]);
    out.s[kAbs].shift = shift_of(d0);
    out.s[kRel].shift = shift_of(r0);
    // The sums take kSumStep elements per iteration: a block of another length (the last
    // one, or a partial one) has them done by the exact path.
    const bool sums = mv == m && m % kSumStep == 0;
    if constexpr (kWideRegisters) {
        out.fails = sums ? diffs<T, INF_EQ, true>(cfg, a, b, mv, sc.ad, sc.rd, out)
                         : diffs<T, INF_EQ, false>(cfg, a, b, mv, sc.ad, sc.rd, out);
    } else {
        out.fails = diffs<T, INF_EQ, false>(cfg, a, b, mv, sc.ad, sc.rd, out);
    }
    if (w != nullptr) {
        if (w->count[0] > 0) tally_windows(sc.ad, mv, *w, 0, *t);
        if (w->count[1] > 0) tally_windows(sc.rd, mv, *w, 1, *t);
    }
    if (mv != m) {
        // Take the padding (copies of element 0) back out of the tallies; the sums and the
        // count would see it too: the exact path does them over the m elements.
        const std::size_t pad = mv - m;
        if (w != nullptr) {
            untally_padding(sc.ad[0], pad, *w, 0, *t);
            untally_padding(sc.rd[0], pad, *w, 1, *t);
        }
        return false;
    }
    if (!sums) return false;
    if constexpr (kWideRegisters) {
        both_input_sums(a, b, m, out.s[kA], out.s[kB], &out.dot);
    } else {
        input_sums<T, true>(a, b, m, out.s[kA], &out.dot);
        input_sums<T, false>(b, a, m, out.s[kB], nullptr);
    }
    if constexpr (!kWideRegisters) {
        diff_sums(sc.ad, m, out.s[kAbs]);
        diff_sums(sc.rd, m, out.s[kRel]);
    }
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
