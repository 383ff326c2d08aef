#include "kernel.hpp"

#include <cstdlib>
#include <cstring>

#include "kernels.hpp"

namespace poly {
namespace {

bool is_float_narrow(DType t) { return t == DType::F16 || t == DType::BF16 || t == DType::F32; }

const KernelTable& pick_kernels() {
    // POLY_NATIVE_ARCH=generic forces the portable kernels (tests compare both).
    const char* forced = std::getenv("POLY_NATIVE_ARCH");
    const bool generic = forced != nullptr && std::strcmp(forced, "generic") == 0;
#if defined(__x86_64__) || defined(_M_X64)
    if (!generic && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return arch_avx2::table();
#endif
    (void)generic;
    return arch_generic::table();
}

}  // namespace

const KernelTable& kernels() {
    static const KernelTable& t = pick_kernels();
    return t;
}

CompareConfig CompareConfig::make(DType a, DType b, double atol, double rtol, bool inf_equal) {
    CompareConfig c;
    c.xor_mode = (a == DType::Bool && b == DType::Bool);
    // float16/bfloat16/float32 (and bool beside one of them) compare in float32; float64 and
    // any integer input compare in float64, so integer differences cannot overflow.
    const bool narrow_a = is_float_narrow(a) || a == DType::Bool;
    const bool narrow_b = is_float_narrow(b) || b == DType::Bool;
    c.f32 = !c.xor_mode && narrow_a && narrow_b;
    c.inf_equal = inf_equal;
    if (c.f32) {
        // NumPy compares a float32 array with a Python float in float32.
        c.atol = static_cast<float>(atol);
        c.rtol = static_cast<float>(rtol);
        c.eps = static_cast<float>(2.220446049250313e-16);
    } else {
        c.atol = atol;
        c.rtol = rtol;
    }
    return c;
}

void compute_block(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b, std::size_t start,
                   std::size_t m, Block& blk) {
    const KernelTable& k = kernels();
    k.load_block(a, start, m, blk.v[kA]);
    k.load_block(b, start, m, blk.v[kB]);
    k.diff_block(cfg, m, blk);
}

}  // namespace poly
