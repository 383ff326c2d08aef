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
// `dst` and `dst_shared` are one slot of the ring, as a pointer and as a shared-window address
// (converted once per thread by the caller: converting at each copy cost a dozen instructions a
// chunk, which the statistics pass, bound by its instruction issue, paid for in bandwidth).
__device__ __forceinline__ void copy16_async(uint4* dst, u32 dst_shared, const uint4* src) {
#if __CUDA_ARCH__ >= 800
    (void)dst;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst_shared), "l"(src));
#else
    (void)dst_shared;
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

// How many of first, first + stride, first + 2 stride... lie below n: a grid-stride loop's steps.
__device__ __forceinline__ u64 strided_count(u64 first, u64 n, u64 stride) {
    return first < n ? (n - first + stride - 1) / stride : 0;
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
        // Every kernel runs POLY_THREADS threads a block: the ring's layout is fixed at compile
        // time. Slot s of array a (b) of this thread is mine[s * SLOT] (mine[s * SLOT + T]); the
        // slot filled and the slot read move by SLOT, wrapping at RING.
        constexpr u32 T = POLY_THREADS, SLOT = 2 * T, RING = POLY_STAGES * SLOT;
        static_assert((RING & (RING - 1)) == 0, "the ring wraps by a mask");
        uint4* const mine = ring + threadIdx.x;
        const u32 mine_shared = (u32)__cvta_generic_to_shared(mine);
#pragma unroll
        for (int s = 0; s < POLY_STAGES - 1; ++s) {
            const u64 k = first + (u64)s * stride;
            if (k < nchunks) {
                copy16_async(mine + s * SLOT, mine_shared + s * SLOT * 16, ga + k);
                copy16_async(mine + s * SLOT + T, mine_shared + (s * SLOT + T) * 16, gb + k);
            }
            copies_commit();
        }
        // The loop counts its steps in 32 bits (a thread's chunks number fewer than 2^32: device
        // memory holds fewer than 2^32 grid strides of chunks) and moves one byte offset into both
        // arrays, where working out each step's chunk index and both addresses afresh took a dozen
        // instructions a chunk of a pass bound by its instruction issue. UNIFORM: as many steps as
        // the warp's first lane takes (its later lanes end no later).
        const u64 lead = first - lane;
        const u32 steps = (u32)strided_count(lead, nchunks, stride);
        const u32 own = (u32)strided_count(first, nchunks, stride);  // this thread's chunks
        u64 ahead = (first + (u64)(POLY_STAGES - 1) * stride) * 16;  // byte offset of the chunk POLY_STAGES - 1 steps on
        const u64 step_bytes = stride * 16;
        u32 read = 0, fill = (POLY_STAGES - 1) * SLOT;  // uint4 offsets of the slot read and the slot filled
        u64 k = first;
        for (u32 it = 0; it < steps; ++it) {
            if (it + (POLY_STAGES - 1) < own) {  // into the slot read last time
                copy16_async(mine + fill, mine_shared + fill * 16, (const uint4*)((const char*)ga + ahead));
                copy16_async(mine + fill + T, mine_shared + (fill + T) * 16, (const uint4*)((const char*)gb + ahead));
            }
            copies_commit();
            copies_wait_all_but_newest();
            const uint4 ra = mine[read], rb = mine[read + T];
            chunk(k * E, ra, rb, !UNIFORM || it < own);
            fill = read;
            read = (read + SLOT) & (RING - 1);
            ahead += step_bytes;
            k += stride;
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
