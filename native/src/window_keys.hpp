// (Compiled once per instruction set, see kernels.hpp.) The work on the keys the one-pass
// kernel gathered in a stream's rank windows (window_keys.cpp): counting them by window and
// sub-bin, block by block inside that kernel (fused_pass.cpp): true when some key lies outside
// every window, which only inputs changed during the pass can cause (it is then counted in a
// bin of its nearest window, so every write stays in bounds); and picking those of the wanted
// bins after the pass (KernelTable::pick_window_keys32/64).
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels.hpp"

namespace poly {
namespace POLY_ARCH {

bool count_window_keys32(const std::int32_t* g, std::size_t m, const WindowSet& w, int s, std::uint32_t* hist);
bool count_window_keys64(const std::int64_t* g, std::size_t m, const WindowSet& w, int s, std::uint32_t* hist);
std::size_t pick_window_keys32(const std::int32_t* g, std::size_t m, const KeyRanges& r, std::int32_t* out,
                               std::size_t cap);
std::size_t pick_window_keys64(const std::int64_t* g, std::size_t m, const KeyRanges& r, std::int64_t* out,
                               std::size_t cap);

}  // namespace POLY_ARCH
}  // namespace poly
