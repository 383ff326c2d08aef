#include "kernel.hpp"

#include <cmath>

namespace poly {
namespace {

bool is_float_narrow(DType t) { return t == DType::F16 || t == DType::BF16 || t == DType::F32; }

template <bool F32, bool XOR, bool INF_EQ>
void diff_loop(const CompareConfig& cfg, std::size_t m, Block& blk) {
    const double* a = blk.v[kA];
    const double* b = blk.v[kB];
    double* ad = blk.v[kAbs];
    double* rd = blk.v[kRel];
    const double eps = cfg.eps;
    for (std::size_t i = 0; i < m; ++i) {
        const double x = a[i], y = b[i];
        double d;
        if constexpr (XOR) {
            d = ((x != 0) != (y != 0)) ? 1.0 : 0.0;
        } else {
            // x and y hold float32 values exactly when F32; rounding the double difference
            // (and quotient) to float gives the correctly rounded float32 result, since
            // double has more than 2*24+2 bits.
            d = x - y;
            if constexpr (F32) d = static_cast<double>(static_cast<float>(d));
            d = std::fabs(d);
        }
        if constexpr (INF_EQ) {
            if (std::isinf(x) && x == y) d = 0.0;
        }
        const double den = (y == 0) ? eps : std::fabs(y);
        double r = d / den;
        if constexpr (F32) r = static_cast<double>(static_cast<float>(r));
        ad[i] = d;
        rd[i] = r;
    }
}

template <bool F32, bool XOR>
void diff_dispatch_inf(const CompareConfig& cfg, std::size_t m, Block& blk) {
    if (cfg.inf_equal) diff_loop<F32, XOR, true>(cfg, m, blk);
    else diff_loop<F32, XOR, false>(cfg, m, blk);
}

}  // namespace

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
    load_block(a, start, m, blk.v[kA]);
    load_block(b, start, m, blk.v[kB]);
    if (cfg.xor_mode) diff_dispatch_inf<false, true>(cfg, m, blk);
    else if (cfg.f32) diff_dispatch_inf<true, false>(cfg, m, blk);
    else diff_dispatch_inf<false, false>(cfg, m, blk);
}

}  // namespace poly
