// Counts of one stream of a comparison (a, b, |a-b| or the relative difference) in bins with
// the given edges, with numpy.histogram's semantics, without materialising the stream.
#pragma once
#include <cstdint>
#include <vector>

#include "kernel.hpp"

namespace poly {

// `edges` are strictly increasing, evenly spaced (numpy.linspace's, the fast case) or not;
// bin k counts edges[k] <= x < edges[k+1], the last bin is closed, values outside
// [edges.front(), edges.back()] and NaN are not counted (numpy.histogram's semantics).
std::vector<std::uint64_t> histogram(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b, int stream,
                                     bool only_a, const std::vector<double>& edges, int threads);

}  // namespace poly
