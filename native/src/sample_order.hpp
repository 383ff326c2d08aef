// Order statistics of a sample of keys (a few ten thousand unsigned integers): the keys at
// given positions of its sorted order, without sorting it. The rank windows of the one-pass
// kernel (rank_windows.cpp) plan from such a sample.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace poly {

// The keys at positions `pos` (each < n) of the sorted order of the n keys at `keys`, which
// it reorders. One histogram of 11 bits below the highest bit in which the keys differ finds
// each position's bin; nth_element then runs within those bins only (three reads of the
// sample and a few small selects, where an nth_element per position or a full sort reads it
// again and again).
template <typename K>
std::vector<K> keys_at(K* keys, std::size_t n, const std::vector<std::size_t>& pos);

}  // namespace poly
