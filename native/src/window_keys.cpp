// (Compiled once per instruction set, see kernels.hpp.) The two passes over the keys the
// one-pass kernel gathered in a stream's rank windows (rank_windows.cpp): counting them by
// window and sub-bin, then picking those of the few bins that hold a wanted rank. Float32
// keys (8 lanes of int32) and float64 keys (4 lanes of int64) from one template.
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels.hpp"
#include "lanes.hpp"

namespace poly {
namespace POLY_ARCH {
namespace {

// NW windows: a key's window is the number of windows starting at or below it, less one (they
// are disjoint and ascending), and that window's bounds and shift are selected lane by lane.
template <typename T, int NW>
bool count_in(const typename Lanes<T>::Bits* g, std::size_t m, const WindowSet& ws, int s, std::uint32_t* hist) {
    using L = Lanes<T>;
    using I = typename L::I;
    using U = typename L::U;
    using Bits = typename L::Bits;
    I lo_minus1[NW], hi[NW], lo[NW], shift[NW];
    for (int j = 0; j < NW; ++j) {
        // (with NW == kMaxWindows, the unused windows start past every key)
        const bool used = j < ws.count[s];
        lo_minus1[j] = splat(used ? static_cast<Bits>(ws.lo_minus1[s][j]) : std::numeric_limits<Bits>::max());
        hi[j] = splat(used ? static_cast<Bits>(ws.hi[s][j]) : std::numeric_limits<Bits>::max());
        lo[j] = (I)((U)lo_minus1[j] + (U)splat(Bits{1}));  // (wraps for an unused window: never selected)
        shift[j] = splat(static_cast<Bits>(used ? sub_bin_shift(ws, s, j) : 0));
    }
    const U last_sub = (U)splat(static_cast<Bits>(kSubBins - 1));
    I bad = splat(Bits{0});
    alignas(32) Bits idx[L::n];
    std::size_t i = 0;
    for (; i + L::n <= m; i += L::n) {
        const I x = bits_of<T>(load(reinterpret_cast<const T*>(g + i)));
        I w = splat(Bits{0}), w_lo = lo[0], w_lo_minus1 = lo_minus1[0], w_hi = hi[0], w_shift = shift[0];
        for (int j = 1; j < NW; ++j) {
            const I ge = x > lo_minus1[j];
            w -= ge;
            w_lo = (ge & lo[j]) | (~ge & w_lo);
            w_lo_minus1 = (ge & lo_minus1[j]) | (~ge & w_lo_minus1);
            w_hi = (ge & hi[j]) | (~ge & w_hi);
            w_shift = (ge & shift[j]) | (~ge & w_shift);
        }
        bad |= ~(x > w_lo_minus1) | (x > w_hi);
        U sub = ((U)x - (U)w_lo) >> (U)w_shift;  // (unsigned: wraps, never overflows)
        sub = sub < last_sub ? sub : last_sub;
        const I bin = (w << kSubBinBits) + (I)sub;
        std::memcpy(idx, &bin, sizeof(bin));
        for (int j = 0; j < L::n; ++j) ++hist[static_cast<std::size_t>(idx[j])];
    }
    bool any_bad = any_lane(bad);
    // the last keys, one at a time, on the same window bounds (any lane of them)
    using K = typename std::make_unsigned<Bits>::type;
    for (; i < m; ++i) {
        const Bits x = g[i];
        int w = 0;
        for (int j = 1; j < NW; ++j) w += x > lo_minus1[j][0];
        any_bad |= x <= lo_minus1[w][0] || x > hi[w][0];
        const K off = static_cast<K>(x) - static_cast<K>(lo[w][0]);
        const K sub = std::min<K>(off >> shift[w][0], static_cast<K>(kSubBins - 1));
        ++hist[static_cast<std::size_t>(w) * kSubBins + static_cast<std::size_t>(sub)];
    }
    return any_bad;
}

template <typename T>
bool count_window_keys(const typename Lanes<T>::Bits* g, std::size_t m, const WindowSet& w, int s,
                       std::uint32_t* hist) {
    switch (w.count[s]) {
        case 0: return m > 0;  // no window: every key lies outside
        case 1: return count_in<T, 1>(g, m, w, s, hist);
        case 2: return count_in<T, 2>(g, m, w, s, hist);
        case 3: return count_in<T, 3>(g, m, w, s, hist);
        case 4: return count_in<T, 4>(g, m, w, s, hist);
        default: return count_in<T, kMaxWindows>(g, m, w, s, hist);
    }
}

template <typename T>
std::size_t pick_window_keys(const typename Lanes<T>::Bits* g, std::size_t m, const KeyRanges& r,
                             typename Lanes<T>::Bits* out, std::size_t cap) {
    using L = Lanes<T>;
    using I = typename L::I;
    using U = typename L::U;
    using Bits = typename L::Bits;
    using K = typename std::make_unsigned<Bits>::type;
    const int nr = r.count < kMaxRanges ? r.count : kMaxRanges;
    U first[kMaxRanges], span[kMaxRanges];
    for (int j = 0; j < nr; ++j) {
        first[j] = (U)splat(static_cast<Bits>(r.first[j]));
        span[j] = (U)splat(static_cast<Bits>(r.span[j]));
    }
    std::size_t used = 0;
    std::size_t i = 0;
    for (; i + L::n <= m; i += L::n) {
        const I x = bits_of<T>(load(reinterpret_cast<const T*>(g + i)));
        I in = splat(Bits{0});
        for (int j = 0; j < nr; ++j) in |= (I)((U)x - first[j] <= span[j]);
        if (!any_lane(in)) continue;
        used += compact(x, in, out + used);
        if (used > cap) return cap + 1;
    }
    for (; i < m; ++i) {
        bool in = false;
        for (int j = 0; j < nr; ++j)
            in |= static_cast<K>(static_cast<K>(g[i]) - static_cast<K>(r.first[j])) <= static_cast<K>(r.span[j]);
        if (!in) continue;
        if (used == cap) return cap + 1;
        out[used++] = g[i];
    }
    return used;
}

}  // namespace

bool count_window_keys32(const std::int32_t* g, std::size_t m, const WindowSet& w, int s, std::uint32_t* hist) {
    return count_window_keys<float>(g, m, w, s, hist);
}
bool count_window_keys64(const std::int64_t* g, std::size_t m, const WindowSet& w, int s, std::uint32_t* hist) {
    static_assert(sizeof(long long) == sizeof(std::int64_t), "64-bit lanes");
    return count_window_keys<double>(reinterpret_cast<const long long*>(g), m, w, s, hist);
}
std::size_t pick_window_keys32(const std::int32_t* g, std::size_t m, const KeyRanges& r, std::int32_t* out,
                               std::size_t cap) {
    return pick_window_keys<float>(g, m, r, out, cap);
}
std::size_t pick_window_keys64(const std::int64_t* g, std::size_t m, const KeyRanges& r, std::int64_t* out,
                               std::size_t cap) {
    return pick_window_keys<double>(reinterpret_cast<const long long*>(g), m, r, reinterpret_cast<long long*>(out),
                                    cap);
}

}  // namespace POLY_ARCH
}  // namespace poly
