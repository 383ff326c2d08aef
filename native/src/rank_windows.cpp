#include "rank_windows.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>

#include "kernels.hpp"
#include "parallel.hpp"

namespace poly {
namespace {

constexpr std::uint64_t kMinElements = std::uint64_t{1} << 18;
constexpr std::size_t kChunks = 512;   // the sample is spread over this many places...
constexpr std::size_t kChunkLen = 32;  // ...of this many consecutive elements
constexpr std::size_t kBins = 65536;

inline std::size_t top16(std::uint64_t key) { return static_cast<std::size_t>(key >> 48); }

// Float32 order key in 32 bits (order_key's high word), written to vectorise.
inline std::uint32_t key32(float f) {
    std::uint32_t u;
    __builtin_memcpy(&u, &f, 4);
    const std::uint32_t flip = static_cast<std::uint32_t>(static_cast<std::int32_t>(u) >> 31) | 0x80000000u;
    return u ^ flip;
}

}  // namespace

RankWindows::RankWindows(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                         const std::vector<RankTarget>& targets)
    : f32_(cfg.f32), n_(a.size), targets_(targets) {
    if (n_ < kMinElements || targets.empty()) return;
    std::array<std::vector<std::uint64_t>, 4> sample;
    bool any[4] = {false, false, false, false};
    for (const auto& t : targets) any[t.stream] = true;
    auto blk = new_block();
    for (std::size_t c = 0; c < kChunks; ++c) {
        const std::size_t start = (n_ - kChunkLen) * c / (kChunks - 1);
        compute_block(cfg, a, b, start, kChunkLen, *blk);
        for (int k = 0; k < 4; ++k) {
            if (!any[k]) continue;
            for (std::size_t i = 0; i < kChunkLen; ++i) sample[k].push_back(order_key(blk->v[k][i], f32_));
        }
    }
    const double s = static_cast<double>(kChunks * kChunkLen);
    for (int k = 0; k < 4; ++k) {
        if (!any[k]) continue;
        std::sort(sample[k].begin(), sample[k].end());
        predicted_[k].assign(kBins, 0);
    }
    for (const auto& t : targets) {
        const auto& smp = sample[t.stream];
        const double p = static_cast<double>(t.rank) / static_cast<double>(n_ - 1);
        const double centre = p * (s - 1);
        // 4 binomial standard deviations plus slack for samples correlated within a chunk;
        // a wider window only costs a few more gathered keys.
        const double margin = 4.0 * std::sqrt(s * p * (1 - p)) + 0.003 * s + 4;
        const double lo_i = std::max(0.0, std::floor(centre - margin));
        const double hi_i = std::min(s - 1, std::ceil(centre + margin));
        const std::size_t lo_bin = top16(smp[static_cast<std::size_t>(lo_i)]);
        const std::size_t hi_bin = top16(smp[static_cast<std::size_t>(hi_i)]);
        for (std::size_t bin = lo_bin; bin <= hi_bin; ++bin) predicted_[t.stream][bin] = 1;
    }
    for (int k = 0; k < 4; ++k) {
        if (!any[k]) continue;
        std::size_t in = 0;
        for (std::uint64_t key : sample[k]) in += predicted_[k][top16(key)];
        predicted_share_[k] = static_cast<double>(in) / s;
    }
    active_ = true;
}

RankWindows::Counts RankWindows::make_counts(std::size_t partition_elements) const {
    Counts c;
    if (f32_) c.scratch32.resize(kBlock);
    else c.scratch64.resize(kBlock);
    for (int k = 0; k < 4; ++k) {
        if (!wants(k)) continue;
        c.hist[k].assign(kBins, 0);
        // Room for what the sample predicts, with a margin, so the gather rarely reallocates.
        const auto expect = static_cast<std::size_t>(predicted_share_[k] * 1.25 * static_cast<double>(partition_elements)) + kBlock;
        if (f32_) c.keys32[k].resize(expect);
        else c.keys64[k].resize(expect);
    }
    return c;
}

namespace {

// Histograms the top 16 bits of one block of keys and appends those in predicted bins to `out`
// (its size serves as capacity; `used` is the fill). Branchless compaction: every key is
// written and the cursor advances past predicted ones, since a branch would mispredict on
// every few percent of elements.
template <typename K>
void tally_and_gather(const K* keys, std::size_t m, std::uint32_t* hist, const std::uint8_t* predicted,
                      std::vector<K>& out, std::size_t& used) {
    constexpr int shift = 8 * static_cast<int>(sizeof(K)) - 16;
    if (out.size() < used + m) out.resize(std::max(2 * out.size(), used + m));
    K* dst = out.data() + used;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < m; ++i) {
        const K key = keys[i];
        const std::size_t bin = static_cast<std::size_t>(key >> shift);
        ++hist[bin];
        dst[kept] = key;
        kept += predicted[bin];
    }
    used += kept;
}

}  // namespace

