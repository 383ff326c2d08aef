// Element types the statistics engine reads, and the strided view over a NumPy array.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace poly {

// Codes shared with poly/compare/error_stats.py (keep both in sync).
enum class DType : int {
    Bool = 0, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64
};

constexpr int kMaxDims = 32;

// A read-only N-d view. Dimensions are collapsed where memory allows, so a C-contiguous
// array becomes one dimension and its inner loop a plain pointer walk.
struct ArrayView {
    const char* data = nullptr;
    DType dtype = DType::F32;
    std::size_t itemsize = 4;
    std::size_t size = 0;
    int ndim = 0;
    std::array<std::int64_t, kMaxDims> shape{};
    std::array<std::int64_t, kMaxDims> strides{};  // in bytes

    ArrayView() = default;
    ArrayView(const void* ptr, DType dt, std::size_t item, int nd, const std::int64_t* shp,
              const std::int64_t* str);
    bool contiguous() const { return ndim == 1 && strides[0] == static_cast<std::int64_t>(itemsize); }
};

}  // namespace poly
