// (Included only by sources compiled once per instruction set, see kernels.hpp: everything
// here lives in that instruction set's namespace.) 32-byte vectors of an element type T
// (float: 8 lanes, double: 4) with the integer vectors of the same lanes, and the operations
// the one-pass kernel (fused_pass.cpp, window_tally.cpp) is written in, so that one template
// serves both element types. AVX2 intrinsics where the generic form compiles badly, lane
// loops in the portable build. With AVX-512 the one-pass kernel's own loops take the 64-byte
// WideLanes below instead.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace poly {
namespace POLY_ARCH {

typedef float v8f __attribute__((vector_size(32)));
typedef std::int32_t v8i __attribute__((vector_size(32)));
typedef std::uint32_t v8u __attribute__((vector_size(32)));
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4l __attribute__((vector_size(32)));
typedef unsigned long long v4u __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));

// Per element type: the float vector V, the integer vectors I/U of its lanes (compare
// results, bit patterns), the scalar bit pattern Bits and the lane count.
template <typename T>
struct Lanes;
template <>
struct Lanes<float> {
    using V = v8f;
    using I = v8i;
    using U = v8u;
    using Bits = std::int32_t;
    static constexpr int n = 8;
};
template <>
struct Lanes<double> {
    using V = v4d;
    using I = v4l;
    using U = v4u;
    using Bits = long long;
    static constexpr int n = 4;
};

inline v8f splat(float x) { return v8f{x, x, x, x, x, x, x, x}; }
inline v4d splat(double x) { return v4d{x, x, x, x}; }
inline v8i splat(std::int32_t x) { return v8i{x, x, x, x, x, x, x, x}; }
inline v4l splat(long long x) { return v4l{x, x, x, x}; }

template <typename T>
inline typename Lanes<T>::V load(const T* p) {
    typename Lanes<T>::V v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}
template <typename T>
inline void store(T* p, typename Lanes<T>::V v) {
    std::memcpy(p, &v, sizeof(v));
}
// The lanes of x's bit patterns (x is a T vector).
template <typename T>
inline typename Lanes<T>::I bits_of(typename Lanes<T>::V x) {
    return (typename Lanes<T>::I)x;
}

template <typename T>
inline typename Lanes<T>::V vabs(typename Lanes<T>::V x) {
    using L = Lanes<T>;
    return (typename L::V)((typename L::I)x & splat(std::numeric_limits<typename L::Bits>::max()));
}
// mask ? x : y, lane by lane (mask lanes all ones or all zeros)
template <typename T>
inline typename Lanes<T>::V select(typename Lanes<T>::I mask, typename Lanes<T>::V x, typename Lanes<T>::V y) {
    using I = typename Lanes<T>::I;
    return (typename Lanes<T>::V)((mask & (I)x) | (~mask & (I)y));
}
template <typename V>
inline V vmin(V x, V m) { return x < m ? x : m; }  // keeps m where x is NaN
template <typename V>
inline V vmax(V x, V m) { return x > m ? x : m; }

template <typename V>
inline auto hmin(V v) {
    auto r = v[0];
    for (std::size_t i = 1; i < sizeof(V) / sizeof(v[0]); ++i) r = v[i] < r ? v[i] : r;
    return r;
}
template <typename V>
inline auto hmax(V v) {
    auto r = v[0];
    for (std::size_t i = 1; i < sizeof(V) / sizeof(v[0]); ++i) r = v[i] > r ? v[i] : r;
    return r;
}
// Sum of the lanes of an integer vector.
template <typename I>
inline std::int64_t hsum_int(I v) {
    std::int64_t r = 0;
    for (std::size_t i = 0; i < sizeof(I) / sizeof(v[0]); ++i) r += static_cast<std::int64_t>(v[i]);
    return r;
}
inline double hsum(v4d v) { return (v[0] + v[1]) + (v[2] + v[3]); }

// Four elements from p widened to double.
inline v4d widen4(const double* p) { return load(p); }
inline v4d widen4(const float* p) {
    v4f v;
    std::memcpy(&v, p, sizeof(v));
#if defined(__AVX2__)
    return (v4d)_mm256_cvtps_pd((__m128)v);
#else
    return __builtin_convertvector(v, v4d);
#endif
}