template <typename T>
void RankWindows::feed_impl(Counts& c, int stream, const T* v, std::size_t m) const {
    if (c.overflow) return;
    std::uint32_t* hist = c.hist[stream].data();
    const std::uint8_t* predicted = predicted_[stream].data();
    std::size_t& used = c.used[stream];
    if (f32_) {
        std::uint32_t* keys = c.scratch32.data();
        for (std::size_t i = 0; i < m; ++i) keys[i] = key32(static_cast<float>(v[i]));
        tally_and_gather(keys, m, hist, predicted, c.keys32[stream], used);
    } else {
        std::uint64_t* keys = c.scratch64.data();
        for (std::size_t i = 0; i < m; ++i) keys[i] = order_key(static_cast<double>(v[i]), false);
        tally_and_gather(keys, m, hist, predicted, c.keys64[stream], used);
    }
    // Gathering more than an eighth of the input would amount to copying it: give up and let
    // radix select finish the job.
    if (used > static_cast<std::size_t>(n_ / 8) + 1024) c.overflow = true;
}

void RankWindows::feed(Counts& c, int stream, const double* v, std::size_t m) const { feed_impl(c, stream, v, m); }
void RankWindows::feed(Counts& c, int stream, const float* v, std::size_t m) const { feed_impl(c, stream, v, m); }

namespace {

// Keys of the wanted ranks of one stream: one scan routes the gathered keys of the target
// bins into buckets, then nth_element runs per bucket, ranks ascending so each call starts
// where the previous one left off. `wanted[i]` = (bin, [(target, rank in bin)]).
// False when a bucket holds fewer keys than the histogram promised, which can only happen if
// the inputs changed during the pass (the GIL is released): the caller then falls back to
// radix select instead of indexing past the bucket.
template <typename K>
bool select_in_bins(const std::vector<RankWindows::Counts*>& parts, int stream, int shift,
                    const std::vector<std::pair<std::size_t, std::vector<std::pair<std::size_t, std::uint64_t>>>>& wanted,
                    std::vector<std::uint64_t>& keys_out, std::array<std::vector<K>, 4> RankWindows::Counts::*member) {
    std::vector<std::int32_t> bucket_of(kBins, -1);
    for (std::size_t i = 0; i < wanted.size(); ++i) bucket_of[wanted[i].first] = static_cast<std::int32_t>(i);
    std::vector<std::vector<K>> buckets(wanted.size());
    for (auto* p : parts)
        for (std::size_t i = 0; i < p->used[stream]; ++i) {
            const K key = (p->*member)[stream][i];
            const std::int32_t b = bucket_of[static_cast<std::size_t>(key >> shift)];
            if (b >= 0) buckets[static_cast<std::size_t>(b)].push_back(key);
        }
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        auto& bucket = buckets[i];
        std::size_t settled = 0;
        for (const auto& [t, pos] : wanted[i].second) {
            if (pos >= bucket.size()) return false;
            auto nth = bucket.begin() + static_cast<std::ptrdiff_t>(pos);
            std::nth_element(bucket.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(settled, pos)), nth,
                             bucket.end());
            keys_out[t] = static_cast<std::uint64_t>(*nth) << (sizeof(K) == 4 ? 32 : 0);
            settled = static_cast<std::size_t>(pos);
        }
    }
    return true;
}

}  // namespace

bool RankWindows::resolve_stream(int k, const std::vector<Counts*>& parts, std::vector<std::uint64_t>& keys) const {
    std::vector<std::uint64_t> cum(kBins + 1, 0);
    for (std::size_t i = 0; i < kBins; ++i) {
        std::uint64_t h = 0;
        for (auto* p : parts) h += p->hist[k][i];
        cum[i + 1] = cum[i] + h;
    }
    // bin -> [(target, rank within bin)], ranks ascending
    std::vector<std::pair<std::size_t, std::vector<std::pair<std::size_t, std::uint64_t>>>> by_bin;
    std::vector<std::size_t> order;
    for (std::size_t t = 0; t < targets_.size(); ++t)
        if (targets_[t].stream == k) order.push_back(t);
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return targets_[x].rank < targets_[y].rank; });
    for (std::size_t t : order) {
        const std::uint64_t r = targets_[t].rank;
        const std::size_t bin = static_cast<std::size_t>(std::upper_bound(cum.begin(), cum.end(), r) - cum.begin()) - 1;
        if (bin >= kBins || !predicted_[k][bin]) return false;
        if (by_bin.empty() || by_bin.back().first != bin) by_bin.push_back({bin, {}});
        by_bin.back().second.push_back({t, r - cum[bin]});
    }
    if (f32_) return select_in_bins<std::uint32_t>(parts, k, 16, by_bin, keys, &Counts::keys32);
    return select_in_bins<std::uint64_t>(parts, k, 48, by_bin, keys, &Counts::keys64);
}

bool RankWindows::resolve(std::vector<Counts*>& parts, std::vector<std::uint64_t>& keys,
                          const std::array<bool, 4>& skip, int threads) const {
    if (!active_) return false;
    for (auto* p : parts)
        if (p->overflow) return false;
    keys.assign(targets_.size(), 0);  // each stream writes only its own targets' entries
    std::vector<int> streams;
    for (int k = 0; k < 4; ++k)
        if (wants(k) && !skip[k]) streams.push_back(k);
    std::vector<char> ok(streams.size(), 0);
    std::vector<std::thread> pool;
    for (std::size_t i = 0; i < streams.size(); ++i) {
        auto job = [&, i] { ok[i] = resolve_stream(streams[i], parts, keys); };
        if (!(threads > 1 && i + 1 < streams.size() && try_start(pool, job))) job();
    }
    for (auto& th : pool) th.join();
    return std::all_of(ok.begin(), ok.end(), [](char x) { return x != 0; });
}

}  // namespace poly
