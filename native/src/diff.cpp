// (Compiled once per instruction set, see kernels.hpp; strict IEEE semantics.)
// Elementwise |a - b| and |a - b| / |b'| with the rounding of the compute precision.
#include <cmath>

#include "kernels.hpp"

namespace poly {
namespace POLY_ARCH {
namespace {

template <bool F32, bool XOR, bool INF_EQ>
void diff_loop(const CompareConfig& cfg, std::size_t m, Block& blk) {
    const double* a = blk.v[kA];
    const double* b = blk.v[kB];
    double* ad = blk.v[kAbs];
    double* rd = blk.v[kRel];
    if constexpr (F32) {
        // Inputs hold float16/bfloat16/float32 values, exact in float: NumPy's float32
        // arithmetic, lane for lane.
        const float eps = static_cast<float>(cfg.eps);
        for (std::size_t i = 0; i < m; ++i) {
            const float x = static_cast<float>(a[i]), y = static_cast<float>(b[i]);
            float d = std::fabs(x - y);
            if constexpr (INF_EQ) d = (std::isinf(x) && x == y) ? 0.0f : d;
            const float den = (y == 0.0f) ? eps : std::fabs(y);
            ad[i] = d;
            rd[i] = d / den;
        }
    } else {
        const double eps = cfg.eps;
        for (std::size_t i = 0; i < m; ++i) {
            const double x = a[i], y = b[i];
            double d;
            if constexpr (XOR) d = ((x != 0) != (y != 0)) ? 1.0 : 0.0;
            else d = std::fabs(x - y);
            if constexpr (INF_EQ) d = (std::isinf(x) && x == y) ? 0.0 : d;
            const double den = (y == 0.0) ? eps : std::fabs(y);
            ad[i] = d;
            rd[i] = d / den;
        }
    }
}

template <bool F32, bool XOR>
void with_inf_mode(const CompareConfig& cfg, std::size_t m, Block& blk) {
    if (cfg.inf_equal) diff_loop<F32, XOR, true>(cfg, m, blk);
    else diff_loop<F32, XOR, false>(cfg, m, blk);
}

template <bool INF_EQ>
void diff_f32_loop(const CompareConfig& cfg, const float* a, const float* b, std::size_t m, float* ad, float* rd) {
    const float eps = static_cast<float>(cfg.eps);
    for (std::size_t i = 0; i < m; ++i) {
        const float x = a[i], y = b[i];
        float d = std::fabs(x - y);
        if constexpr (INF_EQ) d = (std::isinf(x) && x == y) ? 0.0f : d;
        const float den = (y == 0.0f) ? eps : std::fabs(y);
        ad[i] = d;
        rd[i] = d / den;
    }
}

}  // namespace

void diff_f32(const CompareConfig& cfg, const float* a, const float* b, std::size_t m, float* ad, float* rd) {
    if (cfg.inf_equal) diff_f32_loop<true>(cfg, a, b, m, ad, rd);
    else diff_f32_loop<false>(cfg, a, b, m, ad, rd);
}

void diff_block(const CompareConfig& cfg, std::size_t m, Block& blk) {
    if (cfg.xor_mode) with_inf_mode<false, true>(cfg, m, blk);
    else if (cfg.f32) with_inf_mode<true, false>(cfg, m, blk);
    else with_inf_mode<false, false>(cfg, m, blk);
}

}  // namespace POLY_ARCH
}  // namespace poly
