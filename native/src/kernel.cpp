#include "kernel.hpp"

#include <cstdlib>
#include <cstring>

#include "kernels.hpp"

namespace poly {
namespace {

// x rounded to float32. Not inlined: GCC 12 with LTO dropped this rounding from an inlined
// copy in CompareConfig::make (tolerances then compared unrounded, see the tolerance
// boundary tests of tests/compare/test_error_stats.py).
__attribute__((noinline)) double in_float32(double x) { return static_cast<double>(static_cast<float>(x)); }

bool is_float_narrow(DType t) { return t == DType::F16 || t == DType::BF16 || t == DType::F32; }

bool is_integer(DType t) { return t != DType::F16 && t != DType::BF16 && t != DType::F32 && t != DType::F64; }

// The integer type Polygraphy subtracts two integer (or bool) inputs in: it widens
// int8/uint8/int16/uint16 to int32 and uint32 to int64, then NumPy promotes. None where a
// float is involved, where the promotion is to float64 (signed with uint64) or where double
// arithmetic is exact anyway (no int32/int64/uint64 input: differences below 2^33).
IntDiff integer_difference(DType a, DType b) {
    if (!is_integer(a) || !is_integer(b)) return IntDiff::None;
    const bool wide_a = a == DType::I32 || a == DType::I64 || a == DType::U64;
    const bool wide_b = b == DType::I32 || b == DType::I64 || b == DType::U64;
    if (!wide_a && !wide_b) return IntDiff::None;
    const bool u64_a = a == DType::U64, u64_b = b == DType::U64;
    if (u64_a || u64_b) {
        // uint64 with uint64 or bool stays uint64; with a signed type NumPy goes to float64
        const DType other = u64_a ? b : a;
        return other == DType::U64 || other == DType::Bool ? IntDiff::U64 : IntDiff::None;
    }
    const bool i64 = a == DType::I64 || a == DType::U32 || b == DType::I64 || b == DType::U32;
    return i64 ? IntDiff::I64 : IntDiff::I32;
}

const KernelTable& pick_kernels() {
    // POLY_NATIVE_ARCH=generic forces the portable kernels, =avx2 goes no further than AVX2
    // (tests compare them all on one machine).
    const char* forced = std::getenv("POLY_NATIVE_ARCH");
    const bool generic = forced != nullptr && std::strcmp(forced, "generic") == 0;
    const bool at_most_avx2 = generic || (forced != nullptr && std::strcmp(forced, "avx2") == 0);
#if (defined(__x86_64__) || defined(_M_X64)) && !defined(POLY_PORTABLE_ONLY)
    // (__builtin_cpu_supports also checks that the OS saves the AVX and AVX-512 registers)
#ifndef POLY_NO_AVX512
    if (!at_most_avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
        return arch_avx512::table();
#endif
    if (!generic && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return arch_avx2::table();
#endif
    (void)generic;
    (void)at_most_avx2;
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
    // any integer input give float64 statistics (integer pairs are subtracted as integers
    // first where NumPy would, see IntDiff).
    const bool narrow_a = is_float_narrow(a) || a == DType::Bool;
    const bool narrow_b = is_float_narrow(b) || b == DType::Bool;
    c.f32 = !c.xor_mode && narrow_a && narrow_b;
    c.inf_equal = inf_equal;
    // NumPy compares a float32 array with a Python float in float32.
    c.atol = c.f32 ? in_float32(atol) : atol;
    c.rtol = c.f32 ? in_float32(rtol) : rtol;
    c.eps = c.f32 ? in_float32(c.eps) : c.eps;
    c.int_diff = integer_difference(a, b);
    c.den_wrap = b == DType::I32 || b == DType::I64;
    c.den_min_bits = b == DType::I32 ? 0xFFFFFFFF80000000ull : 0x8000000000000000ull;
    return c;
}

void compute_block(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b, std::size_t start,
                   std::size_t m, Block& blk) {
    const KernelTable& k = kernels();
    k.load_block(a, start, m, blk.v[kA]);
    k.load_block(b, start, m, blk.v[kB]);
    if (cfg.needs_bits()) {
        if (is_integer(a.dtype)) k.load_bits(a, start, m, blk.bits[0]);
        if (is_integer(b.dtype)) k.load_bits(b, start, m, blk.bits[1]);
    }
    k.diff_block(cfg, m, blk);
}

}  // namespace poly
