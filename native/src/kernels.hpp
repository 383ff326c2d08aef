// The per-block hot loops, compiled once per instruction set (generic x86-64/other, AVX2, AVX-512)
// and picked at run time, so one wheel is fast on new CPUs and still runs on old ones.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "dtype.hpp"
#include "kernel.hpp"

namespace poly {

// Statistics of one stream over one block. Sums are taken around `shift` (the block's first
// element) so that the block variance (s2 - s1^2/m)/m does not cancel catastrophically.
struct StreamBlock {
    double shift = 0, s1 = 0, s2 = 0, sum_sq = 0, sum_abs = 0;
    double mn = 0, mx = 0;  // over non-NaN elements (meaningless when valid == 0)
    std::uint64_t nan = 0, inf = 0, valid = 0;
    double m2 = 0;          // sum of squared deviations from the block mean; NaN with NaN/Inf
    double sum = 0;         // plain sum (NaN/Inf propagate as in NumPy)
    double mean = 0;        // block mean; finite for finite values even when `sum` overflows
};

struct BlockStats {
    StreamBlock s[4];
    double dot = 0;
    std::uint64_t fails = 0;
};

// Rank windows of the one-pass kernels (fused_pass.cpp): per stream (0: absdiff, 1: reldiff)
// up to kMaxWindows disjoint, ascending ranges of bit patterns of the compute type (float32
// bits read as int32, float64 bits as int64), the order of non-negative floats (both streams
// are >= +0 or NaN, and a stream holding NaN has NaN order statistics anyway).
constexpr int kMaxWindows = 8;
struct WindowSet {
    int count[2] = {0, 0};
    std::int64_t lo_minus1[2][kMaxWindows] = {};  // a window holds bits in (lo_minus1, hi]
    std::int64_t hi[2][kMaxWindows] = {};
};
// The gathered bits of an element of type T (float: 32, double: 64).
template <typename T>
using WindowKey = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
// What the kernel tallies for a WindowSet: per window the elements above lo_minus1, and the
// bits of the elements inside any window, appended at dst[s] + used[s] (room for
// tally_room(m) keys for a block of m elements).
template <typename K>
struct WindowTallyOf {
    std::uint64_t at_or_above[2][kMaxWindows] = {};
    K* dst[2] = {nullptr, nullptr};
    std::size_t used[2] = {0, 0};
};
// The keys a block of m elements may write at dst[s] + used[s]: a partial block is tallied
// padded to whole vectors of the widest lanes (64 bytes: up to 15 float32 elements more), and
// every compaction stores a whole 32-byte vector at the cursor, which never passes the padded
// length (fused_pass.cpp checks the widest lanes against it).
constexpr std::size_t tally_room(std::size_t m) { return (m + 15) / 16 * 16; }
using WindowTally32 = WindowTallyOf<std::uint32_t>;
using WindowTally64 = WindowTallyOf<std::uint64_t>;

// After the pass, the keys gathered on a stream of a WindowSet (read as the signed bits of
// the compute type) are binned by window and by the top kSubBinBits bits of their offset in
// it: kSubBins bins per window, the bin of offset o in window j being
// j * kSubBins + (o >> sub_bin_shift(j)), so each wanted rank falls in one small bin.
constexpr int kSubBinBits = 12;
constexpr std::size_t kSubBins = std::size_t{1} << kSubBinBits;
inline int sub_bin_shift(const WindowSet& w, int s, int j) {
    const std::uint64_t span = static_cast<std::uint64_t>(w.hi[s][j]) - static_cast<std::uint64_t>(w.lo_minus1[s][j]);
    int bits = 0;  // bits of the largest offset, span - 1
    while (bits < 64 && (span - 1) >> bits) ++bits;
    return bits > kSubBinBits ? bits - kSubBinBits : 0;
}
// Up to kMaxRanges disjoint ranges of signed bits: range r holds first[r] to first[r] + span[r].
constexpr int kMaxRanges = 16;
struct KeyRanges {
    int count = 0;
    std::int64_t first[kMaxRanges] = {};
    std::uint64_t span[kMaxRanges] = {};  // the range's keys less one
};

// Per-thread buffers of the one-pass kernel for one block: the differences, and the inputs
// padded to a whole number of vectors for a partial block.
template <typename T>
struct FusedScratchOf {
    alignas(64) T a[kBlock];
    alignas(64) T b[kBlock];
    alignas(64) T ad[kBlock];
    alignas(64) T rd[kBlock];
};

struct KernelTable {
    const char* name;
    void (*load_block)(const ArrayView& v, std::size_t start, std::size_t count, double* out);
    // Integer (and bool) elements as 64-bit two's complement: sign-extended from signed types,
    // zero-extended from unsigned ones.
    void (*load_bits)(const ArrayView& v, std::size_t start, std::size_t count, std::uint64_t* out);
    void (*diff_block)(const CompareConfig& cfg, std::size_t m, Block& blk);
    void (*block_stats)(const Block& blk, std::size_t m, double atol, double rtol, BlockStats& out);
    // Fast path for two contiguous, 4-byte aligned float32 inputs: differences straight from
    // the inputs into float32 buffers, statistics read in float32 and widened in registers.
    void (*diff_f32)(const CompareConfig& cfg, const float* a, const float* b, std::size_t m, float* ad, float* rd);
    void (*block_stats_f32)(const float* a, const float* b, const float* ad, const float* rd, std::size_t m,
                            double atol, double rtol, BlockStats& out);
    // One pass over two contiguous float32 inputs: differences, statistics and the
    // rank-window tallies (w may be null) in registers. False when the block's sums are not
    // finite (NaN, Inf, overflow) or the block is partial: `out` is then incomplete and the
    // caller redoes the block with diff_f32 + block_stats_f32 (the tallies are complete
    // either way).
    bool (*fused_f32)(const CompareConfig& cfg, const float* a, const float* b, std::size_t m, const WindowSet* w,
                      WindowTally32* t, BlockStats& out, FusedScratchOf<float>& scratch);
    // The same for float64 compute (float64 differences of inputs loaded as double), redone
    // with diff_f64 + block_stats_f64 when it returns false.
    void (*diff_f64)(const CompareConfig& cfg, const double* a, const double* b, std::size_t m, double* ad,
                     double* rd);
    void (*block_stats_f64)(const double* a, const double* b, const double* ad, const double* rd, std::size_t m,
                            double atol, double rtol, BlockStats& out);
    bool (*fused_f64)(const CompareConfig& cfg, const double* a, const double* b, std::size_t m, const WindowSet* w,
                      WindowTally64* t, BlockStats& out, FusedScratchOf<double>& scratch);
    // The m keys gathered at g on stream s of w (float32 compute: 32-bit keys, float64: 64):
    // each is counted in hist (w.count[s] * kSubBins entries). True when some key lies outside
    // every window, which only inputs changed during the pass can cause; it is then counted in
    // a bin of its nearest window, so every write stays in bounds.
    bool (*count_window_keys32)(const std::int32_t* g, std::size_t m, const WindowSet& w, int s, std::uint32_t* hist);
    bool (*count_window_keys64)(const std::int64_t* g, std::size_t m, const WindowSet& w, int s, std::uint32_t* hist);
    // Appends the keys at g lying in one of the ranges to out, which has room for cap keys and
    // a vector more; returns how many, or cap + 1 as soon as more than cap are found.
    std::size_t (*pick_window_keys32)(const std::int32_t* g, std::size_t m, const KeyRanges& r, std::int32_t* out,
                                      std::size_t cap);
    std::size_t (*pick_window_keys64)(const std::int64_t* g, std::size_t m, const KeyRanges& r, std::int64_t* out,
                                      std::size_t cap);
};

namespace arch_generic { const KernelTable& table(); }
#if defined(__x86_64__) || defined(_M_X64)
namespace arch_avx2 { const KernelTable& table(); }
namespace arch_avx512 { const KernelTable& table(); }
#endif

// The best table for this CPU (chosen once).
const KernelTable& kernels();

}  // namespace poly
