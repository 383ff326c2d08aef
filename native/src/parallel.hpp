// Splits [0, n) into block-aligned partitions and runs them on worker threads.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "usable_cpus.hpp"

namespace poly {

// Requests above this many workers per usable CPU are capped: more threads than that only
// add start-up cost and contention to CPU-bound loops (and a request of a million threads
// must not try to start them).
constexpr int kThreadsPerCpu = 4;

// The most worker threads a call may use: kThreadsPerCpu x usable_cpus().
inline int max_threads() { return kThreadsPerCpu * usable_cpus(); }

// Elements a worker must have before the default (threads = 0) starts another: every
// parallel phase of a call (the pass, and with order statistics the windows' histograms and
// picks) starts its threads and merges their per-thread tallies, about 0.1-0.2 ms a phase at
// 16 threads, more than a thread's share of a small input saves. Measured on a 16-core Xeon
// (median of 2^17 float32 pairs: 0.5 ms on one thread, 3.1 ms on 16; 2^20: fastest on 4).
constexpr std::size_t kElementsPerDefaultThread = std::size_t{1} << 18;

// Worker count for `requested` (0 = every usable CPU, see usable_cpus.hpp, but no more than one
// per kElementsPerDefaultThread elements; larger requests are capped at max_threads()); small
// inputs stay on the calling thread, where starting threads would cost more than the work.
inline int resolve_threads(int requested, std::size_t n) {
    if (n < (std::size_t{1} << 16)) return 1;
    if (requested <= 0) {
        const std::size_t by_size = std::max<std::size_t>(1, n / kElementsPerDefaultThread);
        return static_cast<int>(std::min<std::size_t>(by_size, static_cast<std::size_t>(usable_cpus())));
    }
    return std::max(1, std::min(requested, max_threads()));
}

// Starts `job` on a new thread appended to `pool`; false (and nothing started) when the
// system refuses another thread, so that the caller can run the work itself instead of
// letting std::system_error escape while other threads are joinable (std::terminate).
template <class Job>
bool try_start(std::vector<std::thread>& pool, Job&& job) {
    try {
        pool.emplace_back(std::forward<Job>(job));
        return true;
    } catch (const std::system_error&) {
        return false;
    } catch (const std::bad_alloc&) {
        return false;
    }
}

// Calls fn(state, begin, end) for partitions that cover [0, n), each `align`-aligned and at
// most `max_len` long (so per-partition 32-bit counters cannot overflow). Returns the states
// in partition order, so that merging them in order keeps "first occurrence" semantics.
// Workers take partitions from a shared counter, so when fewer threads start than asked
// for, those that did (and the calling thread) run the rest.
template <class State, class Fn>
std::vector<State> run_partitions(std::size_t n, int threads, std::size_t align, Fn&& fn,
                                  std::size_t max_len = std::size_t{1} << 31) {
    const std::size_t blocks = (n + align - 1) / align;
    std::size_t parts = static_cast<std::size_t>(std::max(threads, 1));
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
    const int nthreads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), parts));
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(nthreads));
    for (int t = 1; t < nthreads; ++t)
        if (!try_start(pool, worker)) break;
    worker();
    for (auto& th : pool) th.join();
    if (error) std::rethrow_exception(error);
    return states;
}

}  // namespace poly
