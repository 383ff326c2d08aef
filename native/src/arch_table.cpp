// (Compiled once per instruction set.) The table of this instruction set's kernels.
#include "kernels.hpp"

namespace poly {
namespace POLY_ARCH {

void load_block(const ArrayView& v, std::size_t start, std::size_t count, double* out);
void diff_block(const CompareConfig& cfg, std::size_t m, Block& blk);
void block_stats(const Block& blk, std::size_t m, double atol, double rtol, BlockStats& out);

#define POLY_STR2(x) #x
#define POLY_STR(x) POLY_STR2(x)

const KernelTable& table() {
    static const KernelTable t{POLY_STR(POLY_ARCH), &load_block, &diff_block, &block_stats};
    return t;
}

}  // namespace POLY_ARCH
}  // namespace poly
