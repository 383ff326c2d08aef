// Streaming both arrays through shared memory (asynchronous copies) or through their strides.
#ifndef POLY_STREAMING_CUH
#define POLY_STREAMING_CUH

#include "layouts.cuh"
#include "elements.cuh"

#define POLY_UNROLL 8  // elements per thread per step of a strided view

// The dynamic shared memory of every kernel that takes it (the ring, then its counters or staging),
// declared once here: declared inside both a function template (stats_pass) and plain kernels, NVRTC
// warned of a linkage conflict (#1556-D), and the kernel-compile tests fail on any warning.
extern __shared__ uint4 smem[];

// -- streaming both arrays ------------------------------------------------------------------------
__device__ __forceinline__ void copy16_async(uint4* dst, const uint4* src) {
#if __CUDA_ARCH__ >= 800
    const u32 s = (u32)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src));
#else
    *dst = *src;
#endif
}
__device__ __forceinline__ void copies_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}
__device__ __forceinline__ void copies_wait_all_but_newest() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(POLY_STAGES - 1));
#endif
}

#define POLY_ELEMS (16 / Size<POLY_DTA>::value)  // elements per 16-byte chunk
#define POLY_CAN_CHUNK (Size<POLY_DTA>::value == Size<POLY_DTB>::value)

// Calls chunk(j0, raw_a, raw_b, valid) for each 16-byte chunk (elements j0 .. j0 + POLY_ELEMS - 1)
// of this thread and one(j, values, valid) for each remaining element; with `chunked` false,
// one() for every element. With UNIFORM, the loops are uniform across a warp (a lane past the
// end calls with `valid` false), so that the callbacks may use warp collectives; otherwise
// `valid` is always true. `ring`: POLY_STAGES x 2 x blockDim.x slots of shared memory; each
// thread only reads the slots it filled, so no block barrier is needed.
template <bool UNIFORM, typename FC, typename FE>
__device__ __forceinline__ void for_each_pair(const Params& P, uint4* ring, FC&& chunk, FE&& one) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 lane = UNIFORM ? threadIdx.x & 31 : 0;  // loops end together with the warp's first lane
    u64 start = 0;
    if (POLY_CAN_CHUNK && P.chunked) {
        const int E = POLY_ELEMS;
        const u64 nchunks = P.n / E;
        const uint4* ga = (const uint4*)P.a.ptr;
        const uint4* gb = (const uint4*)P.b.ptr;
        const int T = blockDim.x, t = threadIdx.x;
#pragma unroll
        for (int s = 0; s < POLY_STAGES - 1; ++s) {
            const u64 k = first + (u64)s * stride;
            if (k < nchunks) {
                copy16_async(&ring[(2 * s) * T + t], ga + k);
                copy16_async(&ring[(2 * s + 1) * T + t], gb + k);
            }
            copies_commit();
        }
        int slot = 0;
        for (u64 k = first; k - lane < nchunks; k += stride) {
            const u64 kn = k + (u64)(POLY_STAGES - 1) * stride;
            const int ns = slot == 0 ? POLY_STAGES - 1 : slot - 1;  // the slot consumed last time
            if (kn < nchunks) {
                copy16_async(&ring[(2 * ns) * T + t], ga + kn);
                copy16_async(&ring[(2 * ns + 1) * T + t], gb + kn);
            }
            copies_commit();
            copies_wait_all_but_newest();
            const uint4 ra = ring[(2 * slot) * T + t], rb = ring[(2 * slot + 1) * T + t];
            chunk(k * E, ra, rb, !UNIFORM || k < nchunks);
            slot = slot + 1 == POLY_STAGES ? 0 : slot + 1;
        }
        start = nchunks * E;
    }
    for (u64 i = start + first; i - lane < P.n; i += stride * POLY_UNROLL) {
        u64 ra[POLY_UNROLL], rb[POLY_UNROLL];
#pragma unroll
        for (int u = 0; u < POLY_UNROLL; ++u) {
            const u64 j = i + (u64)u * stride;
            ra[u] = 0;
            rb[u] = 0;
            if (j < P.n) {
                ra[u] = load_raw<POLY_DTA>((const char*)P.a.ptr + offset_of(P.a, j));
                rb[u] = load_raw<POLY_DTB>((const char*)P.b.ptr + offset_of(P.b, j));
            }
        }
#pragma unroll
        for (int u = 0; u < POLY_UNROLL; ++u) {
            const u64 j = i + (u64)u * stride;
            if (j - lane >= P.n) break;  // uniform across the warp
            Vals v;
            element_raw(P, ra[u], rb[u], v);
            one(j, v, !UNIFORM || j < P.n);
        }
    }
}

// The values of a chunk's elements.
__device__ __forceinline__ void chunk_values(const Params& P, const uint4& ra, const uint4& rb, Vals* v) {
#pragma unroll
    for (int e = 0; e < POLY_ELEMS; ++e)
        element_raw(P, lane_raw<Size<POLY_DTA>::value>(ra, e), lane_raw<Size<POLY_DTB>::value>(rb, e), v[e]);
}

// Calls one(j, values, true) for every element: for_each_pair with each chunk's values unpacked.
template <typename FE>
__device__ __forceinline__ void for_each_value(const Params& P, uint4* ring, FE&& one) {
    auto chunk = [&](u64 j0, const uint4& ra, const uint4& rb, bool) {
        Vals v[POLY_ELEMS];
        chunk_values(P, ra, rb, v);
#pragma unroll
        for (int e = 0; e < POLY_ELEMS; ++e) one(j0 + e, v[e], true);
    };
    for_each_pair<false>(P, ring, chunk, one);
}

#endif  // POLY_STREAMING_CUH
