#include "stream_order.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "kernels.hpp"
#include "parallel.hpp"
#include "rank_windows.hpp"

namespace poly {
namespace {

// Below this many elements radix select costs about what the windows' sample and histograms do
// (2^16 float32 values, the median and three quantiles of one stream: 0.75-1.5 ms against
// 0.90-1.1 ms); from 2^17 the windows take half the time or less (1.0 against 2.2 ms).
constexpr std::size_t kWindowsMinElements = std::size_t{1} << 17;

}  // namespace

std::vector<double> stream_order_statistics(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                                            const std::vector<OrderRequest>& requests, int threads) {
    const std::size_t n = a.size;
    std::array<bool, 4> wanted{};
    for (const auto& r : requests) wanted[r.stream] = true;
    auto radix = [&]() { return order_statistics(cfg, a, b, requests, count_nans(cfg, a, b, threads), threads); };
    if (n < kWindowsMinElements) return radix();
    // Ranks planned as if no NaN were present; a stream with NaN gets NaN at the end.
    const RankPlan optimistic = plan_ranks(requests, n, {0, 0, 0, 0});
    const RankWindows windows(cfg, a, b, optimistic.targets);
    if (!windows.active()) return radix();

    const bool differences = wanted[kAbs] || wanted[kRel];
    struct State {
        std::array<std::uint64_t, 4> nan{};
        RankWindows::Counts windows;
    };
    auto states = run_partitions<State>(n, resolve_threads(threads, n), kBlock,
                                        [&](State& st, std::size_t begin, std::size_t end) {
        const KernelTable& k = kernels();
        st.windows = windows.make_counts(end - begin);
        auto blk = new_block();
        for (std::size_t s = begin; s < end; s += kBlock) {
            const std::size_t m = std::min(kBlock, end - s);
            if (differences) {
                compute_block(cfg, a, b, s, m, *blk);
            } else {  // the values alone: no difference or division computed
                if (wanted[kA]) k.load_block(a, s, m, blk->v[kA]);
                if (wanted[kB]) k.load_block(b, s, m, blk->v[kB]);
            }
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