// x * y + z, fused where the instruction set has FMA (one rounding instead of two).
inline v4d fma4(v4d x, v4d y, v4d z) {
#if defined(__FMA__)
    return (v4d)_mm256_fmadd_pd((__m256d)x, (__m256d)y, (__m256d)z);
#else
    return x * y + z;
#endif
}
// x - c and x + y on the multiply-add units (x * 1 - c, x * 1 + y: exact, the same result):
// the float64 sums are bound by the adders, which then share the work with the FMA units.
inline v4d minus(v4d x, v4d c) {
#if defined(__FMA__)
    return (v4d)_mm256_fmsub_pd((__m256d)x, _mm256_set1_pd(1.0), (__m256d)c);
#else
    return x - c;
#endif
}
inline v4d plus(v4d x, v4d y) {
#if defined(__FMA__)
    return (v4d)_mm256_fmadd_pd((__m256d)x, _mm256_set1_pd(1.0), (__m256d)y);
#else
    return x + y;
#endif
}

#if defined(__AVX2__)
// 32-bit lane permutations that move the selected lanes to the front (AVX2 compaction), per
// mask of 8 lanes (float) or of 4 lanes of two 32-bit halves (double), built at compile time:
// a function-local static would put a guard (and a call that spills the loop's registers)
// inside the hot loops.
struct CompactTable {
    alignas(32) std::int32_t idx[256][8];
};
constexpr CompactTable make_compact_table(int lane_words) {
    CompactTable t{};
    const int lanes = 8 / lane_words;
    for (int mask = 0; mask < (1 << lanes); ++mask) {
        int k = 0;
        for (int j = 0; j < lanes; ++j)
            if (mask & (1 << j))
                for (int w = 0; w < lane_words; ++w) t.idx[mask][k++] = j * lane_words + w;
        for (; k < 8; ++k) t.idx[mask][k] = 0;
    }
    return t;
}
inline constexpr CompactTable kCompact32 = make_compact_table(1);
inline constexpr CompactTable kCompact64 = make_compact_table(2);
#endif

