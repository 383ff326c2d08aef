// (Compiled once per instruction set.) The table of this instruction set's kernels.
#include "kernels.hpp"

namespace poly {
namespace POLY_ARCH {

void load_block(const ArrayView& v, std::size_t start, std::size_t count, double* out);
void load_bits(const ArrayView& v, std::size_t start, std::size_t count, std::uint64_t* out);
void diff_block(const CompareConfig& cfg, std::size_t m, Block& blk);
void block_stats(const Block& blk, std::size_t m, double atol, double rtol, BlockStats& out);
void diff_f32(const CompareConfig& cfg, const float* a, const float* b, std::size_t m, float* ad, float* rd);
void block_stats_f32(const float* a, const float* b, const float* ad, const float* rd, std::size_t m,
                     double atol, double rtol, BlockStats& out);
bool fused_f32(const CompareConfig& cfg, const float* a, const float* b, std::size_t m, const WindowSet* w,
               WindowTally32* t, BlockStats& out, FusedScratchOf<float>& scratch);
void diff_f64(const CompareConfig& cfg, const double* a, const double* b, std::size_t m, double* ad, double* rd);
void block_stats_f64(const double* a, const double* b, const double* ad, const double* rd, std::size_t m,
                     double atol, double rtol, BlockStats& out);
bool fused_f64(const CompareConfig& cfg, const double* a, const double* b, std::size_t m, const WindowSet* w,
               WindowTally64* t, BlockStats& out, FusedScratchOf<double>& scratch);
bool count_window_keys32(const std::int32_t* g, std::size_t m, const WindowSet& w, int s, std::uint32_t* hist);
bool count_window_keys64(const std::int64_t* g, std::size_t m, const WindowSet& w, int s, std::uint32_t* hist);
std::size_t pick_window_keys32(const std::int32_t* g, std::size_t m, const KeyRanges& r, std::int32_t* out,
                               std::size_t cap);
std::size_t pick_window_keys64(const std::int64_t* g, std::size_t m, const KeyRanges& r, std::int64_t* out,
                               std::size_t cap);

#define POLY_STR2(x) #x
#define POLY_STR(x) POLY_STR2(x)

const KernelTable& table() {
    static const KernelTable t{POLY_STR(POLY_ARCH), &load_block, &load_bits, &diff_block, &block_stats, &diff_f32,
                              &block_stats_f32, &fused_f32, &diff_f64, &block_stats_f64, &fused_f64,
                              &count_window_keys32, &count_window_keys64, &pick_window_keys32,
                              &pick_window_keys64};
    return t;
}

}  // namespace POLY_ARCH
}  // namespace poly
