// Order statistics of any of a comparison's four streams, asked for on their own (the values'
// medians and quantiles that a comparison's report shows, module.cpp's order_stats).
#pragma once
#include <vector>

#include "kernel.hpp"
#include "order_select.hpp"

namespace poly {

// Values for each request, in order, with NumPy's semantics (a stream holding NaN gives NaN for
// all its requests): one pass over the inputs that counts each requested stream's NaN and tallies
// the rank windows a sample predicts (rank_windows.hpp), only the requested streams computed (a
// and b are loaded, not compared); radix select (order_statistics) where the windows miss. An
// input too small for the windows has its requested streams' keys kept whole in that pass and
// selected in memory (select_ranks). Exact either way.
std::vector<double> stream_order_statistics(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                                            const std::vector<OrderRequest>& requests, int threads);

}  // namespace poly
