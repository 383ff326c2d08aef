// The elementwise part of a comparison: loads a block of both inputs and derives |a-b| and
// the relative difference with the rounding of the compute precision.
#pragma once
#include <cstddef>
#include <cstdint>

#include "dtype.hpp"

namespace poly {

constexpr std::size_t kBlock = 1024;

// Streams a comparison produces, in the order of Block's buffers.
enum Stream : int { kA = 0, kB = 1, kAbs = 2, kRel = 3 };

struct CompareConfig {
    bool f32 = true;        // differences and ratios rounded to float32 (float16/bfloat16/float32 inputs)
    bool xor_mode = false;  // both inputs bool: absdiff = a xor b
    bool inf_equal = false; // equal infinities give absdiff 0
    double atol = 1e-5;     // tolerances, already rounded to the compute precision
    double rtol = 1e-5;
    double eps = 2.220446049250313e-16;  // replaces exact zeros of b in the relative difference

    // Picks the compute precision from the two input dtypes (SPEC 2.1).
    static CompareConfig make(DType a, DType b, double atol, double rtol, bool inf_equal);
};

struct Block {
    alignas(64) double v[4][kBlock];
};

// Fills block.v[kA], v[kB], v[kAbs], v[kRel] for flat elements [start, start + m).
void compute_block(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b, std::size_t start,
                   std::size_t m, Block& block);

// Order-preserving 64-bit key of a value of the compute precision (float32 keys occupy the
// high 32 bits), and its inverse.
inline std::uint64_t order_key(double v, bool f32) {
    if (f32) {
        float f = static_cast<float>(v);
        std::uint32_t u;
        __builtin_memcpy(&u, &f, 4);
        u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
        return static_cast<std::uint64_t>(u) << 32;
    }
    std::uint64_t u;
    __builtin_memcpy(&u, &v, 8);
    return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}

inline double key_value(std::uint64_t key, bool f32) {
    if (f32) {
        std::uint32_t u = static_cast<std::uint32_t>(key >> 32);
        u = (u & 0x80000000u) ? (u & 0x7FFFFFFFu) : ~u;
        float f;
        __builtin_memcpy(&f, &u, 4);
        return f;
    }
    std::uint64_t u = (key & 0x8000000000000000ull) ? (key & 0x7FFFFFFFFFFFFFFFull) : ~key;
    double d;
    __builtin_memcpy(&d, &u, 8);
    return d;
}

}  // namespace poly
