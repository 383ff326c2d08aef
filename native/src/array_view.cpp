// Construction of strided views, with dimensions collapsed where memory allows.
#include <stdexcept>

#include "dtype.hpp"

namespace poly {

ArrayView::ArrayView(const void* ptr, DType dt, std::size_t item, int nd, const std::int64_t* shp,
                     const std::int64_t* str)
    : data(static_cast<const char*>(ptr)), dtype(dt), itemsize(item) {
    if (nd > kMaxDims) throw std::invalid_argument("arrays of more than 32 dimensions are not supported");
    size = 1;
    for (int d = 0; d < nd; ++d) size *= static_cast<std::size_t>(shp[d]);
    // Drop unit dimensions and merge neighbours whose strides chain (outer == inner * n).
    ndim = 0;
    for (int d = 0; d < nd; ++d) {
        if (shp[d] == 1) continue;
        if (ndim > 0 && strides[ndim - 1] == str[d] * shp[d]) {
            shape[ndim - 1] *= shp[d];
            strides[ndim - 1] = str[d];
        } else {
            shape[ndim] = shp[d];
            strides[ndim] = str[d];
            ++ndim;
        }
    }
    if (ndim == 0) {  // scalar or all-unit shape
        ndim = 1;
        shape[0] = 1;
        strides[0] = static_cast<std::int64_t>(itemsize);
    }
}

}  // namespace poly
