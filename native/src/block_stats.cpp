// (Compiled once per instruction set, see kernels.hpp.) Per-block statistics of the four
// streams of a comparison. Nothing here rounds an element: differences are made in diff.cpp.
#include <cmath>
#include <limits>

#include "kernels.hpp"

namespace poly {
namespace POLY_ARCH {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Exact treatment of a stream whose fast sums came out non-finite: NaN/Inf counts, extrema
// ignoring NaN, NumPy's NaN variance.
template <typename T>
void slow_stream(const T* v, std::size_t m, StreamBlock& s) {
    double sum = 0, mn = kInf, mx = -kInf;
    std::uint64_t nan = 0, inf = 0;
    for (std::size_t i = 0; i < m; ++i) {
        const double x = static_cast<double>(v[i]);
        sum += x;
        if (std::isnan(x)) { ++nan; continue; }
        if (std::isinf(x)) ++inf;
        if (x < mn) mn = x;
        if (x > mx) mx = x;
    }
    s.sum = sum;
    s.mean = sum / static_cast<double>(m);
    if (nan == 0 && inf == 0) {  // finite values whose sum overflows: scale first
        double mean = 0;
        for (std::size_t i = 0; i < m; ++i) mean += static_cast<double>(v[i]) / static_cast<double>(m);
        s.mean = mean;
    }
    s.mn = mn;
    s.mx = mx;
    s.nan = nan;
    s.inf = inf;
    s.valid = m - nan;
    if (nan == 0 && inf == 0) {  // finite values whose shifted sums overflowed: two-pass
        const double mean = s.mean;
        double m2 = 0;
        for (std::size_t i = 0; i < m; ++i) {
            const double d = static_cast<double>(v[i]) - mean;
            m2 += d * d;
        }
        s.m2 = m2;
    } else {
        s.m2 = std::numeric_limits<double>::quiet_NaN();
    }
}

template <typename T>
void finish_stream(const T* v, std::size_t m, StreamBlock& s) {
    // s1/s2 are finite exactly when every value is finite and the shifted sums did not
    // overflow; sum_sq and sum_abs may still overflow, as NumPy's would.
    if (std::isfinite(s.s1) && std::isfinite(s.s2)) {
        const double md = static_cast<double>(m);
        s.sum = s.shift * md + s.s1;
        s.mean = s.shift + s.s1 / md;
        const double m2 = s.s2 - s.s1 * (s.s1 / md);
        s.m2 = m2 > 0 ? m2 : 0.0;
        s.nan = s.inf = 0;
        s.valid = m;
    } else {
        slow_stream(v, m, s);
    }
}

template <typename T>
inline double shift_of(const T* v) {
    const double x = static_cast<double>(v[0]);
    return std::isfinite(x) ? x : 0.0;
}

}  // namespace

// Four lanes of doubles through GCC/Clang vector extensions: explicit, so the reductions
// vectorise without licence to reorder anything else (AVX2 runs a lane group per
// instruction, the generic build two SSE2 halves).
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4i __attribute__((vector_size(32)));

inline v4d load4(const double* p) {
    v4d v;
    __builtin_memcpy(&v, p, sizeof(v));
    return v;
}
typedef float v4f __attribute__((vector_size(16)));
inline v4d load4(const float* p) {
    v4f v;
    __builtin_memcpy(&v, p, sizeof(v));
    return __builtin_convertvector(v, v4d);
}
inline v4d splat(double x) { return v4d{x, x, x, x}; }
inline v4d vabs(v4d x) {
    const v4i mask = {0x7FFFFFFFFFFFFFFFLL, 0x7FFFFFFFFFFFFFFFLL, 0x7FFFFFFFFFFFFFFFLL, 0x7FFFFFFFFFFFFFFFLL};
    return (v4d)((v4i)x & mask);
}
inline v4d vmin(v4d x, v4d m) { return x < m ? x : m; }
inline v4d vmax(v4d x, v4d m) { return x > m ? x : m; }
inline double hsum(v4d v) { return (v[0] + v[1]) + (v[2] + v[3]); }
inline double hmin(v4d v) { return std::fmin(std::fmin(v[0], v[1]), std::fmin(v[2], v[3])); }
inline double hmax(v4d v) { return std::fmax(std::fmax(v[0], v[1]), std::fmax(v[2], v[3])); }

// The block statistics over the four streams, read as T (double from a Block, or float32
// straight from contiguous float32 inputs and float32 differences).
template <typename T>
void stats_of(const T* a, const T* b, const T* ad, const T* rd, std::size_t m, double atol, double rtol,
              BlockStats& out) {
    const std::size_t m4 = m & ~std::size_t{3};
    const v4d pinf = splat(kInf), ninf = splat(-kInf), zero = splat(0.0);
    {
        const double ca = shift_of(a), cb = shift_of(b);
        const v4d vca = splat(ca), vcb = splat(cb);
        v4d s1a = zero, s2a = zero, sqa = zero, saa = zero, mna = pinf, mxa = ninf;
        v4d s1b = zero, s2b = zero, sqb = zero, sab = zero, mnb = pinf, mxb = ninf;
        v4d dot = zero;
        for (std::size_t i = 0; i < m4; i += 4) {
            const v4d x = load4(a + i), y = load4(b + i);
            const v4d xs = x - vca, ys = y - vcb;
            s1a += xs; s2a += xs * xs; sqa += x * x; saa += vabs(x);
            mna = vmin(x, mna); mxa = vmax(x, mxa);
            s1b += ys; s2b += ys * ys; sqb += y * y; sab += vabs(y);
            mnb = vmin(y, mnb); mxb = vmax(y, mxb);
            dot += x * y;
        }
        double t_s1a = hsum(s1a), t_s2a = hsum(s2a), t_sqa = hsum(sqa), t_saa = hsum(saa);
        double t_mna = hmin(mna), t_mxa = hmax(mxa);
        double t_s1b = hsum(s1b), t_s2b = hsum(s2b), t_sqb = hsum(sqb), t_sab = hsum(sab);
        double t_mnb = hmin(mnb), t_mxb = hmax(mxb), t_dot = hsum(dot);
        for (std::size_t i = m4; i < m; ++i) {
            const double x = static_cast<double>(a[i]), y = static_cast<double>(b[i]);
            const double xs = x - ca, ys = y - cb;
            t_s1a += xs; t_s2a += xs * xs; t_sqa += x * x; t_saa += std::fabs(x);
            t_mna = x < t_mna ? x : t_mna; t_mxa = x > t_mxa ? x : t_mxa;
            t_s1b += ys; t_s2b += ys * ys; t_sqb += y * y; t_sab += std::fabs(y);
            t_mnb = y < t_mnb ? y : t_mnb; t_mxb = y > t_mxb ? y : t_mxb;
            t_dot += x * y;
        }
        out.s[kA] = {ca, t_s1a, t_s2a, t_sqa, t_saa, t_mna, t_mxa, 0, 0, 0, 0, 0};
        out.s[kB] = {cb, t_s1b, t_s2b, t_sqb, t_sab, t_mnb, t_mxb, 0, 0, 0, 0, 0};
        out.dot = t_dot;
    }
    {
        const double cd = shift_of(ad), cr = shift_of(rd);
        const v4d vcd = splat(cd), vcr = splat(cr), vatol = splat(atol), vrtol = splat(rtol);
        v4d s1d = zero, s2d = zero, sqd = zero, mnd = pinf, mxd = ninf;
        v4d s1r = zero, s2r = zero, mnr = pinf, mxr = ninf;
        v4i fails = {0, 0, 0, 0};
        for (std::size_t i = 0; i < m4; i += 4) {
            const v4d d = load4(ad + i), r = load4(rd + i);
            const v4d ds = d - vcd, rs = r - vcr;
            s1d += ds; s2d += ds * ds; sqd += d * d;
            mnd = vmin(d, mnd); mxd = vmax(d, mxd);
            s1r += rs; s2r += rs * rs;
            mnr = vmin(r, mnr); mxr = vmax(r, mxr);
            fails -= (~(d <= vatol)) & (~(r <= vrtol));  // comparisons give -1 for true
        }
        double t_s1d = hsum(s1d), t_s2d = hsum(s2d), t_sqd = hsum(sqd), t_mnd = hmin(mnd), t_mxd = hmax(mxd);
        double t_s1r = hsum(s1r), t_s2r = hsum(s2r), t_mnr = hmin(mnr), t_mxr = hmax(mxr);
        std::uint64_t t_fails = static_cast<std::uint64_t>(fails[0] + fails[1] + fails[2] + fails[3]);
        for (std::size_t i = m4; i < m; ++i) {
            const double d = static_cast<double>(ad[i]), r = static_cast<double>(rd[i]);
            const double ds = d - cd, rs = r - cr;
            t_s1d += ds; t_s2d += ds * ds; t_sqd += d * d;
            t_mnd = d < t_mnd ? d : t_mnd; t_mxd = d > t_mxd ? d : t_mxd;
            t_s1r += rs; t_s2r += rs * rs;
            t_mnr = r < t_mnr ? r : t_mnr; t_mxr = r > t_mxr ? r : t_mxr;
            t_fails += (!(d <= atol)) & (!(r <= rtol));
        }
        const double md = static_cast<double>(m);
        // absdiff and reldiff are non-negative: their mean |x| is their mean
        out.s[kAbs] = {cd, t_s1d, t_s2d, t_sqd, t_s1d + cd * md, t_mnd, t_mxd, 0, 0, 0, 0, 0};
        out.s[kRel] = {cr, t_s1r, t_s2r, 0,  // sum of squares unused for reldiff
                       t_s1r + cr * md, t_mnr, t_mxr, 0, 0, 0, 0, 0};
        out.fails = t_fails;
    }
    finish_stream(a, m, out.s[kA]);
    finish_stream(b, m, out.s[kB]);
    finish_stream(ad, m, out.s[kAbs]);
    finish_stream(rd, m, out.s[kRel]);
}

void block_stats(const Block& blk, std::size_t m, double atol, double rtol, BlockStats& out) {
    stats_of<double>(blk.v[kA], blk.v[kB], blk.v[kAbs], blk.v[kRel], m, atol, rtol, out);
}

void block_stats_f32(const float* a, const float* b, const float* ad, const float* rd, std::size_t m,
                     double atol, double rtol, BlockStats& out) {
    stats_of<float>(a, b, ad, rd, m, atol, rtol, out);
}

void block_stats_f64(const double* a, const double* b, const double* ad, const double* rd, std::size_t m,
                     double atol, double rtol, BlockStats& out) {
    stats_of<double>(a, b, ad, rd, m, atol, rtol, out);
}

}  // namespace POLY_ARCH
}  // namespace poly
