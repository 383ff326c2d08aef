#include "stream_order.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "key_buffers.hpp"
#include "kernels.hpp"
#include "parallel.hpp"
#include "rank_windows.hpp"

namespace poly {
namespace {

// Below this many elements the keys kept whole cost no more than the windows' sample and
// histograms (2^17 float32 values, both outputs' median and p90/p95/p99: 2.1 against 2.2 ms
// varied, 3.5 against 2.3 ms with 60% zeros); from 2^18 the windows take half the time or less.
constexpr std::size_t kWindowsMinElements = std::size_t{1} << 17;

// Fills blk with the requested streams of elements [s, s + m): the values alone are loaded (no
// difference or division computed) unless a difference stream is requested.
void requested_block(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b, const std::array<bool, 4>& wanted,
                     std::size_t s, std::size_t m, Block& blk) {
    if (wanted[kAbs] || wanted[kRel]) {
        compute_block(cfg, a, b, s, m, blk);
        return;
    }
    const KernelTable& k = kernels();
    if (wanted[kA]) k.load_block(a, s, m, blk.v[kA]);
    if (wanted[kB]) k.load_block(b, s, m, blk.v[kB]);
}

// Below kWindowsMinElements: one pass keeps the requested streams' keys whole and counts their
// NaN, and select_ranks finds the ranks among them in memory. (Radix select over the inputs
// counted NaN in a pass of its own and computed all four streams in each of its passes: 3.2 ms
// for both outputs' median and p90/p95/p99 at 10^5 float32 values.)
std::vector<double> whole_stream_order(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                                       const std::vector<OrderRequest>& requests, const std::array<bool, 4>& wanted) {
    const std::size_t n = a.size;
    const RankPlan optimistic = plan_ranks(requests, n, {0, 0, 0, 0});
    std::array<KeyBuffer<std::uint64_t>, 4> keys;
    for (int j = 0; j < 4; ++j)
        if (wanted[j]) {
            keys[j] = take_key_buffer<std::uint64_t>(n);
            keys[j].resize(n);
        }
    std::array<std::uint64_t, 4> nans{};
    auto blk = new_block();
    for (std::size_t s = 0; s < n; s += kBlock) {
        const std::size_t m = std::min(kBlock, n - s);
        requested_block(cfg, a, b, wanted, s, m, *blk);
        for (int j = 0; j < 4; ++j) {
            if (!wanted[j]) continue;
            const double* v = blk->v[j];
            std::uint64_t* dst = keys[j].data() + s;
            std::uint64_t nan = 0;
            for (std::size_t i = 0; i < m; ++i) {
                nan += std::isnan(v[i]);
                dst[i] = order_key(v[i], cfg.f32);
            }
            nans[j] += nan;
        }
    }
    std::array<bool, 4> has_nan{};
    std::vector<std::uint64_t> found(optimistic.targets.size(), 0);
    for (int j = 0; j < 4; ++j) {
        has_nan[j] = nans[j] > 0;
        if (!wanted[j] || has_nan[j]) continue;
        std::vector<std::size_t> members;
        std::vector<std::uint64_t> ranks;
        for (std::size_t t = 0; t < optimistic.targets.size(); ++t)
            if (optimistic.targets[t].stream == j) {
                members.push_back(t);
                ranks.push_back(optimistic.targets[t].rank);
            }
        const std::vector<std::uint64_t> at = select_ranks(keys[j].data(), n, ranks);
        for (std::size_t i = 0; i < members.size(); ++i) found[members[i]] = at[i];
    }
    for (auto& k : keys) give_key_buffer(std::move(k));
    return combine_ranks_nan_free(optimistic, found, cfg.f32, requests, has_nan);
}

}  // namespace

std::vector<double> stream_order_statistics(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                                            const std::vector<OrderRequest>& requests, int threads) {
    const std::size_t n = a.size;
    std::array<bool, 4> wanted{};
    for (const auto& r : requests) wanted[r.stream] = true;
    if (n == 0) return order_statistics(cfg, a, b, requests, {0, 0, 0, 0}, threads);  // NaN for every request
    if (n < kWindowsMinElements) return whole_stream_order(cfg, a, b, requests, wanted);
    // Ranks planned as if no NaN were present; a stream with NaN gets NaN at the end.
    const RankPlan optimistic = plan_ranks(requests, n, {0, 0, 0, 0});
    const RankWindows windows(cfg, a, b, optimistic.targets);
    if (!windows.active()) return order_statistics(cfg, a, b, requests, count_nans(cfg, a, b, threads), threads);

    struct State {
        std::array<std::uint64_t, 4> nan{};
        RankWindows::Counts windows;
    };
    auto states = run_partitions<State>(n, resolve_threads(threads, n), kBlock,
                                        [&](State& st, std::size_t begin, std::size_t end) {
        st.windows = windows.make_counts(end - begin);
        auto blk = new_block();
        for (std::size_t s = begin; s < end; s += kBlock) {
            const std::size_t m = std::min(kBlock, end - s);
            requested_block(cfg, a, b, wanted, s, m, *blk);
            for (int j = 0; j < 4; ++j) {
                if (!wanted[j]) continue;
                const double* v = blk->v[j];
                std::uint64_t nans = 0;
                for (std::size_t i = 0; i < m; ++i) nans += std::isnan(v[i]);
                st.nan[j] += nans;
                windows.feed(st.windows, j, v, m);
            }
        }
    });
    std::array<std::uint64_t, 4> nans{};
    std::vector<RankWindows::Counts*> parts;
    for (auto& st : states) {
        for (int j = 0; j < 4; ++j) nans[j] += st.nan[j];
        parts.push_back(&st.windows);
    }
    std::array<bool, 4> has_nan{};
    for (int j = 0; j < 4; ++j) has_nan[j] = nans[j] > 0;
    std::vector<std::uint64_t> keys;
    if (!windows.resolve(parts, keys, has_nan, threads)) return order_statistics(cfg, a, b, requests, nans, threads);
    return combine_ranks_nan_free(optimistic, keys, cfg.f32, requests, has_nan);
}

}  // namespace poly
