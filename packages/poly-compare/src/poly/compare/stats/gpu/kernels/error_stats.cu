// The on-device error statistics: the one translation unit NVRTC compiles per variant
// (kernel_source.py hands it over with the headers of this folder; the variant's POLY_DTA, POLY_DTB,
// POLY_F32, POLY_XOR, POLY_INT_DIFF and POLY_DEN_WRAP come as -D options, the shared sizes from
// limits.cuh).
//
// How the input is read: when both arrays are contiguous, 16-byte aligned and of one item size
// (Params.chunked), each thread streams 16-byte chunks of both arrays through a ring of
// POLY_STAGES slots in shared memory filled by asynchronous copies (cp.async), so that the loads
// of the next chunks are in flight while the current one is computed: the passes run at the
// memory's speed although their arithmetic is heavy. Otherwise (strided views, mixed item sizes)
// each thread loads POLY_UNROLL elements at a time through the view's strides.
//
// Kernels:
// - poly_stats (stats_pass.cuh): one pass over both arrays; per block, the four streams' (count,
//   mean, M2) moments, plain sums, extrema with their first indices, NaN/Inf counts, the dot
//   product and the mismatch count, merged in float64 and written as one record per block. Chunks
//   whose values are all finite take a fast path (extrema per chunk, no NaN/Inf bookkeeping).
//   Given a histogram buffer, it also counts the top POLY_FIRST_BITS key bits of absdiff and
//   reldiff (the order statistics' first radix digit).
// - poly_stats_ranges (stats_pass.cuh): the same pass, and given predicted ranges (the constant
//   poly_plan), each thread counts the keys of absdiff and reldiff below each range and writes
//   those within one to a region of its own (predicted_ranges); a stream without ranges has its
//   first digit counted.
// - poly_merge_parts (stats_pass.cuh): the statistics pass's per-block records merged into one on
//   the device (one block, queued behind the pass), so that one record comes back.
// - poly_radix_hist (radix_passes.cuh): one radix pass over the input: for up to POLY_HIST_GROUPS
//   (stream, key prefix) groups, a histogram of the next key digit of the elements with that prefix.
// - poly_radix_gather (radix_passes.cuh): the keys of the elements of up to POLY_MAX_GROUPS groups,
//   appended to one buffer per stream (staged per warp in shared memory, written into runs of the
//   buffer each warp reserves with one atomic per 4 KiB; the unused rest of a run holds key 0). An
//   element belongs to at most one group per stream.
// - poly_keys_hist (radix_passes.cuh): a radix pass over one gathered buffer (its length read from
//   the gather's counter on the device), for all the groups it holds.
// - poly_keys_collect (radix_passes.cuh): the same read, copying the keys of its groups to one small
//   buffer (the last radix passes' work done on the host, once the groups hold few keys).
// - poly_select_first, poly_select_input (device_select.cuh): a radix select run on the device (a
//   mid-size input), queued right behind the statistics pass: the wanted ranks of absdiff and
//   reldiff, kept in device memory, are descended by the pass's first-digit histograms, then each
//   pass over the input counts the next key digit of the elements of each rank's group and its
//   last block descends every rank by them, so that the passes follow each other with no host
//   round trip.
// - poly_sample (range_plan.cuh): the keys of absdiff and reldiff at a stratified random sample of
//   places.
// - poly_plan_ranges (range_plan.cuh): the predicted ranges planned from that sample on the device
//   (a select of the sample keys ending each rank's range, 8 bits a launch over 16 blocks a stream,
//   then the plan made by one thread), written to a RangeTable that the host copies into poly_plan
//   in stream order.
// - poly_range_seed, poly_range_pass (range_select.cuh): the ranks in the predicted ranges, narrowed on
//   the keys the statistics pass gathered, queued behind it with no host round trip: each rank placed
//   in its range by the pass's counts and descended by the first pass over the ranges' keys, then
//   each pass over those keys counts the next digit of every rank's group and its last block
//   descends them.
// - poly_count_zeros (here): the number of zeros in b (the simple comparison's warning).

#include "layouts.cuh"
#include "stats_pass.cuh"
#include "radix_passes.cuh"
#include "device_select.cuh"
#include "range_plan.cuh"
#include "range_select.cuh"

extern "C" __global__ void __launch_bounds__(POLY_THREADS) poly_count_zeros(const Params P) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    u64 zeros = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < P.n; i += stride) {
        const char* pb = (const char*)P.b.ptr + offset_of(P.b, i);
        zeros += value_of<POLY_DTB>(load_raw<POLY_DTB>(pb)) == 0.0;
    }
    for (int delta = 16; delta > 0; delta >>= 1) zeros += __shfl_down_sync(0xFFFFFFFFu, zeros, delta);
    if (threadIdx.x % 32 == 0 && zeros) atomicAdd((u64*)P.out, zeros);
}