// Appends the lanes of `bits` selected by `in` (lanes all ones or zeros) to dst, which has
// room for a whole vector more; returns how many.
template <typename I, typename K>
inline std::size_t compact(I bits, I in, K* dst) {
    constexpr int n = static_cast<int>(sizeof(I) / sizeof(K));
#if defined(__AVX2__)
    int mask;
    const CompactTable* table;
    if constexpr (n == 8) {
        mask = _mm256_movemask_ps((__m256)in);
        table = &kCompact32;
    } else {
        mask = _mm256_movemask_pd((__m256d)in);
        table = &kCompact64;
    }
    const __m256i perm = _mm256_load_si256(reinterpret_cast<const __m256i*>(table->idx[mask]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_permutevar8x32_epi32((__m256i)bits, perm));
    return static_cast<std::size_t>(__builtin_popcount(static_cast<unsigned>(mask)));
#else
    std::size_t k = 0;
    for (int j = 0; j < n; ++j) {
        dst[k] = static_cast<K>(bits[j]);
        k += static_cast<std::size_t>(in[j] & 1);
    }
    return k;
#endif
}

// Whether any lane of an integer vector is non-zero.
template <typename I>
inline bool any_lane(I v) {
#if defined(__AVX2__)
    return !_mm256_testz_si256((__m256i)v, (__m256i)v);
#else
    bool any = false;
    for (std::size_t j = 0; j < sizeof(I) / sizeof(v[0]); ++j) any |= v[j] != 0;
    return any;
#endif
}

// table[k] per lane (k < 8; float lanes only: AVX2 permute, lane by lane in the generic build).
inline v8i pick(v8i table, v8i k) {
#if defined(__AVX2__)
    return (v8i)_mm256_permutevar8x32_epi32((__m256i)table, (__m256i)k);
#else
    v8i r;
    for (int j = 0; j < 8; ++j) r[j] = table[k[j] & 7];
    return r;
#endif
}

// Per lane 1 << (W (k - 1)) with W a quarter of the lane's bits, 0 where k == 0 (k <= 4): a
// one in the field of byte (float) or 16-bit word (double) k - 1 of the lane.
inline v8u field_of(v8i k) {
    const v8i shift = (k << 3) - splat(std::int32_t{8});
#if defined(__AVX2__)
    return (v8u)_mm256_sllv_epi32((__m256i)splat(std::int32_t{1}), (__m256i)shift);  // counts past 31 give 0
#else
    return (v8u)((splat(std::int32_t{1}) << (shift & splat(std::int32_t{31}))) & (k > splat(std::int32_t{0})));
#endif
}
inline v4u field_of(v4l k) {
    const v4l shift = (k << 4) - splat(16LL);
#if defined(__AVX2__)
    return (v4u)_mm256_sllv_epi64((__m256i)splat(1LL), (__m256i)shift);  // counts past 63 give 0
#else
    return (v4u)((splat(1LL) << (shift & splat(63LL))) & (k > splat(0LL)));
#endif
}

// Helpers for any vector type of GCC's vector extension (the wide lanes below among them).
template <typename V>
using LaneType = std::remove_cv_t<std::remove_reference_t<decltype(std::declval<V&>()[0])>>;
template <typename V>
constexpr std::size_t lanes_of() { return sizeof(V) / sizeof(LaneType<V>); }
template <typename V>
inline V broadcast(LaneType<V> x) {
    V v;
    for (std::size_t i = 0; i < lanes_of<V>(); ++i) v[i] = x;
    return v;
}
template <typename V, typename T>
inline V loadv(const T* p) {
    V v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

// The vectors of the one-pass kernel's own loops (fused_pass.cpp): 64 bytes where the
// instruction set has AVX-512 (F, VL, BW, DQ: 16 float32 or 8 float64 lanes, 32 registers,
// twice the work an instruction), else the 32 bytes of Lanes. The rank-window tallies keep
// Lanes' 32 bytes (their compaction tables are built for them): they read the differences
// those loops stored, whatever the width that wrote them.
#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512BW__) && defined(__AVX512DQ__)
#define POLY_WIDE_VECTORS 1
typedef float v16f __attribute__((vector_size(64)));
typedef std::int32_t v16i __attribute__((vector_size(64)));
typedef double v8d __attribute__((vector_size(64)));
typedef long long v8l __attribute__((vector_size(64)));
template <typename T>
struct WideLanes;
template <>
struct WideLanes<float> {
    using V = v16f;
    using I = v16i;
    using Bits = std::int32_t;
    static constexpr int n = 16;
};
template <>
struct WideLanes<double> {
    using V = v8d;
    using I = v8l;
    using Bits = long long;
    static constexpr int n = 8;
};
using SumVec = v8d;  // the float64 sums
using SumBits = v8l;
#else
template <typename T>
using WideLanes = Lanes<T>;
using SumVec = v4d;
using SumBits = v4l;
#endif

// lanes_of<SumVec>() values from p widened to double.
inline SumVec widen(const double* p) { return loadv<SumVec>(p); }
inline SumVec widen(const float* p) {
#if defined(POLY_WIDE_VECTORS)
    // (the zero-masking form: the plain intrinsic trips GCC 12's uninitialised-use warning)
    return (SumVec)_mm512_maskz_cvtps_pd(0xFF, _mm256_loadu_ps(p));
#else
    return widen4(p);
#endif
}
#if defined(POLY_WIDE_VECTORS)
inline v8d fma4(v8d x, v8d y, v8d z) { return (v8d)_mm512_fmadd_pd((__m512d)x, (__m512d)y, (__m512d)z); }
inline v8d minus(v8d x, v8d c) { return (v8d)_mm512_fmsub_pd((__m512d)x, _mm512_set1_pd(1.0), (__m512d)c); }
inline v8d plus(v8d x, v8d y) { return (v8d)_mm512_fmadd_pd((__m512d)x, _mm512_set1_pd(1.0), (__m512d)y); }
inline double hsum(v8d v) { return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); }
#endif

// Lane-wise minimum and maximum of signed integer vectors, and whether the instruction set
// has them as one instruction for I (else they are a compare and a blend). AVX-512's are what
// the compiler makes of the plain form (its intrinsics trip GCC 12's uninitialised-use
// warning); AVX2's plain form kept the accumulators in memory.
template <typename I>
constexpr bool has_integer_minmax() {
#if defined(POLY_WIDE_VECTORS)
    if (sizeof(I) == 64) return true;  // vpminsd / vpminsq on 64-byte vectors
#endif
#if defined(__AVX2__)
    return sizeof(I) == 32 && sizeof(LaneType<I>) == 4;
#else
    return false;
#endif
}
template <typename I>
inline I imin(I x, I y) {
#if defined(__AVX2__)
    if constexpr (sizeof(I) == 32 && sizeof(LaneType<I>) == 4) return (I)_mm256_min_epi32((__m256i)x, (__m256i)y);
#endif
    return x < y ? x : y;
}
template <typename I>
inline I imax(I x, I y) {
#if defined(__AVX2__)
    if constexpr (sizeof(I) == 32 && sizeof(LaneType<I>) == 4) return (I)_mm256_max_epi32((__m256i)x, (__m256i)y);
#endif
    return x > y ? x : y;
}

}  // namespace POLY_ARCH
}  // namespace poly
