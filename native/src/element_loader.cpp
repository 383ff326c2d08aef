// (Compiled once per instruction set, see kernels.hpp.)
// Conversion of any supported element type to double, block by block, for contiguous and
// arbitrarily strided arrays.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "kernels.hpp"

namespace poly {
namespace POLY_ARCH {
namespace {

// float16 -> float32 by table: 256 KiB, built once; faster than bit twiddling per element
// and needs no F16C instructions.
struct HalfTable {
    float v[65536];
    HalfTable() {
        for (std::uint32_t h = 0; h < 65536; ++h) {
            std::uint32_t sign = (h & 0x8000u) << 16;
            std::uint32_t exp = (h >> 10) & 0x1Fu;
            std::uint32_t man = h & 0x3FFu;
            std::uint32_t bits;
            if (exp == 0) {
                if (man == 0) {
                    bits = sign;
                } else {  // subnormal: normalise
                    int e = -1;
                    do { ++e; man <<= 1; } while ((man & 0x400u) == 0);
                    man &= 0x3FFu;
                    bits = sign | static_cast<std::uint32_t>(127 - 15 - e) << 23 | man << 13;
                }
            } else if (exp == 31) {
                bits = sign | 0x7F800000u | man << 13;
            } else {
                bits = sign | (exp + 127 - 15) << 23 | man << 13;
            }
            std::memcpy(&v[h], &bits, 4);
        }
    }
};

const HalfTable& half_table() {
    static const HalfTable table;
    return table;
}

inline double bf16_to_double(std::uint16_t h) {
    std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

template <typename T>
inline double read_as_double(const char* p) {
    T x;
    std::memcpy(&x, p, sizeof(T));
    return static_cast<double>(x);
}

template <>
inline double read_as_double<bool>(const char* p) {
    return *reinterpret_cast<const unsigned char*>(p) != 0 ? 1.0 : 0.0;
}

struct F16 {};
struct BF16 {};

template <>
inline double read_as_double<F16>(const char* p) {
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    return half_table().v[h];
}

template <>
inline double read_as_double<BF16>(const char* p) {
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    return bf16_to_double(h);
}

inline bool aligned_for(const char* p, std::size_t alignment) {
    return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

template <typename T>
void load_contiguous(const char* base, std::size_t count, double* out) {
    if constexpr (std::is_same_v<T, F16> || std::is_same_v<T, BF16>) {
        if (!aligned_for(base, alignof(std::uint16_t))) {
            for (std::size_t i = 0; i < count; ++i) out[i] = read_as_double<T>(base + 2 * i);
            return;
        }
        const std::uint16_t* src = reinterpret_cast<const std::uint16_t*>(base);
        if constexpr (std::is_same_v<T, F16>) {
            const float* table = half_table().v;
            for (std::size_t i = 0; i < count; ++i) out[i] = table[src[i]];
        } else {
            for (std::size_t i = 0; i < count; ++i) out[i] = bf16_to_double(src[i]);
        }
    } else if constexpr (std::is_same_v<T, bool>) {
        const unsigned char* src = reinterpret_cast<const unsigned char*>(base);
        for (std::size_t i = 0; i < count; ++i) out[i] = src[i] != 0 ? 1.0 : 0.0;
    } else if (aligned_for(base, alignof(T))) {
        // NumPy data is aligned for its dtype unless a view was built by hand; typed access
        // is what lets the compiler vectorise this conversion.
        const T* src = reinterpret_cast<const T*>(base);
        for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<double>(src[i]);
    } else {
        // A misaligned view (np.frombuffer with an odd offset, a field of a packed record):
        // typed pointers would be undefined behaviour there, byte copies are not.
        for (std::size_t i = 0; i < count; ++i) out[i] = read_as_double<T>(base + i * sizeof(T));
    }
}

template <typename T>
void load_strided(const ArrayView& v, std::size_t start, std::size_t count, double* out) {
    const int nd = v.ndim;
    std::int64_t idx[kMaxDims];
    std::size_t rem = start;
    for (int d = nd - 1; d >= 0; --d) {
        idx[d] = static_cast<std::int64_t>(rem % static_cast<std::size_t>(v.shape[d]));
        rem /= static_cast<std::size_t>(v.shape[d]);
    }
    const char* p = v.data;
    for (int d = 0; d < nd; ++d) p += idx[d] * v.strides[d];
    const std::int64_t inner_n = v.shape[nd - 1];
    const std::int64_t inner_s = v.strides[nd - 1];
    std::size_t done = 0;
    while (done < count) {
        std::int64_t run = inner_n - idx[nd - 1];
        if (static_cast<std::size_t>(run) > count - done) run = static_cast<std::int64_t>(count - done);
        for (std::int64_t i = 0; i < run; ++i) out[done + i] = read_as_double<T>(p + i * inner_s);
        done += static_cast<std::size_t>(run);
        p += run * inner_s;
        idx[nd - 1] += run;
        // carry into outer dimensions
        for (int d = nd - 1; d > 0 && idx[d] == v.shape[d]; --d) {
            p -= v.shape[d] * v.strides[d];
            idx[d] = 0;
            ++idx[d - 1];
            p += v.strides[d - 1];
        }
    }
}

template <typename T>
void load_typed(const ArrayView& v, std::size_t start, std::size_t count, double* out) {
    if (v.contiguous()) {
        load_contiguous<T>(v.data + start * v.itemsize, count, out);
    } else {
        load_strided<T>(v, start, count, out);
    }
}

// One integer element as 64-bit two's complement.
template <typename T>
inline std::uint64_t read_bits(const char* p) {
    if constexpr (std::is_same_v<T, bool>) {
        return *reinterpret_cast<const unsigned char*>(p) != 0 ? 1u : 0u;
    } else {
        T x;
        std::memcpy(&x, p, sizeof(T));
        if constexpr (std::is_signed_v<T>) return static_cast<std::uint64_t>(static_cast<std::int64_t>(x));
        else return static_cast<std::uint64_t>(x);
    }
}

template <typename T>
void load_bits_typed(const ArrayView& v, std::size_t start, std::size_t count, std::uint64_t* out) {
    const int nd = v.ndim;
    if (v.contiguous()) {
        const char* base = v.data + start * v.itemsize;
        if constexpr (!std::is_same_v<T, bool>) {
            if (aligned_for(base, alignof(T))) {  // typed loads vectorise the widening
                const T* src = reinterpret_cast<const T*>(base);
                for (std::size_t i = 0; i < count; ++i) {
                    if constexpr (std::is_signed_v<T>)
                        out[i] = static_cast<std::uint64_t>(static_cast<std::int64_t>(src[i]));
                    else
                        out[i] = static_cast<std::uint64_t>(src[i]);
                }
                return;
            }
        }
        for (std::size_t i = 0; i < count; ++i) out[i] = read_bits<T>(base + i * sizeof(T));
        return;
    }
    std::int64_t idx[kMaxDims];
    std::size_t rem = start;
    for (int d = nd - 1; d >= 0; --d) {
        idx[d] = static_cast<std::int64_t>(rem % static_cast<std::size_t>(v.shape[d]));
        rem /= static_cast<std::size_t>(v.shape[d]);
    }
    for (std::size_t i = 0; i < count; ++i) {
        const char* p = v.data;
        for (int d = 0; d < nd; ++d) p += idx[d] * v.strides[d];
        out[i] = read_bits<T>(p);
        for (int d = nd - 1; d >= 0; --d) {
            if (++idx[d] < v.shape[d]) break;
            idx[d] = 0;
        }
    }
}

}  // namespace

void load_bits(const ArrayView& v, std::size_t start, std::size_t count, std::uint64_t* out) {
    switch (v.dtype) {
        case DType::Bool: return load_bits_typed<bool>(v, start, count, out);
        case DType::I8: return load_bits_typed<std::int8_t>(v, start, count, out);
        case DType::I16: return load_bits_typed<std::int16_t>(v, start, count, out);
        case DType::I32: return load_bits_typed<std::int32_t>(v, start, count, out);
        case DType::I64: return load_bits_typed<std::int64_t>(v, start, count, out);
        case DType::U8: return load_bits_typed<std::uint8_t>(v, start, count, out);
        case DType::U16: return load_bits_typed<std::uint16_t>(v, start, count, out);
        case DType::U32: return load_bits_typed<std::uint32_t>(v, start, count, out);
        case DType::U64: return load_bits_typed<std::uint64_t>(v, start, count, out);
        default: break;
    }
    throw std::invalid_argument("integer bits of a floating-point array");
}

void load_block(const ArrayView& v, std::size_t start, std::size_t count, double* out) {
    switch (v.dtype) {
        case DType::Bool: return load_typed<bool>(v, start, count, out);
        case DType::I8: return load_typed<std::int8_t>(v, start, count, out);
        case DType::I16: return load_typed<std::int16_t>(v, start, count, out);
        case DType::I32: return load_typed<std::int32_t>(v, start, count, out);
        case DType::I64: return load_typed<std::int64_t>(v, start, count, out);
        case DType::U8: return load_typed<std::uint8_t>(v, start, count, out);
        case DType::U16: return load_typed<std::uint16_t>(v, start, count, out);
        case DType::U32: return load_typed<std::uint32_t>(v, start, count, out);
        case DType::U64: return load_typed<std::uint64_t>(v, start, count, out);
        case DType::F16: return load_typed<F16>(v, start, count, out);
        case DType::BF16: return load_typed<BF16>(v, start, count, out);
        case DType::F32: return load_typed<float>(v, start, count, out);
        case DType::F64: return load_typed<double>(v, start, count, out);
    }
    throw std::invalid_argument("unsupported dtype code");
}

}  // namespace POLY_ARCH
}  // namespace poly
