#include "reduce.hpp"

#include <cmath>
#include <limits>

namespace poly {

void summarize_block(const double* v, std::size_t m, BlockSummary& s) {
    double sum = 0, sum_sq = 0, sum_abs = 0;
    double mn = std::numeric_limits<double>::infinity();
    double mx = -std::numeric_limits<double>::infinity();
    std::uint64_t nan = 0, inf = 0;
    for (std::size_t i = 0; i < m; ++i) {
        const double x = v[i];
        sum += x;
        sum_sq += x * x;
        sum_abs += std::fabs(x);
        mn = x < mn ? x : mn;  // NaN compares false: ignored here, counted below
        mx = x > mx ? x : mx;
        nan += (x != x);
        inf += (std::fabs(x) == std::numeric_limits<double>::infinity());
    }
    double m2 = 0;
    if (m > 0 && nan == 0 && inf == 0) {
        const double mean = sum / static_cast<double>(m);
        for (std::size_t i = 0; i < m; ++i) {
            const double d = v[i] - mean;
            m2 += d * d;
        }
    } else if (m > 0) {
        m2 = std::numeric_limits<double>::quiet_NaN();
    }
    s.sum = sum;
    s.sum_sq = sum_sq;
    s.sum_abs = sum_abs;
    s.m2 = m2;
    s.mn = mn;
    s.mx = mx;
    s.nan = nan;
    s.inf = inf;
    s.valid = m - nan;
}

double dot_block(const double* x, const double* y, std::size_t m) {
    double acc = 0;
    for (std::size_t i = 0; i < m; ++i) acc += x[i] * y[i];
    return acc;
}

std::uint64_t count_failures(const double* ad, const double* rd, std::size_t m, double atol, double rtol) {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < m; ++i) n += (!(ad[i] <= atol)) & (!(rd[i] <= rtol));
    return n;
}

}  // namespace poly
