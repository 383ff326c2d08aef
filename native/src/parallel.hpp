// Splits [0, n) into block-aligned partitions and runs them on worker threads.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace poly {

// Worker count for `requested` (0 = all cores); small inputs stay on the calling thread,
// where starting threads would cost more than the work.
inline int resolve_threads(int requested, std::size_t n) {
    int t = requested > 0 ? requested : static_cast<int>(std::thread::hardware_concurrency());
    if (t < 1) t = 1;
    if (n < (std::size_t{1} << 16)) t = 1;
    return t;
}

// Calls fn(state, begin, end) for partitions that cover [0, n), each `align`-aligned and at
// most `max_len` long (so per-partition 32-bit counters cannot overflow). Returns the states
// in partition order, so that merging them in order keeps "first occurrence" semantics.
template <class State, class Fn>
std::vector<State> run_partitions(std::size_t n, int threads, std::size_t align, Fn&& fn,
                                  std::size_t max_len = std::size_t{1} << 31) {
    const std::size_t blocks = (n + align - 1) / align;
    std::size_t parts = static_cast<std::size_t>(threads);
    const std::size_t min_parts = (n + max_len - 1) / max_len;
    parts = std::max<std::size_t>(parts, min_parts);
    parts = std::max<std::size_t>(1, std::min(parts, blocks));
    std::vector<State> states(parts);
    std::vector<std::pair<std::size_t, std::size_t>> ranges(parts);
    for (std::size_t p = 0; p < parts; ++p) {
        const std::size_t b0 = blocks * p / parts, b1 = blocks * (p + 1) / parts;
        ranges[p] = {std::min(n, b0 * align), std::min(n, b1 * align)};
    }
    std::atomic<std::size_t> next{0};
    std::exception_ptr error;
    std::mutex error_mutex;
    auto worker = [&]() {
        for (;;) {
            const std::size_t p = next.fetch_add(1);
            if (p >= parts) return;
            try {
                fn(states[p], ranges[p].first, ranges[p].second);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!error) error = std::current_exception();
            }
        }
    };
    const int nthreads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads), parts));
    std::vector<std::thread> pool;
    for (int t = 1; t < nthreads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& th : pool) th.join();
    if (error) std::rethrow_exception(error);
    return states;
}

}  // namespace poly
