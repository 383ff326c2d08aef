#include "key_buffers.hpp"

#include <algorithm>
#include <mutex>

namespace poly {
namespace {

// Buffers smaller than this are not worth keeping: a few page faults at most.
constexpr std::size_t kMinCachedBytes = std::size_t{256} << 10;

struct Cache {
    std::mutex mutex;
    std::vector<KeyBuffer<std::uint32_t>> free32;
    std::vector<KeyBuffer<std::uint64_t>> free64;
    std::size_t bytes = 0;

    template <typename K>
    std::vector<KeyBuffer<K>>& list() {
        if constexpr (sizeof(K) == 4) return free32;
        else return free64;
    }
};

Cache& cache() {
    static Cache* c = new Cache;  // never destroyed: buffers may be released during exit
    return *c;
}

template <typename K>
KeyBuffer<K> take(std::size_t want) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto& list = c.list<K>();
    if (list.empty()) return {};
    auto pick = list.begin();  // the best fit: smallest holding `want`, else largest
    for (auto it = list.begin(); it != list.end(); ++it) {
        const bool fits = it->capacity() >= want, pick_fits = pick->capacity() >= want;
        if (fits ? (!pick_fits || it->capacity() < pick->capacity()) : (!pick_fits && it->capacity() > pick->capacity()))
            pick = it;
    }
    KeyBuffer<K> b = std::move(*pick);
    list.erase(pick);
    c.bytes -= b.capacity() * sizeof(K);
    return b;
}

template <typename K>
void give(KeyBuffer<K>&& b) noexcept {
    const std::size_t bytes = b.capacity() * sizeof(K);
    if (bytes < kMinCachedBytes) return;  // b frees its memory as the caller's copy goes
    Cache& c = cache();
    KeyBuffer<K> kept = std::move(b);
    try {
        std::lock_guard<std::mutex> lock(c.mutex);
        if (c.bytes + bytes > kKeyCacheBytes) return;  // `kept` frees it
        kept.clear();
        c.list<K>().push_back(std::move(kept));
        c.bytes += bytes;
    } catch (...) {
        // no room for the list entry (or no lock): the buffer is simply freed
    }
}

}  // namespace

KeyBuffer<std::uint32_t> take_key_buffer32(std::size_t want) { return take<std::uint32_t>(want); }
KeyBuffer<std::uint64_t> take_key_buffer64(std::size_t want) { return take<std::uint64_t>(want); }
void give_key_buffer(KeyBuffer<std::uint32_t>&& b) noexcept { give(std::move(b)); }
void give_key_buffer(KeyBuffer<std::uint64_t>&& b) noexcept { give(std::move(b)); }

std::size_t cached_key_bytes() {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    return c.bytes;
}

}  // namespace poly
