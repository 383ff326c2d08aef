/*
 * The sizes the kernels and the host share: the host (kernel_source.py) reads each `#define POLY_...`
 * of this file, so a launch's grid, shared memory and buffers are sized from the same numbers the
 * kernels are compiled with. Keep each value an integer expression of numbers, earlier POLY_ names,
 * parentheses and + - * / << (what the host evaluates), one definition a line.
 */
#ifndef POLY_LIMITS_CUH
#define POLY_LIMITS_CUH

#define POLY_FIRST_BITS 12     /* key bits counted by the statistics pass: 4096 bins per stream (an eighth of an octave) */
#define POLY_DIGIT_BITS 11     /* later radix digits: 2048 bins, 8 KiB of shared counters per group */
#define POLY_MAX_GROUPS 16     /* groups per gather or gathered-keys launch */
#define POLY_HIST_GROUPS 8     /* groups per histogram pass over the input (64 KiB of shared counters at most) */
#define POLY_MAX_DIMS 8        /* dimensions of a strided view after collapsing */
#define POLY_THREADS 256       /* threads per block of every kernel */
#define POLY_STAGES 4          /* chunks of each array in flight per thread (the asynchronous-copy ring) */
#define POLY_STAGE_BYTES 512   /* the gather's staging per warp and stream: 128 float32 keys (64 float64) */
#define POLY_RESERVE_BYTES 4096  /* the run of a stream's buffer a gathering warp reserves at a time */
#define POLY_RANGES 4          /* predicted ranges per stream (absdiff, reldiff) the statistics pass gathers */
#define POLY_PLAN_RANKS 16     /* ranks per stream whose predicted ranges the device plans (a median and 7 quantiles) */
#define POLY_PLAN_BLOCKS 64    /* blocks per stream of the device's plan (each a slice of the sample; 16 took 74 us a phase at 2^18 sample keys) */
#define POLY_SEL_TARGETS 20    /* ranks a device-side select narrows at once (2 ranks each of the medians and up to 4 quantiles of 2 streams) */
#define POLY_SELECT_BITS 10    /* key bits each pass of a device-side select counts: 1024 bins, 4 KiB of shared counters per rank */
#define POLY_SEL_PER_SLOT 2   /* targets per shared histogram of a select pass: a rank and its neighbour nearly always share a group */

#define POLY_BINS (1 << POLY_DIGIT_BITS)
#define POLY_FIRST_BINS (1 << POLY_FIRST_BITS)
#define POLY_PLAN_ENDS (2 * POLY_PLAN_RANKS)  /* the sample positions the plan selects: each rank's two range ends */

/* Dynamic shared memory: the ring of asynchronous copies (POLY_STAGES x 2 arrays x POLY_THREADS x 16
 * bytes) comes first; the statistics pass's first-digit counters (2 streams, u32) and the gather's
 * staging follow it. */
#define POLY_RING_BYTES (POLY_STAGES * 2 * POLY_THREADS * 16)
#define POLY_STATS_HIST_BYTES (POLY_RING_BYTES + 2 * POLY_FIRST_BINS * 4)
#define POLY_GATHER_STAGE_BYTES ((POLY_THREADS / 32) * 4 * POLY_STAGE_BYTES)

#endif  /* POLY_LIMITS_CUH */
