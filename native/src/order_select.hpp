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

// The order statistics a list of requests needs: distinct (stream, rank) targets, and how
// each request's value follows from their values.
struct RankTarget {
    int stream;
    std::uint64_t rank;  // 0-based position in ascending order
};

struct RankPlan {
    struct Item {
        std::size_t lo, hi;  // indices into targets
        double gamma;
        bool median;
        bool skip;  // NaN result (NaN in the stream, or an empty input)
    };
    std::vector<RankTarget> targets;
    std::vector<Item> items;
};

RankPlan plan_ranks(const std::vector<OrderRequest>& requests, std::uint64_t n,
                    const std::array<std::uint64_t, 4>& nan_counts);

// Request values from the targets' keys (order_key encoding), with NumPy's arithmetic.
std::vector<double> combine_ranks(const RankPlan& plan, const std::vector<std::uint64_t>& keys, bool f32);

// The same for a plan made as if no stream held NaN (the rank windows plan before their pass has
// counted any): the requests on a stream marked in `has_nan` give NaN, as NumPy's do.
std::vector<double> combine_ranks_nan_free(const RankPlan& plan, const std::vector<std::uint64_t>& keys, bool f32,
                                           const std::vector<OrderRequest>& requests,
                                           const std::array<bool, 4>& has_nan);

// The keys at ranks `ranks` (0-based, any order, each < n) of keys[0, n), which it
// reorders: a radix select in memory, 11 key bits a step, each step counting the keys of the
// ranges that hold a rank and moving on with those of the bins holding one (so a set of ranks
// costs a few passes over fewer and fewer keys, not a selection over all of them per rank).
std::vector<std::uint64_t> select_ranks(std::uint64_t* keys, std::size_t n, const std::vector<std::uint64_t>& ranks);

// Keys of the targets by radix select: 16 bits per pass over the inputs, finishing with
// nth_element once a candidate set is small. Exact whatever the distribution.
std::vector<std::uint64_t> radix_select(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                                        const std::vector<RankTarget>& targets, int threads);

// Values for each request, in order (plan, radix select, combine). A stream with NaN gives
// NaN for all its requests, as NumPy's median and quantile do.
std::vector<double> order_statistics(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                                     const std::vector<OrderRequest>& requests,
                                     const std::array<std::uint64_t, 4>& nan_counts, int threads);

// Counts NaN per stream (one pass) for callers that have not run the main statistics.
std::array<std::uint64_t, 4> count_nans(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                                        int threads);

}  // namespace poly
