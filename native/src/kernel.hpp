// The elementwise part of a comparison: loads a block of both inputs and derives |a-b| and
// the relative difference with the rounding of the compute precision.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "dtype.hpp"

namespace poly {

constexpr std::size_t kBlock = 1024;

// Streams a comparison produces, in the order of Block's buffers.
enum Stream : int { kA = 0, kB = 1, kAbs = 2, kRel = 3 };

// How |a - b| is formed for a pair of integer inputs where double arithmetic would differ
// from Polygraphy's: NumPy subtracts (and takes abs) in the promoted integer type of the
// inputs after Polygraphy widens int8/uint8/int16/uint16 to int32 and uint32 to int64, so
// the difference wraps around, |INT_MIN| stays negative and values above 2^53 stay exact.
enum class IntDiff : int {
    None = 0,  // through doubles (exact for these inputs, or a float is involved)
    I32,       // int32 arithmetic: an int32 input with bool/int8..int32/uint8/uint16
    I64,       // int64 arithmetic: an int64 input with bool/int8..int64/uint8..uint32
    U64,       // uint64 arithmetic: uint64 with uint64 or bool
};

struct CompareConfig {
    bool f32 = true;        // differences and ratios rounded to float32 (float16/bfloat16/float32 inputs)
    bool xor_mode = false;  // both inputs bool: absdiff = a xor b
    bool inf_equal = false; // equal infinities give absdiff 0
    IntDiff int_diff = IntDiff::None;
    // b is int32 or int64: its absolute value is taken in that type, so the divisor of the
    // relative difference is negative at INT32_MIN / INT64_MIN (as NumPy's abs wraps).
    bool den_wrap = false;
    std::uint64_t den_min_bits = 0;  // the two's-complement bits of b's minimum (den_wrap)
    double atol = 1e-5;     // tolerances, already rounded to the compute precision
    double rtol = 1e-5;
    double eps = 2.220446049250313e-16;  // replaces exact zeros of b in the relative difference

    // Picks the compute precision from the two input dtypes (SPEC 2.1).
    static CompareConfig make(DType a, DType b, double atol, double rtol, bool inf_equal);
    // Integer inputs must be read as integers too (Block::bits), not only as doubles.
    bool needs_bits() const { return int_diff != IntDiff::None || den_wrap; }
};

struct Block {
    alignas(64) double v[4][kBlock];
    // Integer inputs as 64-bit two's complement (sign- or zero-extended), filled only when
    // CompareConfig::needs_bits(): a in bits[0], b in bits[1].
    alignas(64) std::uint64_t bits[2][kBlock];
};

// A Block left uninitialised (every buffer is written before it is read).
inline std::unique_ptr<Block> new_block() { return std::unique_ptr<Block>(new Block); }

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
