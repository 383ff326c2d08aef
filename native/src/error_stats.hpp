// One call that computes every statistic the comparator reports for a pair of arrays.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "kernel.hpp"

namespace poly {

struct StreamStats {
    double min, max, mean, var, std, mean_abs, mean_sq;
    std::int64_t argmin = -1, argmax = -1;  // flat C-order index; -1 for an empty input
    std::uint64_t nan = 0, inf = 0;
    std::vector<double> order;  // values for the order requests on this stream, in order
};

struct ErrorStats {
    std::uint64_t size = 0;
    std::uint64_t mismatches = 0;
    std::array<StreamStats, 4> stream;  // kA, kB, kAbs, kRel
    double l2, mse, cosine, psnr, snr, dot;
    // How the medians and quantiles were found: "windows" (in the rank windows a sample
    // predicted, during the one pass), "radix" (radix select passes over the inputs) or
    // "none" (none requested).
    const char* order_method = "none";
};

struct StatsOptions {
    std::vector<double> quantiles;  // of absdiff and reldiff, numpy.quantile semantics
    bool median = true;             // median of absdiff and reldiff
    int threads = 0;
};

ErrorStats compute_error_stats(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                               const StatsOptions& opts);

}  // namespace poly
