// Reductions over one block of doubles that sits in L1. Compiled with reassociation allowed
// (see CMakeLists.txt) so that the sums vectorise; no elementwise rounding happens here.
#pragma once
#include <cstddef>
#include <cstdint>

namespace poly {

struct BlockSummary {
    double sum = 0, sum_sq = 0, sum_abs = 0, m2 = 0;
    double mn = 0, mx = 0;          // over non-NaN elements; meaningless when valid == 0
    std::uint64_t nan = 0, inf = 0;
    std::uint64_t valid = 0;        // elements that are not NaN
};

// Sums, squares, |x|, min/max ignoring NaN, NaN and Inf counts, and the sum of squared
// deviations from the block mean (two passes over the L1-resident block).
void summarize_block(const double* v, std::size_t m, BlockSummary& s);

// sum(x * y)
double dot_block(const double* x, const double* y, std::size_t m);

// Number of i where (ad > atol or ad is NaN) and (rd > rtol or rd is NaN).
std::uint64_t count_failures(const double* ad, const double* rd, std::size_t m, double atol, double rtol);

}  // namespace poly
