// One-pass exact order statistics for the common case. The main pass builds a histogram of
// the top 16 key bits of each stream and gathers the keys of a few bins: those a small
// sample of the inputs predicts will hold the wanted ranks. Afterwards the histogram says
// exactly which bin holds each rank; when that bin was gathered, nth_element over it gives
// the exact value with no further pass over the data. When the sample guessed wrong (or
// the gathered set would be too large) the caller falls back to radix select, so the result
// never depends on the sample.
#pragma once
#include <array>
#include <memory>
#include <utility>
#include <cstdint>
#include <vector>

#include "kernel.hpp"
#include "kernels.hpp"
#include "key_buffers.hpp"
#include "order_select.hpp"

namespace poly {

class RankWindows {
public:
    // Per-partition tallies. Float32 keys are gathered as their high 32 bits.
    struct Counts {
        Counts() = default;
        Counts(Counts&&) = default;
        Counts& operator=(Counts&&) = default;
        // The key buffers' memory goes back to the cache, for the next comparison.
        ~Counts() {
            for (auto& k : keys32) give_key_buffer(std::move(k));
            for (auto& k : keys64) give_key_buffer(std::move(k));
        }
        std::array<std::vector<std::uint32_t>, 4> hist;      // top-16-bit histogram per stream
        std::array<KeyBuffer<std::uint32_t>, 4> keys32;      // gathered keys (float32 compute)
        std::array<KeyBuffer<std::uint64_t>, 4> keys64;      // gathered keys (float64 compute)
        std::array<std::size_t, 4> used{};                   // gathered so far (vector size = capacity)
        std::vector<std::uint32_t> scratch32;                // one block of keys, float32 compute
        std::vector<std::uint64_t> scratch64;                // one block of keys, float64 compute
        bool overflow = false;
        // The one-pass kernel's tallies (fused()): gathered bits of absdiff (0) and reldiff
        // (1) in keys32 (float32 compute) or keys64 (float64 compute) [kAbs] / [kRel], counts
        // above each window.
        WindowTally32 tally32;
        WindowTally64 tally64;
        // Those of key width K (32 or 64 bits).
        template <typename K>
        WindowTallyOf<K>& tally() {
            if constexpr (sizeof(K) == 4) return tally32;
            else return tally64;
        }
        template <typename K>
        std::array<KeyBuffer<K>, 4>& keys() {
            if constexpr (sizeof(K) == 4) return keys32;
            else return keys64;
        }
    };

    // Samples the inputs and predicts the bins of `targets`; inactive for inputs too small to
    // be worth it (radix select is cheap there).
    // `fused_kernel`: the caller tallies blocks with the one-pass kernel (fused()).
    RankWindows(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                const std::vector<RankTarget>& targets, bool fused_kernel = false);

    bool active() const { return active_; }
    bool wants(int stream) const { return !predicted_[stream].empty(); }
    Counts make_counts(std::size_t partition_elements) const;
    // True when the one-pass kernel tallies the windows (float32 or float64 compute): then
    // window_set() goes to the kernel, with tally_for() before each block and after_block()
    // after it, and resolve_fused() replaces resolve().
    bool fused() const { return fused_; }
    const WindowSet& window_set() const { return window_set_; }
    // The tally to hand the kernel for a block of m elements (room reserved), or null once
    // the gathered set grew too large (then resolve_fused() fails and radix select runs).
    // K: the kernel's key width (WindowKey of the compute type).
    template <typename K>
    WindowTallyOf<K>* tally_for(Counts& c, std::size_t m) const;
    void after_block(Counts& c) const;
    // (The two passes over the gathered keys run on up to `threads` threads.)
    bool resolve_fused(std::vector<Counts*>& parts, std::vector<std::uint64_t>& keys,
                       const std::array<bool, 4>& skip, int threads) const;
    // Tallies one block of `stream`'s values.
    void feed(Counts& c, int stream, const double* v, std::size_t m) const;
    void feed(Counts& c, int stream, const float* v, std::size_t m) const;
    // Keys of every target, or false when some rank fell in a bin that was not gathered.
    // `parts` are the partitions' tallies in order; targets on streams marked in `skip`
    // (those holding NaN) are not needed.
    // Streams resolve concurrently when `threads` > 1.
    bool resolve(std::vector<Counts*>& parts, std::vector<std::uint64_t>& keys,
                 const std::array<bool, 4>& skip, int threads) const;

private:
    template <typename T>
    void feed_impl(Counts& c, int stream, const T* v, std::size_t m) const;
    bool resolve_stream(int stream, const std::vector<Counts*>& parts, std::vector<std::uint64_t>& keys) const;

    bool f32_ = true;
    bool active_ = false;
    std::uint64_t n_ = 0;
    std::vector<RankTarget> targets_;
    std::array<std::vector<std::uint8_t>, 4> predicted_;  // per stream: bin -> gathered?
    std::array<double, 4> predicted_share_{};             // share of the sample in those bins
    bool fused_ = false;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> key_span_;  // per target: sample keys bounding its window
    WindowSet window_set_;
    template <typename K>
    void build_window_set();
    template <typename K>
    bool resolve_fused_keys(std::vector<Counts*>& parts, std::vector<std::uint64_t>& keys,
                            const std::array<bool, 4>& skip, int threads) const;
};

}  // namespace poly
