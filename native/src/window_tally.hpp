// (Compiled once per instruction set, see kernels.hpp.) The rank-window tallies of the one-pass
// kernel (fused_pass.cpp) over one stream of a block: per window of a WindowSet the elements
// at or above it, and the bits of the elements inside a window, compacted.
#pragma once
#include <cstddef>

#include "kernels.hpp"

namespace poly {
namespace POLY_ARCH {

// Tallies the m values at v (non-negative floats or NaN, m a multiple of the lanes of T) on
// the windows of stream s (0: absdiff, 1: reldiff).
template <typename T>
void tally_windows(const T* v, std::size_t m, const WindowSet& w, int s, WindowTallyOf<WindowKey<T>>& t);

// Takes `pad` copies of v0, tallied last (the padding of a partial block), back out.
template <typename T>
void untally_padding(T v0, std::size_t pad, const WindowSet& w, int s, WindowTallyOf<WindowKey<T>>& t);

}  // namespace POLY_ARCH
}  // namespace poly
