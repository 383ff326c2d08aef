// (Compiled once per instruction set, see kernels.hpp; strict IEEE semantics.)
// Elementwise |a - b| and |a - b| / |b'| with the rounding of the compute precision, and for
// integer pairs the wrap-around of the integer type NumPy subtracts them in (kernel.hpp).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels.hpp"

namespace poly {
namespace POLY_ARCH {
namespace {

// |b| as the divisor of the relative difference: fabs, except that an int32/int64 b keeps
// INT_MIN (negative) because NumPy's integer abs wraps there.
template <bool DEN_WRAP>
inline double divisor(const CompareConfig& cfg, double y, std::uint64_t y_bits) {
    if constexpr (DEN_WRAP) {
        if (y_bits == cfg.den_min_bits) return y;
    }
    (void)cfg;
    (void)y_bits;
    return std::fabs(y);
}

template <bool F32, bool XOR, bool INF_EQ, bool DEN_WRAP>
void diff_loop(const CompareConfig& cfg, std::size_t m, Block& blk) {
    const double* a = blk.v[kA];
    const double* b = blk.v[kB];
    const std::uint64_t* b_bits = blk.bits[1];
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
            const double den = (y == 0.0) ? eps : divisor<DEN_WRAP>(cfg, y, DEN_WRAP ? b_bits[i] : 0);
            ad[i] = d;
            rd[i] = d / den;
        }
    }
}

// |a - b| in the integer type T (two's complement wrap-around, abs(INT_MIN) == INT_MIN for
// signed T), as a double: what NumPy's subtract and abs give on Polygraphy's widened inputs.
template <typename T>
inline double integer_absdiff(std::uint64_t x, std::uint64_t y) {
    using U = std::make_unsigned_t<T>;
    const U wrapped = static_cast<U>(static_cast<U>(x) - static_cast<U>(y));
    if constexpr (std::is_signed_v<T>) {
        T s;
        std::memcpy(&s, &wrapped, sizeof(T));  // the same bits, read as signed
        const std::int64_t d = s;
        if (d == static_cast<std::int64_t>(std::numeric_limits<T>::min())) return static_cast<double>(d);
        return static_cast<double>(d < 0 ? -d : d);
    } else {
        return static_cast<double>(wrapped);
    }
}

template <typename T, bool DEN_WRAP>
void int_diff_loop(const CompareConfig& cfg, std::size_t m, Block& blk) {
    const std::uint64_t* xa = blk.bits[0];
    const std::uint64_t* xb = blk.bits[1];
    const double* b = blk.v[kB];
    double* ad = blk.v[kAbs];
    double* rd = blk.v[kRel];
    const double eps = cfg.eps;
    for (std::size_t i = 0; i < m; ++i) {
        const double d = integer_absdiff<T>(xa[i], xb[i]);
        const double y = b[i];
        const double den = (y == 0.0) ? eps : divisor<DEN_WRAP>(cfg, y, xb[i]);
        ad[i] = d;
        rd[i] = d / den;
    }
}

template <typename T>
void with_den_mode_int(const CompareConfig& cfg, std::size_t m, Block& blk) {
    if (cfg.den_wrap) int_diff_loop<T, true>(cfg, m, blk);
    else int_diff_loop<T, false>(cfg, m, blk);
}

template <bool F32, bool XOR, bool INF_EQ>
void with_den_mode(const CompareConfig& cfg, std::size_t m, Block& blk) {
    if constexpr (!F32 && !XOR) {
        if (cfg.den_wrap) return diff_loop<F32, XOR, INF_EQ, true>(cfg, m, blk);
    }
    diff_loop<F32, XOR, INF_EQ, false>(cfg, m, blk);
}

template <bool F32, bool XOR>
void with_inf_mode(const CompareConfig& cfg, std::size_t m, Block& blk) {
    if (cfg.inf_equal) with_den_mode<F32, XOR, true>(cfg, m, blk);
    else with_den_mode<F32, XOR, false>(cfg, m, blk);
}

// Two inputs of the compute type T (float32, or float64 from any dtype but integer pairs):
// NumPy's arithmetic in T, element for element.
template <typename T, bool INF_EQ>
void diff_pair_loop(const CompareConfig& cfg, const T* a, const T* b, std::size_t m, T* ad, T* rd) {
    const T eps = static_cast<T>(cfg.eps);
    for (std::size_t i = 0; i < m; ++i) {
        const T x = a[i], y = b[i];
        T d = std::fabs(x - y);
        if constexpr (INF_EQ) d = (std::isinf(x) && x == y) ? T{0} : d;
        const T den = (y == T{0}) ? eps : std::fabs(y);
        ad[i] = d;
        rd[i] = d / den;
    }
}

template <typename T>
void diff_pair(const CompareConfig& cfg, const T* a, const T* b, std::size_t m, T* ad, T* rd) {
    if (cfg.inf_equal) diff_pair_loop<T, true>(cfg, a, b, m, ad, rd);
    else diff_pair_loop<T, false>(cfg, a, b, m, ad, rd);
}

}  // namespace

void diff_f32(const CompareConfig& cfg, const float* a, const float* b, std::size_t m, float* ad, float* rd) {
    diff_pair(cfg, a, b, m, ad, rd);
}

void diff_f64(const CompareConfig& cfg, const double* a, const double* b, std::size_t m, double* ad, double* rd) {
    diff_pair(cfg, a, b, m, ad, rd);
}

void diff_block(const CompareConfig& cfg, std::size_t m, Block& blk) {
    switch (cfg.int_diff) {
        case IntDiff::I32: return with_den_mode_int<std::int32_t>(cfg, m, blk);
        case IntDiff::I64: return with_den_mode_int<std::int64_t>(cfg, m, blk);
        case IntDiff::U64: return with_den_mode_int<std::uint64_t>(cfg, m, blk);
        case IntDiff::None: break;
    }
    if (cfg.xor_mode) with_inf_mode<false, true>(cfg, m, blk);
    else if (cfg.f32) with_inf_mode<true, false>(cfg, m, blk);
    else with_inf_mode<false, false>(cfg, m, blk);
}

}  // namespace POLY_ARCH
}  // namespace poly
