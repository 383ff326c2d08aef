// The structures the host reads or writes: each one declared here only, in plain C (the host's
// ctypes and NumPy layouts, device_run.py and predicted_ranges.py, mirror them field by field;
// tests/compare/test_gpu_kernel_files.py compiles this header with the host's C compiler and
// checks every size and offset against those layouts).
#ifndef POLY_LAYOUTS_CUH
#define POLY_LAYOUTS_CUH

#include "limits.cuh"

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

// One array: its address, and its shape and byte strides after collapsing (device_run's _View).
typedef struct View {
    u64 ptr;
    i64 shape[POLY_MAX_DIMS];
    i64 strides[POLY_MAX_DIMS];  // bytes
    int ndim;
    int itemsize;
} View;

// A group of keys one radix pass counts or gathers (device_run's _Group).
typedef struct Group {
    u64 prefix;  // known top `bits` bits of the key
    int stream;  // 0 a, 1 b, 2 absdiff, 3 reldiff
    int bits;
    int dbits;   // digit bits counted by this pass
    int pad;
} Group;

// Every kernel's one argument, passed by value (device_run.LaunchParams).
typedef struct Params {
    View a, b;
    u64 n;
    double atol, rtol, eps;
    u64 den_min_bits;
    u64 out;      // poly_stats: one Part per block; gather: one u64 counter per group
    u64 hist;     // poly_stats (optional, 0 for none): 2 x POLY_FIRST_BINS u64; radix passes: groups x POLY_BINS u64
    int ngroups;
    int inf_equal;  // equal infinities give absdiff 0
    int chunked;    // both arrays contiguous, 16-byte aligned, of one item size
    float eps32;    // eps in float (the float32 arithmetic's)
    Group groups[POLY_MAX_GROUPS];
    u64 seg[POLY_MAX_GROUPS];      // gather: each group's key buffer; keys_hist: each group's gathered keys
    u64 seg_len[POLY_MAX_GROUPS];  // gather: its capacity; keys_hist: its length
    // Predicted ranges (poly_stats_ranges; the ranges themselves in the constant poly_plan): each
    // thread writes the keys of absdiff and reldiff within up to POLY_RANGES ranges each to its own
    // region of rcap keys of rbuf[stream] (no atomics), and counts the keys below each range's lo.
    u64 rout;      // 2 x POLY_RANGES u64 counts below each lo, then the 2 streams' largest region fill
    u64 rfills;    // 2 x (threads of the grid) u32 region fills (keys found, written or not)
    u64 rbuf[2];
    u32 rcap;      // poly_stats_ranges, poly_range_seed, poly_range_pass: keys per region, a power of two
    u32 nregions;  // poly_range_pass: regions per stream (the statistics pass's threads)
    u64 sel;        // poly_select_input: the SelState of the targets; poly_range_seed, poly_range_pass: the RangeSelState
    int sel_dbits;  // poly_select_input, poly_range_pass: key bits counted by this pass (at most)
    int sel_slots;  // poly_range_pass: the shared histograms (2^sel_dbits counters each) its dynamic shared memory holds
    int plan_phase;   // poly_plan_ranges: its phase (hist: its PlanStates)
    int plan_pad;
    u64 sel_fine;   // poly_select_input (0: none): ntargets x 2^(2 sel_dbits) u32 counts of the next 2 sel_dbits key bits
} Params;

// -- the predicted ranges, planned on the device ------------------------------------------------------
// The host asks per stream (absdiff, reldiff) for the sample keys at the sorted positions that end
// each wanted rank's range (PlanAsk); poly_plan_ranges selects them and plans the ranges
// (RangeTable, as predicted_ranges.stream_ranges plans them from a sorted sample), and the table
// is copied, in stream order, into the constant poly_plan that the statistics pass and the select
// on the ranges' keys (range_select.cuh) read. An unused range is [0, 0] (key 0 is a NaN's); a stream
// with no ranges (none asked, too many keys in them, or more than its regions were sized for) has
// its first key digit counted by the statistics pass instead, for the ordinary select.
// (predicted_ranges' PLAN_ASK and RANGE_TABLE.)
typedef struct PlanAsk {
    i64 at_lo[POLY_PLAN_RANKS], at_hi[POLY_PLAN_RANKS];  // sample positions of each rank's range ends (outside [0, S): open)
    u64 max_expected;  // a stream whose ranges hold more of the input's keys (estimated) is not predicted
    int nranks;        // ranks asked, ascending
    int pad;
} PlanAsk;

typedef struct RangeTable {
    u64 lo[2 * POLY_RANGES], hi[2 * POLY_RANGES];
    u64 expected[2];                    // the input's keys the ranges should hold, from the sample's
    int nranges[2];                     // 0: not predicted
    int range_of[2 * POLY_PLAN_RANKS];  // each asked rank's range
} RangeTable;

#ifdef __CUDACC__
// The device's copy of the plan, in constant memory: the host copies poly_plan_ranges' table into it
// (cuModuleGetGlobal) before the statistics pass.
__constant__ RangeTable poly_plan;
#endif

// -- the statistics pass's records (device_run's ACC_FIELDS and PART_RECORD) -----------------------
// One stream's merged statistics.
typedef struct Acc {
    double n, mean, m2, sum, sq, ab, mn, mx;
    i64 imn, imx, inan;
    u64 nnan, ninf;
    i64 pad;
} Acc;

// One block's record (and, merged by poly_merge_parts, the pass's): a, b, absdiff, reldiff.
typedef struct Part {
    Acc s[4];
    double dot;
    u64 fails;
} Part;

// -- the ranks a device-side select narrows (device_run's SELECT_TARGET and SELECT_STATE) ----------
typedef struct SelTarget {
    u64 prefix;  // known top `bits` bits of the key
    u64 rank;    // rank among the keys with that prefix
    int stream;  // 2 absdiff, 3 reldiff
    int bits;
} SelTarget;

typedef struct SelState {
    SelTarget t[POLY_SEL_TARGETS];
    u32 done_blocks;  // blocks of the current pass that have merged their histograms
    int ntargets;
} SelState;

// -- the ranks in the predicted ranges, narrowed on the device (predicted_ranges' RANGE_SELECT_STATE) --
// A rank of absdiff or reldiff looked for among the keys the statistics pass gathered in its range.
typedef struct RangeTarget {
    u64 prefix;  // known top `bits` bits of the key's offset from lo
    u64 rank;    // the input's rank (written by the host); from poly_range_seed on, its rank among its range's keys with that prefix
    u64 lo, hi;  // its range (set by poly_range_seed)
    int stream;  // 2 absdiff, 3 reldiff
    int bits;
    int ask;     // the rank's index among its stream's asked ranks (ascending, as the PlanAsk has them)
    int missed;  // set where the ranges cannot give the rank: the host finds it the ordinary way
} RangeTarget;

typedef struct RangeSelState {
    RangeTarget t[2 * POLY_PLAN_RANKS];
    u32 done_blocks;  // blocks of the current pass that have merged their histograms
    int ntargets;
} RangeSelState;

// The progress of one stream's plan over the blocks of poly_plan_ranges (predicted_ranges' PLAN_STATE).
typedef struct PlanState {
    SelTarget t[POLY_PLAN_ENDS];  // each asked position's key, narrowed 8 bits a phase
    u64 hist[POLY_PLAN_ENDS][256];
    u32 below[POLY_PLAN_ENDS], upto[POLY_PLAN_ENDS];  // sample keys below and up to each end's key
    u32 done_blocks;
    int pad;
} PlanState;

#endif  // POLY_LAYOUTS_CUH
