// (Compiled once per instruction set, see kernels.hpp; strict IEEE semantics.)
// Rank-window tallies over one stream of a block, for float32 (8 lanes of int32 bits) and
// float64 (4 lanes of int64 bits) from one template.
#include "window_tally.hpp"

#include <cstring>
#include <limits>
#include <type_traits>

#include "lanes.hpp"

namespace poly {
namespace POLY_ARCH {
namespace {

// Any number of windows: per window one compare for "at or above" and one for "past its end".
template <typename T>
void tally_any(const T* v, std::size_t m, const WindowSet& w, int s, WindowTallyOf<WindowKey<T>>& t) {
    using L = Lanes<T>;
    using I = typename L::I;
    using Bits = typename L::Bits;
    const int nw = w.count[s];
    I ge_acc[kMaxWindows], lo[kMaxWindows], hi[kMaxWindows];
    for (int k = 0; k < nw; ++k) {
        ge_acc[k] = splat(Bits{0});
        lo[k] = splat(static_cast<Bits>(w.lo_minus1[s][k]));
        hi[k] = splat(static_cast<Bits>(w.hi[s][k]));
    }
    WindowKey<T>* dst = t.dst[s] + t.used[s];
    std::size_t used = 0;
    for (std::size_t i = 0; i < m; i += L::n) {
        const I bits = bits_of<T>(load(v + i));
        I any = splat(Bits{0});
        for (int k = 0; k < nw; ++k) {
            const I ge = bits > lo[k];
            ge_acc[k] -= ge;
            any |= ge & ~(bits > hi[k]);
        }
        used += compact(bits, any, dst + used);
    }
    t.used[s] += used;
    for (int k = 0; k < nw; ++k) t.at_or_above[s][k] += static_cast<std::uint64_t>(hsum_int(ge_acc[k]));
}

// The same for up to four windows with fewer instructions: the windows are disjoint and
// ascending, so the number k of windows an element is at or above says everything. The
// element lies inside window k exactly when it is not past that window's end (one select of
// that end, one compare), and a per-lane count of each k is kept in the four fields of one
// lane (a byte of a float32 lane, which sees at most kBlock / 8 = 128 elements per block; 16
// bits of a float64 lane, which sees 256). With one window that count is the compare's; float64
// lanes with several windows keep a count per window instead (fewer 64-bit operations).
template <typename T, int NW>
void tally_few(const T* v, std::size_t m, const WindowSet& w, int s, WindowTallyOf<WindowKey<T>>& t) {
    static_assert(NW >= 1 && NW <= 4, "one field per window in a lane");
    using L = Lanes<T>;
    using I = typename L::I;
    using U = typename L::U;
    using Bits = typename L::Bits;
    constexpr bool kFloat = std::is_same_v<T, float>;
    I lo[NW], hi[NW];
    for (int k = 0; k < NW; ++k) {
        lo[k] = splat(static_cast<Bits>(w.lo_minus1[s][k]));
        hi[k] = splat(static_cast<Bits>(w.hi[s][k]));
    }
    // float32: the end of window k - 1 per lane by one permute of hi_of_k (k == 0: inside no
    // window). Built as one vector value: filled lane by lane in memory, the compiler would
    // read it from there every iteration, and that load then waits behind the compaction's
    // stores. float64 lanes hold too few entries for that: the end is selected window by window.
    v8i hi_of_k{};
    if constexpr (kFloat) {
        std::int32_t e[4] = {};
        for (int k = 0; k < NW; ++k) e[k] = static_cast<std::int32_t>(w.hi[s][k]);
        hi_of_k = v8i{std::numeric_limits<std::int32_t>::min(), e[0], e[1], e[2], e[3], 0, 0, 0};
    }
    WindowKey<T>* dst = t.dst[s] + t.used[s];
    std::size_t used = 0;
    U counts{};  // unsigned: the top field may reach the lane's top bit
    // float64 lanes with several windows: a count per window of the elements at or above it,
    // one subtraction each (cheaper than the fields' arithmetic on 64-bit lanes)
    U above[NW] = {};
    for (std::size_t i = 0; i < m; i += L::n) {
        const I bits = bits_of<T>(load(v + i));
        I ge[NW];
        ge[0] = bits > lo[0];
        I minus_k = ge[0];
        for (int k = 1; k < NW; ++k) {
            ge[k] = bits > lo[k];
            minus_k += ge[k];
        }
        I inside;
        if constexpr (NW == 1) {
            // one window: its field is the lane's lowest, and k is 0 or 1 (ge[0])
            counts -= (U)ge[0];
            inside = ge[0] & ~(bits > hi[0]);
        } else if constexpr (kFloat) {
            const I k = -minus_k;
            counts += field_of(k);
            inside = ~(bits > pick(hi_of_k, k));
        } else {
            for (int j = 0; j < NW; ++j) above[j] -= (U)ge[j];
            I end = hi[0];
            for (int j = 1; j < NW; ++j) end = (ge[j] & hi[j]) | (~ge[j] & end);
            inside = ge[0] & ~(bits > end);
        }
        used += compact(bits, inside, dst + used);
    }
    (void)hi;
    t.used[s] += used;
    if constexpr (!kFloat && NW > 1) {
        for (int j = 0; j < NW; ++j) t.at_or_above[s][j] += static_cast<std::uint64_t>(hsum_int(above[j]));
    } else {
        constexpr int kField = 8 * static_cast<int>(sizeof(Bits)) / 4;
        constexpr Bits kMask = (Bits{1} << kField) - 1;
        std::uint64_t at_or_above = 0;  // elements at or above window j: those with k > j
        for (int j = NW - 1; j >= 0; --j) {
            at_or_above += static_cast<std::uint64_t>(hsum_int((counts >> (kField * j)) & static_cast<typename std::make_unsigned<Bits>::type>(kMask)));
            t.at_or_above[s][j] += at_or_above;
        }
    }
}

}  // namespace

template <typename T>
void tally_windows(const T* v, std::size_t m, const WindowSet& w, int s, WindowTallyOf<WindowKey<T>>& t) {
    switch (w.count[s]) {
        case 1: return tally_few<T, 1>(v, m, w, s, t);
        case 2: return tally_few<T, 2>(v, m, w, s, t);
        case 3: return tally_few<T, 3>(v, m, w, s, t);
        case 4: return tally_few<T, 4>(v, m, w, s, t);
        default: return tally_any<T>(v, m, w, s, t);
    }
}

template <typename T>
void untally_padding(T v0, std::size_t pad, const WindowSet& w, int s, WindowTallyOf<WindowKey<T>>& t) {
    typename Lanes<T>::Bits bits;
    std::memcpy(&bits, &v0, sizeof(bits));
    bool in = false;
    for (int k = 0; k < w.count[s]; ++k) {
        if (bits > w.lo_minus1[s][k]) {
            t.at_or_above[s][k] -= pad;
            in = in || bits <= w.hi[s][k];
        }
    }
    if (in) t.used[s] -= pad;  // the padding's copies are the last ones gathered
}

template void tally_windows<float>(const float*, std::size_t, const WindowSet&, int, WindowTally32&);
template void tally_windows<double>(const double*, std::size_t, const WindowSet&, int, WindowTally64&);
template void untally_padding<float>(float, std::size_t, const WindowSet&, int, WindowTally32&);
template void untally_padding<double>(double, std::size_t, const WindowSet&, int, WindowTally64&);

}  // namespace POLY_ARCH
}  // namespace poly
