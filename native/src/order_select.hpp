// Exact order statistics (median, quantiles) of a comparison's streams without sorting or
// copying the whole array: radix select on order-preserving keys, 16 bits per pass.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "kernel.hpp"

namespace poly {

struct OrderRequest {
    int stream;      // kA, kB, kAbs or kRel
    bool is_median;  // numpy.median semantics (mean of the two middle values)
    double q;        // numpy.quantile(method="linear") semantics when !is_median
};

// Histograms of the top 16 key bits per stream, as the main pass can build them on the fly;
// an empty vector means "not available, build it".
using TopHistograms = std::array<std::vector<std::uint64_t>, 4>;

// Values for each request, in order. `nan_counts[s]` > 0 makes every request on stream s NaN,
// as NumPy's median and quantile return NaN when NaN is present.
std::vector<double> order_statistics(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                                     const std::vector<OrderRequest>& requests,
                                     const std::array<std::uint64_t, 4>& nan_counts, int threads,
                                     const TopHistograms& top = {});

// Counts NaN per stream (one pass) for callers that have not run the main statistics.
std::array<std::uint64_t, 4> count_nans(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                                        int threads);

}  // namespace poly
