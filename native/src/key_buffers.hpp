// Buffers of the keys gathered during the one pass (rank_windows.hpp): vectors that grow
// without a zero fill, and a process-wide cache of their memory between comparisons.
//
// A buffer is written once, front to back, during the pass. In fresh memory each first
// touch of a 4 KB page is a page fault (1-3 us each in a VM): at 10^7 float32 elements with
// median and p90/p95/p99, about 1,200 of them, 14% of a one-thread call. Released buffers
// are therefore kept (up to kKeyCacheBytes in all) and handed to the next comparison.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace poly {

// An allocator whose resize() leaves new elements uninitialised (they are written before
// they are read): growing a buffer of gathered keys then costs no zero fill.
template <typename T>
struct UninitAllocator : std::allocator<T> {
    template <typename U>
    struct rebind {
        using other = UninitAllocator<U>;
    };
    UninitAllocator() = default;
    template <typename U>
    UninitAllocator(const UninitAllocator<U>&) noexcept {}
    template <typename U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;
    }
    template <typename U, typename... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};
template <typename K>
using KeyBuffer = std::vector<K, UninitAllocator<K>>;

// The most memory the cache keeps for later comparisons (larger buffers are freed).
constexpr std::size_t kKeyCacheBytes = std::size_t{64} << 20;

// An empty buffer: the smallest cached one that holds `want` keys, else the largest cached
// one, else a new one. (Thread-safe, as is give_key_buffer.)
KeyBuffer<std::uint32_t> take_key_buffer32(std::size_t want);
KeyBuffer<std::uint64_t> take_key_buffer64(std::size_t want);
template <typename K>
KeyBuffer<K> take_key_buffer(std::size_t want) {
    if constexpr (sizeof(K) == 4) return take_key_buffer32(want);
    else return take_key_buffer64(want);
}
// Keeps b's memory for a later take_key_buffer while the cache has room, else frees it.
void give_key_buffer(KeyBuffer<std::uint32_t>&& b) noexcept;
void give_key_buffer(KeyBuffer<std::uint64_t>&& b) noexcept;
// Bytes the cache holds now.
std::size_t cached_key_bytes();

}  // namespace poly
