#include "order_select.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "parallel.hpp"

namespace poly {
namespace {

constexpr int kDigitBits = 16;
constexpr std::size_t kBins = std::size_t{1} << kDigitBits;
// A candidate set this small (or an input this small) is gathered and finished in memory
// (select_ranks) in one pass instead of refining 16 bits at a time over the inputs.
constexpr std::uint64_t kGatherCap = std::uint64_t{1} << 18;

struct Target {
    int stream;
    std::uint64_t rank;
    std::uint64_t prefix = 0;  // known top `bits` bits of the key
    int bits = 0;
    std::uint64_t rank_in = 0;  // rank among elements sharing the prefix
    std::uint64_t count = 0;    // elements sharing the prefix
    bool done = false;
    std::uint64_t key = 0;
};

struct Group {
    int stream;
    std::uint64_t prefix;
    int bits;
    bool gather;
};

struct PassState {
    std::vector<std::vector<std::uint32_t>> hist;  // per group (empty when gathering)
    std::vector<std::vector<std::uint64_t>> keys;  // per group (gathering)
};

// A key with the target's known prefix (and zeros below it): its answer when the inputs
// changed under the selection so that no element has that prefix any more.
std::uint64_t prefix_key(const Target& t) { return t.bits > 0 ? t.prefix << (64 - t.bits) : 0; }

// Narrows `t` to the bin of `hist` holding its rank. The counts come from a pass over inputs
// that another thread may have changed since the previous pass (the GIL is released), so the
// rank is clamped to what this pass saw: every call adds 16 known bits or finishes `t`.
void descend(Target& t, const std::uint64_t* hist) {
    std::uint64_t total = 0;
    for (std::size_t bin = 0; bin < kBins; ++bin) total += hist[bin];
    if (total == 0) {
        t.key = prefix_key(t);
        t.done = true;
        return;
    }
    if (t.rank_in >= total) t.rank_in = total - 1;
    std::uint64_t cum = 0;
    for (std::size_t bin = 0; bin < kBins; ++bin) {
        if (cum + hist[bin] > t.rank_in) {
            t.prefix = (t.prefix << kDigitBits) | bin;
            t.bits += kDigitBits;
            t.rank_in -= cum;
            t.count = hist[bin];
            return;
        }
        cum += hist[bin];
    }
}

// numpy.quantile(method="linear") from the two order statistics around (n-1)*q.
double lerp_numpy(double lo, double hi, double gamma) {
    const double diff = hi - lo;
    return gamma >= 0.5 ? hi - diff * (1.0 - gamma) : lo + diff * gamma;
}

void ranks_for(const OrderRequest& r, std::uint64_t n, std::uint64_t& lo, std::uint64_t& hi, double& gamma) {
    if (r.is_median) {
        lo = (n - 1) / 2;
        hi = n / 2;
        gamma = 0.5;
        return;
    }
    const double vi = static_cast<double>(n - 1) * r.q;
    if (vi >= static_cast<double>(n - 1)) {
        // NumPy points both neighbours at the last element (index -1), so gamma is vi + 1
        lo = hi = n - 1;
        gamma = vi + 1.0;
        return;
    }
    const double prev = vi < 0 ? 0.0 : std::floor(vi);
    lo = static_cast<std::uint64_t>(prev);
    hi = lo + 1;
    gamma = vi < 0 ? 0.0 : vi - prev;
}

constexpr int kMemoryDigitBits = 11;  // select_ranks: 2048 counters (8 KiB) a step
constexpr std::size_t kMemorySortMax = 64;  // a range this small is sorted instead

// One step of select_ranks over keys[0, n) whose top `known` bits are equal: `want` holds
// (rank in the range, index of the answer) pairs, ascending by rank.
void select_step(std::uint64_t* keys, std::size_t n, int known,
                 std::vector<std::pair<std::uint64_t, std::size_t>>& want, std::vector<std::uint64_t>& out,
                 std::vector<std::uint64_t>& spare) {
    if (n <= kMemorySortMax || known >= 64) {
        std::sort(keys, keys + n);  // (known >= 64: all equal)
        for (const auto& [rank, at] : want) out[at] = keys[rank];
        return;
    }
    // The range's smallest and largest keys: where they are equal every rank has that key (ties
    // everywhere, as two equal outputs give: counting digit after digit and sorting the equal keys
    // at the end cost 60 ns a key), and the bits they share are known without counting them.
    std::uint64_t lo = keys[0], hi = keys[0];
    for (std::size_t i = 1; i < n; ++i) {
        lo = std::min(lo, keys[i]);
        hi = std::max(hi, keys[i]);
    }
    if (lo == hi) {
        for (const auto& [rank, at] : want) out[at] = lo;
        return;
    }
    known = std::max(known, __builtin_clzll(lo ^ hi));
    const int bits = std::min(kMemoryDigitBits, 64 - known);
    const int shift = 64 - known - bits;
    const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
    std::vector<std::size_t> count(std::size_t{1} << bits, 0);
    for (std::size_t i = 0; i < n; ++i) ++count[(keys[i] >> shift) & mask];
    // The bins holding a rank, each with its ranks (made relative to the bin).
    struct Bin {
        std::size_t digit, size;
        std::vector<std::pair<std::uint64_t, std::size_t>> want;
    };
    std::vector<Bin> bins;
    std::size_t below = 0, digit = 0;
    for (const auto& [rank, at] : want) {
        while (below + count[digit] <= rank) below += count[digit++];
        if (bins.empty() || bins.back().digit != digit) bins.push_back({digit, count[digit], {}});
        bins.back().want.push_back({rank - below, at});
    }
    if (bins.size() == 1 && bins[0].size == n) {  // one digit for all: nothing to move
        select_step(keys, n, known + bits, bins[0].want, out, spare);
        return;
    }
    // The keys of the wanted bins, packed one bin after the other at the front of `spare`.
    std::vector<std::int32_t> slot(std::size_t{1} << bits, -1);
    std::vector<std::size_t> fill(bins.size());
    std::size_t total = 0;
    for (std::size_t j = 0; j < bins.size(); ++j) {
        slot[bins[j].digit] = static_cast<std::int32_t>(j);
        fill[j] = total;
        total += bins[j].size;
    }
    spare.resize(std::max(spare.size(), total));
    std::uint64_t* packed = spare.data();
    for (std::size_t i = 0; i < n; ++i) {
        const std::int32_t j = slot[(keys[i] >> shift) & mask];
        if (j >= 0) packed[fill[static_cast<std::size_t>(j)]++] = keys[i];
    }
    // The packed keys go back over the front of `keys` (no longer needed), so that `spare` is
    // free for the next step.
    std::copy(packed, packed + total, keys);
    std::size_t offset = 0;
    for (auto& bin : bins) {
        select_step(keys + offset, bin.size, known + bits, bin.want, out, spare);
        offset += bin.size;
    }
}

}  // namespace

std::vector<std::uint64_t> select_ranks(std::uint64_t* keys, std::size_t n, const std::vector<std::uint64_t>& ranks) {
    std::vector<std::uint64_t> out(ranks.size(), 0);
    if (ranks.empty() || n == 0) return out;
    std::vector<std::pair<std::uint64_t, std::size_t>> want;
    for (std::size_t i = 0; i < ranks.size(); ++i) want.push_back({std::min<std::uint64_t>(ranks[i], n - 1), i});
    std::sort(want.begin(), want.end());
    std::vector<std::uint64_t> spare;
    select_step(keys, n, 0, want, out, spare);
    return out;
}

std::array<std::uint64_t, 4> count_nans(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                                        int threads) {
    const std::size_t n = a.size;
    struct S { std::array<std::uint64_t, 4> nan{}; };
    auto states = run_partitions<S>(n, resolve_threads(threads, n), kBlock,
                                    [&](S& st, std::size_t begin, std::size_t end) {
        auto blk = new_block();
        for (std::size_t s = begin; s < end; s += kBlock) {
            const std::size_t m = std::min(kBlock, end - s);
            compute_block(cfg, a, b, s, m, *blk);
            for (int k = 0; k < 4; ++k)
                for (std::size_t i = 0; i < m; ++i) st.nan[k] += std::isnan(blk->v[k][i]);
        }
    });
    std::array<std::uint64_t, 4> out{};
    for (auto& st : states)
        for (int k = 0; k < 4; ++k) out[k] += st.nan[k];
    return out;
}

RankPlan plan_ranks(const std::vector<OrderRequest>& requests, std::uint64_t n,
                    const std::array<std::uint64_t, 4>& nan_counts) {
    RankPlan plan;
    std::map<std::pair<int, std::uint64_t>, std::size_t> target_of;
    auto want = [&](int stream, std::uint64_t rank) {
        auto it = target_of.find({stream, rank});
        if (it != target_of.end()) return it->second;
        plan.targets.push_back({stream, rank});
        target_of[{stream, rank}] = plan.targets.size() - 1;
        return plan.targets.size() - 1;
    };
    for (const auto& r : requests) {
        if (n == 0 || nan_counts[r.stream] > 0) {
            plan.items.push_back({0, 0, 0, false, true});
            continue;
        }
        std::uint64_t lo, hi;
        double gamma;
        ranks_for(r, n, lo, hi, gamma);
        plan.items.push_back({want(r.stream, lo), want(r.stream, hi), gamma, r.is_median, false});
    }
    return plan;
}

std::vector<double> combine_ranks(const RankPlan& plan, const std::vector<std::uint64_t>& keys, bool f32) {
    std::vector<double> out(plan.items.size(), std::numeric_limits<double>::quiet_NaN());
    for (std::size_t r = 0; r < plan.items.size(); ++r) {
        const RankPlan::Item& p = plan.items[r];
        if (p.skip) continue;
        const double lo = key_value(keys[p.lo], f32);
        const double hi = key_value(keys[p.hi], f32);
        if (p.median) out[r] = p.lo == p.hi ? lo : (lo + hi) / 2.0;  // NumPy: mean of the middle one or two
        else out[r] = lerp_numpy(lo, hi, p.gamma);  // even when lo == hi: inf - inf gives NaN there too
    }
    return out;
}

std::vector<double> combine_ranks_nan_free(const RankPlan& plan, const std::vector<std::uint64_t>& keys, bool f32,
                                           const std::vector<OrderRequest>& requests,
                                           const std::array<bool, 4>& has_nan) {
    std::vector<double> out = combine_ranks(plan, keys, f32);
    for (std::size_t r = 0; r < requests.size(); ++r)
        if (has_nan[requests[r].stream]) out[r] = std::numeric_limits<double>::quiet_NaN();
    return out;
}

std::vector<std::uint64_t> radix_select(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                                        const std::vector<RankTarget>& wanted, int threads) {
    const std::uint64_t n = a.size;
    const int key_bits = cfg.f32 ? 32 : 64;
    std::vector<Target> targets;
    for (const auto& w : wanted) {
        Target t;
        t.stream = w.stream;
        t.rank = w.rank;
        t.rank_in = w.rank;
        t.count = n;
        targets.push_back(t);
    }
    const int nthreads = resolve_threads(threads, n);
    // Each pass finishes a target or adds 16 known bits to it (descend), so key_bits / 16 + 1
    // passes finish every target; the bound holds whatever the data does between passes.
    for (int pass = 0; pass <= key_bits / kDigitBits + 1; ++pass) {
        std::vector<Group> groups;
        std::vector<int> group_of(targets.size(), -1);
        for (std::size_t i = 0; i < targets.size(); ++i) {
            Target& t = targets[i];
            if (t.done) continue;
            if (t.bits >= key_bits) {  // every key bit known
                t.key = t.prefix << (64 - t.bits);
                t.done = true;
                continue;
            }
            int g = -1;
            for (std::size_t j = 0; j < groups.size(); ++j)
                if (groups[j].stream == t.stream && groups[j].prefix == t.prefix && groups[j].bits == t.bits)
                    g = static_cast<int>(j);
            if (g < 0) {
                // A small enough input is gathered whole (select_ranks finishes it in memory).
                const bool gather = t.bits > 0 ? t.count <= kGatherCap : n <= kGatherCap;
                groups.push_back({t.stream, t.prefix, t.bits, gather});
                g = static_cast<int>(groups.size()) - 1;
            }
            group_of[i] = g;
        }
        if (groups.empty()) break;

        const std::size_t ng = groups.size();
        // Per stream, groups are found from the key's top 16 bits through a table; deeper
        // prefixes (float64 keys) are confirmed on a hit, which only candidates reach.
        std::array<std::vector<std::int32_t>, 4> first16;
        std::vector<std::int32_t> next_same16(ng, -1);
        std::array<std::vector<std::int32_t>, 4> everything;  // groups with no prefix yet
        for (std::size_t g = ng; g-- > 0;) {
            const Group& grp = groups[g];
            if (grp.bits == 0) {
                everything[grp.stream].push_back(static_cast<std::int32_t>(g));
                continue;
            }
            auto& table = first16[grp.stream];
            if (table.empty()) table.assign(kBins, -1);
            const std::size_t top = static_cast<std::size_t>(grp.prefix >> (grp.bits - kDigitBits));
            next_same16[g] = table[top];
            table[top] = static_cast<std::int32_t>(g);
        }
        auto states = run_partitions<PassState>(n, nthreads, kBlock,
                                                [&](PassState& st, std::size_t begin, std::size_t end) {
            st.hist.resize(ng);
            st.keys.resize(ng);
            for (std::size_t g = 0; g < ng; ++g) {
                if (!groups[g].gather) st.hist[g].assign(kBins, 0);
                else if (groups[g].bits == 0) st.keys[g].reserve(end - begin);  // every key of the partition
            }
            auto blk = new_block();
            std::vector<std::uint64_t> keys(kBlock);
            auto take = [&](std::size_t g, std::uint64_t key) {
                const Group& grp = groups[g];
                if (grp.gather) st.keys[g].push_back(key);
                else ++st.hist[g][(key >> (64 - grp.bits - kDigitBits)) & (kBins - 1)];
            };
            for (std::size_t s = begin; s < end; s += kBlock) {
                const std::size_t m = std::min(kBlock, end - s);
                compute_block(cfg, a, b, s, m, *blk);
                for (int k = 0; k < 4; ++k) {
                    if (first16[k].empty() && everything[k].empty()) continue;
                    const double* v = blk->v[k];
                    for (std::size_t i = 0; i < m; ++i) keys[i] = order_key(v[i], cfg.f32);
                    for (std::int32_t g : everything[k])
                        for (std::size_t i = 0; i < m; ++i) take(static_cast<std::size_t>(g), keys[i]);
                    if (first16[k].empty()) continue;
                    const std::int32_t* table = first16[k].data();
                    for (std::size_t i = 0; i < m; ++i) {
                        const std::uint64_t key = keys[i];
                        for (std::int32_t g = table[key >> 48]; g >= 0; g = next_same16[static_cast<std::size_t>(g)]) {
                            const Group& grp = groups[static_cast<std::size_t>(g)];
                            if ((key >> (64 - grp.bits)) == grp.prefix) take(static_cast<std::size_t>(g), key);
                        }
                    }
                }
            }
        });

        for (std::size_t g = 0; g < ng; ++g) {
            if (groups[g].gather) {
                std::vector<std::uint64_t> keys;
                if (states.size() == 1) keys = std::move(states[0].keys[g]);
                else
                    for (auto& st : states) keys.insert(keys.end(), st.keys[g].begin(), st.keys[g].end());
                std::vector<std::size_t> members;
                std::vector<std::uint64_t> ranks;
                for (std::size_t i = 0; i < targets.size(); ++i)
                    if (group_of[i] == static_cast<int>(g)) {
                        members.push_back(i);
                        ranks.push_back(targets[i].rank_in);  // (clamped to the keys gathered)
                    }
                const std::vector<std::uint64_t> found = select_ranks(keys.data(), keys.size(), ranks);
                for (std::size_t j = 0; j < members.size(); ++j) {
                    Target& t = targets[members[j]];
                    t.done = true;
                    // no keys: the inputs changed since the rank's prefix was found
                    t.key = keys.empty() ? prefix_key(t) : found[j];
                }
            } else {
                std::vector<std::uint64_t> hist(kBins, 0);
                for (auto& st : states)
                    for (std::size_t k = 0; k < kBins; ++k) hist[k] += st.hist[g][k];
                for (std::size_t i = 0; i < targets.size(); ++i)
                    if (group_of[i] == static_cast<int>(g)) descend(targets[i], hist.data());
            }
        }
    }

    std::vector<std::uint64_t> keys;
    for (const auto& t : targets) keys.push_back(t.done ? t.key : prefix_key(t));
    return keys;
}

std::vector<double> order_statistics(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                                     const std::vector<OrderRequest>& requests,
                                     const std::array<std::uint64_t, 4>& nan_counts, int threads) {
    const RankPlan plan = plan_ranks(requests, a.size, nan_counts);
    return combine_ranks(plan, radix_select(cfg, a, b, plan.targets, threads), cfg.f32);
}

}  // namespace poly
