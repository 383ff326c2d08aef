#include "sample_order.hpp"

#include <algorithm>
#include <stdexcept>

namespace poly {

template <typename K>
std::vector<K> keys_at(K* keys, std::size_t n, const std::vector<std::size_t>& pos) {
    std::vector<K> out(pos.size(), 0);
    if (n == 0 || pos.empty()) return out;
    for (std::size_t p : pos)
        if (p >= n) throw std::out_of_range("a sample position past its end");
    K lo_key = keys[0], hi_key = keys[0];
    for (std::size_t i = 1; i < n; ++i) {  // (vectorised, where std::minmax_element branches)
        lo_key = std::min(lo_key, keys[i]);
        hi_key = std::max(hi_key, keys[i]);
    }
    const std::uint64_t lo = lo_key, diff = static_cast<std::uint64_t>(hi_key) ^ lo;
    constexpr int kDigit = 11;
    constexpr std::size_t kRadix = std::size_t{1} << kDigit;
    const int top = diff == 0 ? 0 : 64 - __builtin_clzll(diff);  // bits below which the keys differ
    const int shift = std::max(0, top - kDigit);
    const std::uint64_t base = lo & ~((std::uint64_t{1} << shift) - 1);
    // the bin of a key: its bits [shift, top), offset from the smallest key's; < kRadix, as
    // every key agrees with the smallest above bit `top`
    auto bin_of = [&](K k) { return static_cast<std::size_t>((static_cast<std::uint64_t>(k) - base) >> shift); };
    std::vector<std::size_t> start(kRadix + 1, 0);
    for (std::size_t i = 0; i < n; ++i) ++start[bin_of(keys[i]) + 1];
    for (std::size_t j = 0; j < kRadix; ++j) start[j + 1] += start[j];
    auto bin_at = [&](std::size_t p) {
        return static_cast<std::size_t>(std::upper_bound(start.begin(), start.end(), p) - start.begin()) - 1;
    };
    std::vector<std::int32_t> slot_of(kRadix, -1);
    std::vector<std::size_t> slot_bin;
    for (std::size_t p : pos) {
        const std::size_t bin = bin_at(p);
        if (slot_of[bin] < 0) {
            slot_of[bin] = static_cast<std::int32_t>(slot_bin.size());
            slot_bin.push_back(bin);
        }
    }
    std::vector<std::vector<K>> in_bin(slot_bin.size());
    for (std::size_t i = 0; i < slot_bin.size(); ++i) in_bin[i].reserve(start[slot_bin[i] + 1] - start[slot_bin[i]]);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int32_t slot = slot_of[bin_of(keys[i])];
        if (slot >= 0) in_bin[static_cast<std::size_t>(slot)].push_back(keys[i]);
    }
    for (std::size_t i = 0; i < pos.size(); ++i) {
        const std::size_t bin = bin_at(pos[i]);
        auto& v = in_bin[static_cast<std::size_t>(slot_of[bin])];
        const auto nth = v.begin() + static_cast<std::ptrdiff_t>(pos[i] - start[bin]);
        std::nth_element(v.begin(), nth, v.end());
        out[i] = *nth;
    }
    return out;
}

template std::vector<std::uint64_t> keys_at<std::uint64_t>(std::uint64_t*, std::size_t, const std::vector<std::size_t>&);

}  // namespace poly
