#include "rank_windows.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>

#include "kernels.hpp"
#include "parallel.hpp"
#include "sample_order.hpp"

namespace poly {
namespace {

constexpr std::uint64_t kMinElements = std::uint64_t{1} << 15;
constexpr std::size_t kChunks = 512;   // the sample is spread over this many places...
constexpr std::size_t kChunkLen = 32;  // ...of this many consecutive elements
// Inputs of at least this many elements take a sample four times as large (more chunks):
// its narrower windows save more gathering than the larger sample costs.
constexpr std::uint64_t kLargeInput = std::uint64_t{1} << 22;
constexpr std::size_t kBins = 65536;
// Up to this many keys a stream, the windows gather whatever they hold, the whole input if need
// be (4 or 8 bytes a key): where many elements share a few values (equal outputs, quantized
// differences, integer outputs) a rank's window holds them all, and the radix select it would
// otherwise fall back to computes every value again in one to four more passes (20-60 ns an
// element in all, against about 1 ns a key gathered).
constexpr std::size_t kGatherAnyway = std::size_t{1} << 22;
// Gathered keys a thread must have before the passes over them start another (about 1 ns a key
// counted, against a thread's start and its histogram's merge).
constexpr std::uint64_t kKeysPerThread = std::uint64_t{1} << 17;

// Whether a stream's gathered keys (`used` of an input of `n`) are more than the windows may
// hold: a share of the input (`share`: 4 for the one-pass kernel, 8 otherwise) beyond kGatherAnyway.
inline bool gathered_too_many(std::size_t used, std::uint64_t n, std::size_t share) {
    return used > std::max(static_cast<std::size_t>(n / share) + 1024, std::min<std::size_t>(n, kGatherAnyway));
}

inline std::size_t top16(std::uint64_t key) { return static_cast<std::size_t>(key >> 48); }

// Float32 order key in 32 bits (order_key's high word), written to vectorise.
inline std::uint32_t key32(float f) {
    std::uint32_t u;
    __builtin_memcpy(&u, &f, 4);
    const std::uint32_t flip = static_cast<std::uint32_t>(static_cast<std::int32_t>(u) >> 31) | 0x80000000u;
    return u ^ flip;
}

// The kernels over the gathered keys (window_keys.cpp) for keys of width K.
template <typename K>
bool count_window_keys(const KernelTable& kt, const K* g, std::size_t m, const WindowSet& w, int s,
                       std::uint32_t* hist) {
    if constexpr (sizeof(K) == 4) return kt.count_window_keys32(reinterpret_cast<const std::int32_t*>(g), m, w, s, hist);
    else return kt.count_window_keys64(reinterpret_cast<const std::int64_t*>(g), m, w, s, hist);
}
template <typename K>
std::size_t pick_window_keys(const KernelTable& kt, const K* g, std::size_t m, const KeyRanges& r,
                             std::make_signed_t<K>* out, std::size_t cap) {
    if constexpr (sizeof(K) == 4) return kt.pick_window_keys32(reinterpret_cast<const std::int32_t*>(g), m, r, out, cap);
    else return kt.pick_window_keys64(reinterpret_cast<const std::int64_t*>(g), m, r, reinterpret_cast<std::int64_t*>(out), cap);
}

}  // namespace

RankWindows::RankWindows(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                         const std::vector<RankTarget>& targets, bool fused_kernel)
    : f32_(cfg.f32), n_(a.size), targets_(targets) {
    if (n_ < kMinElements || targets.empty()) return;
    std::array<KeyBuffer<std::uint64_t>, 4> sample;  // (on cached memory: see key_buffers.hpp)
    bool any[4] = {false, false, false, false};
    for (const auto& t : targets) any[t.stream] = true;
    auto blk = new_block();
    const std::size_t chunks = n_ >= kLargeInput ? 4 * kChunks : kChunks;
    for (int k = 0; k < 4; ++k)
        if (any[k]) {
            sample[k] = take_key_buffer<std::uint64_t>(chunks * kChunkLen);
            sample[k].reserve(chunks * kChunkLen);
        }
    auto chunk_start = [&](std::size_t c) { return (n_ - kChunkLen) * c / (chunks - 1); };
    auto keep = [&](std::size_t m) {
        for (int k = 0; k < 4; ++k)
            if (any[k])
                for (std::size_t i = 0; i < m; ++i) sample[k].push_back(order_key(blk->v[k][i], f32_));
    };
    if (a.contiguous() && b.contiguous()) {
        // The chunks lie far apart, each a cache miss: a block's worth of them is first
        // copied side by side (the copies' misses overlap, where computing chunk by chunk
        // waited for each), then computed as one block.
        constexpr std::size_t kPerBlock = kBlock / kChunkLen;
        std::vector<char> stage_a(kBlock * a.itemsize), stage_b(kBlock * b.itemsize);
        for (std::size_t c0 = 0; c0 < chunks; c0 += kPerBlock) {
            const std::size_t nc = std::min(kPerBlock, chunks - c0);
            for (std::size_t j = 0; j < nc; ++j) {
                const std::size_t start = chunk_start(c0 + j);
                std::memcpy(stage_a.data() + j * kChunkLen * a.itemsize, a.data + start * a.itemsize, kChunkLen * a.itemsize);
                std::memcpy(stage_b.data() + j * kChunkLen * b.itemsize, b.data + start * b.itemsize, kChunkLen * b.itemsize);
            }
            const auto m = static_cast<std::int64_t>(nc * kChunkLen);
            const auto stride_a = static_cast<std::int64_t>(a.itemsize), stride_b = static_cast<std::int64_t>(b.itemsize);
            const ArrayView va(stage_a.data(), a.dtype, a.itemsize, 1, &m, &stride_a);
            const ArrayView vb(stage_b.data(), b.dtype, b.itemsize, 1, &m, &stride_b);
            compute_block(cfg, va, vb, 0, nc * kChunkLen, *blk);
            keep(nc * kChunkLen);
        }
    } else {
        for (std::size_t c = 0; c < chunks; ++c) {
            compute_block(cfg, a, b, chunk_start(c), kChunkLen, *blk);
            keep(kChunkLen);
        }
    }
    const double s = static_cast<double>(chunks * kChunkLen);
    // The sample positions each target's window runs between.
    std::vector<std::pair<std::size_t, std::size_t>> span;
    for (const auto& t : targets) {
        const double p = static_cast<double>(t.rank) / static_cast<double>(n_ - 1);
        const double centre = p * (s - 1);
        // 4 binomial standard deviations plus slack for samples correlated within a chunk;
        // a wider window only costs a few more gathered keys.
        const double margin = 4.0 * std::sqrt(s * p * (1 - p)) + 0.003 * s + 4;
        const double lo_i = std::max(0.0, std::floor(centre - margin));
        const double hi_i = std::min(s - 1, std::ceil(centre + margin));
        span.push_back({static_cast<std::size_t>(lo_i), static_cast<std::size_t>(hi_i)});
    }
    // Only the sample's keys at the spans' ends are needed.
    std::array<std::vector<std::size_t>, 4> ends;
    for (std::size_t i = 0; i < targets.size(); ++i) {
        ends[targets[i].stream].push_back(span[i].first);
        ends[targets[i].stream].push_back(span[i].second);
    }
    std::array<std::vector<std::uint64_t>, 4> end_keys;
    for (int k = 0; k < 4; ++k) {
        if (!any[k]) continue;
        predicted_[k].assign(kBins, 0);
        end_keys[k] = keys_at(sample[k].data(), sample[k].size(), ends[k]);
    }
    std::array<std::size_t, 4> next{};
    for (std::size_t i = 0; i < targets.size(); ++i) {
        const int k = targets[i].stream;
        const std::uint64_t first = end_keys[k][next[k]];
        const std::uint64_t second = end_keys[k][next[k] + 1];
        next[k] += 2;
        key_span_.push_back({first, second});
        const std::size_t lo_bin = top16(first);
        const std::size_t hi_bin = top16(second);
        for (std::size_t bin = lo_bin; bin <= hi_bin; ++bin) predicted_[targets[i].stream][bin] = 1;
    }
    for (int k = 0; k < 4; ++k) {
        if (!any[k]) continue;
        std::size_t in = 0;
        for (std::uint64_t key : sample[k]) in += predicted_[k][top16(key)];
        predicted_share_[k] = static_cast<double>(in) / s;
    }
    for (auto& smp : sample) give_key_buffer(std::move(smp));
    active_ = true;
    if (fused_kernel) {
        if (f32_) build_window_set<std::uint32_t>();
        else build_window_set<std::uint64_t>();
    }
}

// The targets' sample spans on absdiff and reldiff as ranges of bit patterns of the compute
// type (K: its key width), merged where they overlap. Both streams hold values >= +0 (or
// NaN), whose keys sit in the upper half: spans are clipped to it. More ranges than the
// kernel takes are merged across their smallest gaps.
template <typename K>
void RankWindows::build_window_set() {
    constexpr int kDrop = 64 - 8 * static_cast<int>(sizeof(K));  // order_key holds K in its top bits
    constexpr K kTop = K{1} << (8 * sizeof(K) - 1);               // key = bits ^ kTop for values >= +0
    const int streams[2] = {kAbs, kRel};
    for (int s = 0; s < 2; ++s) {
        std::vector<std::pair<K, K>> runs;  // inclusive key ranges
        for (std::size_t i = 0; i < targets_.size(); ++i) {
            if (targets_[i].stream != streams[s]) continue;
            const auto lo = static_cast<K>(key_span_[i].first >> kDrop);
            const auto hi = static_cast<K>(key_span_[i].second >> kDrop);
            if (hi < kTop) continue;  // negative values only: nothing to gather
            runs.push_back({std::max(lo, kTop), hi});
        }
        std::sort(runs.begin(), runs.end());
        std::vector<std::pair<K, K>> merged;
        for (const auto& r : runs) {
            // r.first >= kTop > 0: r.first - 1 does not wrap
            if (!merged.empty() && r.first - 1 <= merged.back().second) merged.back().second = std::max(merged.back().second, r.second);
            else merged.push_back(r);
        }
        while (merged.size() > static_cast<std::size_t>(kMaxWindows)) {
            std::size_t best = 0;
            for (std::size_t i = 1; i + 1 < merged.size(); ++i)
                if (merged[i + 1].first - merged[i].second < merged[best + 1].first - merged[best].second) best = i;
            merged[best].second = merged[best + 1].second;
            merged.erase(merged.begin() + static_cast<std::ptrdiff_t>(best) + 1);
        }
        window_set_.count[s] = static_cast<int>(merged.size());
        for (std::size_t w = 0; w < merged.size(); ++w) {
            // the bits of a value >= +0 read as a signed integer: key ^ kTop, non-negative
            window_set_.lo_minus1[s][w] = static_cast<std::int64_t>(merged[w].first ^ kTop) - 1;
            window_set_.hi[s][w] = static_cast<std::int64_t>(merged[w].second ^ kTop);
        }
    }
    fused_ = true;
}

template <typename K>
WindowTallyOf<K>* RankWindows::tally_for(Counts& c, std::size_t m) const {
    if (c.overflow) return nullptr;
    const int streams[2] = {kAbs, kRel};
    WindowTallyOf<K>& tally = c.tally<K>();
    for (int s = 0; s < 2; ++s) {
        auto& keys = c.keys<K>()[streams[s]];
        const std::size_t need = tally.used[s] + tally_room(m);
        if (keys.size() < need) keys.resize(std::max(2 * keys.size(), need));
        tally.dst[s] = keys.data();
    }
    return &tally;
}

template WindowTally32* RankWindows::tally_for<std::uint32_t>(Counts&, std::size_t) const;
template WindowTally64* RankWindows::tally_for<std::uint64_t>(Counts&, std::size_t) const;

void RankWindows::after_block(Counts& c) const {
    // Gathering much more than the windows should hold would amount to copying a large input:
    // give up and let radix select finish the job (windows of exact keys hold about what the
    // sample predicts; a quarter is far off), unless the input is small enough to gather whole.
    for (int s = 0; s < 2; ++s)
        if (gathered_too_many(std::max(c.tally32.used[s], c.tally64.used[s]), n_, 4)) c.overflow = true;
}

bool RankWindows::resolve_fused(std::vector<Counts*>& parts, std::vector<std::uint64_t>& keys,
                                const std::array<bool, 4>& skip, int threads) const {
    if (!active_ || !fused_) return false;
    if (f32_) return resolve_fused_keys<std::uint32_t>(parts, keys, skip, threads);
    return resolve_fused_keys<std::uint64_t>(parts, keys, skip, threads);
}

// resolve_fused() for keys of width K: the kernel gathered the bits of the compute type, read
// here as the signed integers S (whose order is that of the values >= +0).
template <typename K>
bool RankWindows::resolve_fused_keys(std::vector<Counts*>& parts, std::vector<std::uint64_t>& keys,
                                     const std::array<bool, 4>& skip, int threads) const {
    using S = std::make_signed_t<K>;
    constexpr int kDrop = 64 - 8 * static_cast<int>(sizeof(K));  // order_key holds K in its top bits
    constexpr K kTop = K{1} << (8 * sizeof(K) - 1);
    for (auto* p : parts)
        if (p->overflow) return false;
    keys.assign(targets_.size(), 0);
    const int streams[2] = {kAbs, kRel};
    for (int s = 0; s < 2; ++s) {
        const int k = streams[s];
        if (skip[k] || !wants(k)) continue;
        const int nw = window_set_.count[s];
        if (nw == 0) return false;  // no window held a rank's sample span: radix select
        // Elements below each window, and the gathered bits of each window.
        std::vector<std::uint64_t> below(static_cast<std::size_t>(nw), n_);
        for (auto* p : parts)
            for (int w = 0; w < nw; ++w) below[static_cast<std::size_t>(w)] -= p->tally<K>().at_or_above[s][w];
        // Every gathered key lies in exactly one window (they are disjoint and ascending): its
        // index is the number of windows starting at or below it, less one. One pass
        // histograms the keys by window and by the top bits of their offset in it (at most
        // kSubBins bins per window); each rank then falls in one bin of one window, a second
        // pass collects the keys of those bins only, and nth_element finishes on them.
        const KernelTable& kt = kernels();
        const std::size_t no_bin = static_cast<std::size_t>(nw) * kSubBins;
        // Both passes run over the partitions' gathered keys on up to `threads` threads, each
        // into its own histogram (or its own picked keys), merged afterwards; one thread per
        // kKeysPerThread keys at most, since starting a thread and merging its histogram cost
        // more than counting a few keys (the windows gather a small share of the input).
        std::uint64_t gathered = 0;
        for (auto* p : parts) gathered += p->tally<K>().used[s];
        const int key_threads = static_cast<int>(
            std::clamp<std::uint64_t>(gathered / kKeysPerThread, 1, static_cast<std::uint64_t>(std::max(threads, 1))));
        struct HistPart {
            std::vector<std::uint32_t> hist;
            bool bad = false;
        };
        auto hist_parts = run_partitions<HistPart>(parts.size(), key_threads, 1,
                                                   [&](HistPart& h, std::size_t begin, std::size_t end) {
            h.hist.assign(no_bin, 0);
            for (std::size_t q = begin; q < end; ++q)
                h.bad |= count_window_keys<K>(kt, parts[q]->keys<K>()[k].data(), parts[q]->tally<K>().used[s],
                                              window_set_, s, h.hist.data());
        });
        std::vector<std::uint32_t> hist(no_bin, 0);
        for (const auto& h : hist_parts) {
            if (h.bad) return false;
            for (std::size_t j = 0; j < no_bin; ++j) hist[j] += h.hist[j];
        }
        std::vector<std::uint64_t> size(static_cast<std::size_t>(nw), 0);
        for (int w = 0; w < nw; ++w)
            for (std::size_t j = 0; j < kSubBins; ++j) size[static_cast<std::size_t>(w)] += hist[static_cast<std::size_t>(w) * kSubBins + j];
        // Per target: its bin (window * kSubBins + sub-bin) and its rank within the bin.
        struct Want {
            std::size_t target, bin;
            std::uint64_t pos;
        };
        std::vector<Want> want;
        for (std::size_t t = 0; t < targets_.size(); ++t) {
            if (targets_[t].stream != k) continue;
            const std::uint64_t r = targets_[t].rank;
            int hit = -1;
            for (int w = 0; w < nw; ++w) {
                const auto wi = static_cast<std::size_t>(w);
                if (r >= below[wi] && r - below[wi] < size[wi]) hit = w;
            }
            if (hit < 0) return false;  // the rank lies outside every window: radix select
            std::uint64_t pos = r - below[static_cast<std::size_t>(hit)];
            std::size_t bin = static_cast<std::size_t>(hit) * kSubBins;
            while (pos >= hist[bin]) pos -= hist[bin++];  // stops inside the window: pos < size
            want.push_back({t, bin, pos});
        }
        // The keys of the wanted bins (a handful of bins, each a small share of a window), by
        // the bins' ranges of bits, kMaxRanges bins at a time.
        std::vector<std::int32_t> slot_of(hist.size(), -1);
        std::vector<std::size_t> slot_bins;
        std::size_t expected = 0;  // keys in those bins
        for (const Want& x : want)
            if (slot_of[x.bin] < 0) {
                slot_of[x.bin] = static_cast<std::int32_t>(slot_bins.size());
                slot_bins.push_back(x.bin);
                expected += hist[x.bin];
            }
        std::vector<std::vector<S>> picked(slot_bins.size());
        for (std::size_t first_slot = 0; first_slot < slot_bins.size(); first_slot += kMaxRanges) {
            KeyRanges ranges;
            ranges.count = static_cast<int>(std::min<std::size_t>(kMaxRanges, slot_bins.size() - first_slot));
            for (int r = 0; r < ranges.count; ++r) {
                const std::size_t bin = slot_bins[first_slot + static_cast<std::size_t>(r)];
                const int w = static_cast<int>(bin / kSubBins);
                const int sh = sub_bin_shift(window_set_, s, w);
                const K lo = static_cast<K>(window_set_.lo_minus1[s][w]) + 1;
                const K first = lo + (static_cast<K>(bin % kSubBins) << sh);
                const K last = std::min<K>(first + ((K{1} << sh) - 1), static_cast<K>(window_set_.hi[s][w]));
                ranges.first[r] = static_cast<S>(first);
                ranges.span[r] = last - first;
            }
            // room for every key the histogram put in these bins (and a vector more); more
            // only if the inputs changed during the pass
            struct Picked {
                std::vector<S> keys;
                bool over = false;
            };
            auto picked_parts = run_partitions<Picked>(parts.size(), key_threads, 1,
                                                       [&](Picked& mine, std::size_t begin, std::size_t end) {
                for (std::size_t q = begin; q < end && !mine.over; ++q) {
                    const std::size_t have = mine.keys.size();
                    mine.keys.resize(have + expected + 8);
                    const std::size_t got = pick_window_keys<K>(kt, parts[q]->keys<K>()[k].data(),
                                                                parts[q]->tally<K>().used[s], ranges,
                                                                mine.keys.data() + have, expected - std::min(expected, have));
                    mine.over = got > expected - std::min(expected, have);
                    mine.keys.resize(have + std::min(got, expected));
                }
            });
            for (const auto& mine : picked_parts) {
                if (mine.over) return false;  // more keys than counted: the inputs changed during the pass
                for (const S key : mine.keys)
                    for (int r = 0; r < ranges.count; ++r)
                        if (static_cast<K>(static_cast<K>(key) - static_cast<K>(ranges.first[r])) <= ranges.span[r])
                            picked[first_slot + static_cast<std::size_t>(r)].push_back(key);
            }
        }
        for (const Want& x : want) {
            auto& keys_in_bin = picked[static_cast<std::size_t>(slot_of[x.bin])];
            if (x.pos >= keys_in_bin.size()) return false;  // inputs changed during the pass
            auto nth = keys_in_bin.begin() + static_cast<std::ptrdiff_t>(x.pos);
            std::nth_element(keys_in_bin.begin(), nth, keys_in_bin.end());
            const K key = static_cast<K>(*nth) ^ kTop;  // bits of a value >= +0 -> order key
            keys[x.target] = static_cast<std::uint64_t>(key) << kDrop;
        }
    }
    return true;
}

RankWindows::Counts RankWindows::make_counts(std::size_t partition_elements) const {
    Counts c;
    if (f32_) c.scratch32.resize(kBlock);
    else c.scratch64.resize(kBlock);
    for (int k = 0; k < 4; ++k) {
        if (!wants(k)) continue;
        if (!fused_) c.hist[k].assign(kBins, 0);
        // Room for what the sample predicts, with a margin, so the gather rarely reallocates.
        const auto expect = static_cast<std::size_t>(predicted_share_[k] * 1.25 * static_cast<double>(partition_elements)) + kBlock;
        if (f32_) {
            c.keys32[k] = take_key_buffer<std::uint32_t>(expect);
            c.keys32[k].resize(expect);
        } else {
            c.keys64[k] = take_key_buffer<std::uint64_t>(expect);
            c.keys64[k].resize(expect);
        }
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
                      KeyBuffer<K>& out, std::size_t& used) {
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
    // Gathering more than an eighth of a large input would amount to copying it: give up and let
    // radix select finish the job.
    if (gathered_too_many(used, n_, 8)) c.overflow = true;
}

void RankWindows::feed(Counts& c, int stream, const double* v, std::size_t m) const { feed_impl(c, stream, v, m); }
void RankWindows::feed(Counts& c, int stream, const float* v, std::size_t m) const { feed_impl(c, stream, v, m); }

namespace {

// A wanted bin of float32 keys holding at least this many keys is counted instead of sorted:
// nth_element over many equal keys (a ReLU's zeros, a quantised output's few values) took 3-7
// times as long as over distinct ones, while counting costs the same whatever the values are.
constexpr std::size_t kCountFrom = std::size_t{1} << 12;
constexpr std::size_t kDigits = 256;  // the counted bins' low 16 bits, 8 at a time
constexpr std::size_t kLanes = 4;     // interleaved copies of each count: equal keys in a row
                                      // would otherwise wait on one counter's increments

// The digit of `hist` (kLanes interleaved copies of kDigits counts) holding position `pos`, and
// `pos` made relative to that digit; false when the counts hold fewer keys (the inputs changed
// during the pass).
bool digit_at(const std::uint32_t* hist, std::uint64_t& pos, std::size_t& digit) {
    for (digit = 0; digit < kDigits; ++digit) {
        std::uint64_t here = 0;
        for (std::size_t l = 0; l < kLanes; ++l) here += hist[l * kDigits + digit];
        if (pos < here) return true;
        pos -= here;
    }
    return false;
}

// Calls f(key, lane) for each of keys[0, m), lane = its index modulo kLanes (the last m % kLanes
// keys: lane 0), kLanes keys a step so that the compiler keeps the lanes' increments apart.
template <typename K, typename F>
void for_each_in_lanes(const K* keys, std::size_t m, F&& f) {
    std::size_t i = 0;
    for (; i + kLanes <= m; i += kLanes)
        for (std::size_t l = 0; l < kLanes; ++l) f(keys[i + l], l);
    for (; i < m; ++i) f(keys[i], std::size_t{0});
}

// Keys of the wanted ranks of one stream. A bin of 32-bit keys holding many keys is counted:
// one scan histograms its keys' bits 15..8, a second one bits 7..0 of the keys whose bits
// 15..8 hold a rank. The keys of the other wanted bins are collected by the first scan and
// nth_element runs on each bin's, ranks ascending so each call starts where the previous one
// left off. The scans have no branch a key (a key outside the counted bins counts into a sink
// histogram nobody reads; every key is written to the collected ones, and the cursor moves on
// past those of wanted bins), so that mixed bins cost no mispredictions.
// `wanted[i]` = (bin, [(target, rank in bin)]), `sizes[i]` its bin's count.
// False when a bin holds fewer keys than the histogram promised, which can only happen if the
// inputs changed during the pass (the GIL is released): the caller then falls back to radix
// select instead of indexing past the keys.
template <typename K>
bool select_in_bins(const std::vector<RankWindows::Counts*>& parts, int stream, int shift,
                    const std::vector<std::pair<std::size_t, std::vector<std::pair<std::size_t, std::uint64_t>>>>& wanted,
                    const std::vector<std::uint64_t>& sizes, std::vector<std::uint64_t>& keys_out,
                    std::array<KeyBuffer<K>, 4> RankWindows::Counts::*member) {
    const std::size_t nw = wanted.size();
    const auto sink = static_cast<std::int32_t>(nw);
    // bin -> its index in `wanted` when sorted (else -1), and when counted (else the sink)
    std::vector<std::int32_t> sorted_of(kBins, -1), counted_of(kBins, sink);
    // (sorted_of as a table of bytes, for the scan's branch-free cursor: a quarter of the cache)
    std::vector<std::uint8_t> is_sorted(kBins, 0);
    std::size_t sorted_keys = 0;
    bool any_counted = false;
    for (std::size_t i = 0; i < nw; ++i) {
        const std::size_t bin = wanted[i].first;
        if (sizeof(K) == 4 && sizes[i] >= kCountFrom) {
            counted_of[bin] = static_cast<std::int32_t>(i);
            any_counted = true;
        } else {
            sorted_of[bin] = static_cast<std::int32_t>(i);
            is_sorted[bin] = 1;
            sorted_keys += sizes[i];
        }
    }
    std::vector<std::uint32_t> high(any_counted ? (nw + 1) * kLanes * kDigits : 0, 0);
    // room for the sorted bins' keys, and for the one key past them the scan may write
    std::vector<K> collected(sorted_keys + 1);
    K* dst = collected.data();
    std::size_t kept = 0;
    for (auto* p : parts)
        for_each_in_lanes((p->*member)[stream].data(), p->used[stream], [&](K key, std::size_t lane) {
            const auto bin = static_cast<std::size_t>(key >> shift);
            if (any_counted)
                ++high[(static_cast<std::size_t>(counted_of[bin]) * kLanes + lane) * kDigits + ((key >> 8) & 0xFF)];
            dst[std::min(kept, sorted_keys)] = key;
            kept += is_sorted[bin];
        });
    if (kept > sorted_keys) return false;  // more than counted: the inputs changed during the pass
    std::vector<std::vector<K>> buckets(nw);
    for (std::size_t i = 0; i < nw; ++i)
        if (sorted_of[wanted[i].first] == static_cast<std::int32_t>(i)) buckets[i].reserve(sizes[i]);
    for (std::size_t j = 0; j < kept; ++j)
        buckets[static_cast<std::size_t>(sorted_of[static_cast<std::size_t>(collected[j] >> shift)])].push_back(collected[j]);
    for (std::size_t i = 0; i < nw; ++i) {
        if (sorted_of[wanted[i].first] != static_cast<std::int32_t>(i)) continue;
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
    if constexpr (sizeof(K) == 4) {
        if (!any_counted) return true;
        // Each rank's bits 15..8; then one histogram of bits 7..0 per (bin, bits 15..8) holding
        // a rank, its slot found through the counted bin's row of 256 (the sink's row and the
        // prefixes holding no rank lead to a sink slot).
        struct Pending {
            std::size_t target, slot;
            K prefix;
            std::uint64_t pos;
        };
        std::vector<Pending> pending;
        std::vector<std::int32_t> slot_of_prefix((nw + 1) * kDigits, -1);
        std::size_t slots = 0;
        for (std::size_t i = 0; i < nw; ++i) {
            if (counted_of[wanted[i].first] != static_cast<std::int32_t>(i)) continue;
            for (const auto& [t, rank_in_bin] : wanted[i].second) {
                std::uint64_t pos = rank_in_bin;
                std::size_t digit = 0;
                if (!digit_at(&high[i * kLanes * kDigits], pos, digit)) return false;
                std::int32_t& slot = slot_of_prefix[i * kDigits + digit];
                if (slot < 0) slot = static_cast<std::int32_t>(slots++);
                const K prefix = static_cast<K>((static_cast<K>(wanted[i].first) << shift) | (static_cast<K>(digit) << 8));
                pending.push_back({t, static_cast<std::size_t>(slot), prefix, pos});
            }
        }
        for (auto& slot : slot_of_prefix)
            if (slot < 0) slot = static_cast<std::int32_t>(slots);
        std::vector<std::uint32_t> low((slots + 1) * kLanes * kDigits, 0);
        for (auto* p : parts)
            for_each_in_lanes((p->*member)[stream].data(), p->used[stream], [&](K key, std::size_t lane) {
                const auto row = static_cast<std::size_t>(counted_of[static_cast<std::size_t>(key >> shift)]);
                const auto slot = static_cast<std::size_t>(slot_of_prefix[row * kDigits + ((key >> 8) & 0xFF)]);
                ++low[(slot * kLanes + lane) * kDigits + (key & 0xFF)];
            });
        for (Pending& x : pending) {
            std::size_t digit = 0;
            if (!digit_at(&low[x.slot * kLanes * kDigits], x.pos, digit)) return false;
            keys_out[x.target] = static_cast<std::uint64_t>(x.prefix | static_cast<K>(digit)) << 32;
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
    std::vector<std::uint64_t> sizes;  // keys in each of by_bin's bins
    std::vector<std::size_t> order;
    for (std::size_t t = 0; t < targets_.size(); ++t)
        if (targets_[t].stream == k) order.push_back(t);
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return targets_[x].rank < targets_[y].rank; });
    for (std::size_t t : order) {
        const std::uint64_t r = targets_[t].rank;
        const std::size_t bin = static_cast<std::size_t>(std::upper_bound(cum.begin(), cum.end(), r) - cum.begin()) - 1;
        if (bin >= kBins || !predicted_[k][bin]) return false;
        if (by_bin.empty() || by_bin.back().first != bin) {
            by_bin.push_back({bin, {}});
            sizes.push_back(cum[bin + 1] - cum[bin]);
        }
        by_bin.back().second.push_back({t, r - cum[bin]});
    }
    if (f32_) return select_in_bins<std::uint32_t>(parts, k, 16, by_bin, sizes, keys, &Counts::keys32);
    return select_in_bins<std::uint64_t>(parts, k, 48, by_bin, sizes, keys, &Counts::keys64);
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
