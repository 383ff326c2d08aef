#include "histogram.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "kernels.hpp"
#include "parallel.hpp"

namespace poly {

std::vector<std::uint64_t> histogram(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b, int stream,
                                     bool only_a, const std::vector<double>& edges, int threads) {
    const std::size_t nbins = edges.size() - 1;
    const double lo = edges.front(), hi = edges.back();
    const double norm = static_cast<double>(nbins) / (hi - lo);
    // Four interleaved copies of the counts: consecutive elements usually land in the same
    // bin, and one counter would serialise on its own increments.
    constexpr std::size_t kCopies = 4;
    struct State { std::vector<std::uint64_t> counts; };
    auto states = run_partitions<State>(a.size, resolve_threads(threads, a.size), kBlock,
                                        [&](State& st, std::size_t begin, std::size_t end) {
        st.counts.assign(nbins * kCopies, 0);
        const std::int64_t last = static_cast<std::int64_t>(nbins) - 1;
        const double* e = edges.data();
        auto blk = new_block();
        for (std::size_t s = begin; s < end; s += kBlock) {
            const std::size_t m = std::min(kBlock, end - s);
            if (only_a) kernels().load_block(a, s, m, blk->v[kA]);
            else compute_block(cfg, a, b, s, m, *blk);
            const double* v = blk->v[only_a ? kA : stream];
            for (std::size_t i = 0; i < m; ++i) {
                const double x = v[i];
                if (!(x >= lo && x <= hi)) continue;  // outside, or NaN
                // A guess as if the edges were uniform (numpy.linspace's, the usual case), kept
                // when the actual edges confirm it; otherwise a binary search finds the bin
                // e[k] <= x < e[k+1] (the last bin closed), so uneven edges count as
                // numpy.histogram counts them.
                const double g = (x - lo) * norm;  // not finite for infinite edges
                std::int64_t k = g >= 0 && g < static_cast<double>(nbins) ? static_cast<std::int64_t>(g) : last;
                if (x < e[k] || (k < last && x >= e[k + 1])) {
                    k = static_cast<std::int64_t>(std::upper_bound(e, e + nbins, x) - e) - 1;
                    k = k < 0 ? 0 : (k > last ? last : k);
                }
                ++st.counts[static_cast<std::size_t>(k) * kCopies + (i & (kCopies - 1))];
            }
        }
    });
    std::vector<std::uint64_t> out(nbins, 0);
    for (const auto& st : states)
        for (std::size_t k = 0; k < nbins * kCopies; ++k) out[k / kCopies] += st.counts[k];
    return out;
}

}  // namespace poly
