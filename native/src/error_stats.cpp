#include "error_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

#include "order_select.hpp"
#include "rank_windows.hpp"
#include "parallel.hpp"
#include "kernels.hpp"

namespace poly {
namespace {

constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Running statistics of one stream: Chan's parallel merge of per-block (count, sum, M2), so
// the variance stays accurate where sum(x^2) - n*mean^2 would cancel.
struct StreamAcc {
    double n = 0, mean = 0, m2 = 0, sum = 0, sum_sq = 0, sum_abs = 0;
    bool have_extrema = false;
    double mn = 0, mx = 0;
    std::uint64_t mn_block = kNone, mx_block = kNone;  // first block holding the extremum
    std::uint64_t nan = 0, inf = 0, first_nan_block = kNone;

    // Chan et al.'s pairwise update of (count, mean, M2): stays finite and accurate where a
    // plain sum would overflow or sum(x^2) - n*mean^2 would cancel.
    void add_moments(double cnt, double mean_other, double m2_other) {
        if (cnt == 0) return;
        if (n == 0) {
            n = cnt;
            mean = mean_other;
            m2 = m2_other;
            return;
        }
        const double total = n + cnt;
        const double delta = mean_other - mean;
        mean += delta * (cnt / total);
        m2 += m2_other + delta * delta * (n * cnt / total);
        n = total;
    }

    void add_block(const StreamBlock& b, std::size_t m, std::uint64_t block) {
        add_moments(static_cast<double>(m), b.mean, b.m2);
        sum += b.sum;
        sum_sq += b.sum_sq;
        sum_abs += b.sum_abs;
        if (b.valid > 0) {
            if (!have_extrema || b.mn < mn) { mn = b.mn; mn_block = block; }
            if (!have_extrema || b.mx > mx) { mx = b.mx; mx_block = block; }
            have_extrema = true;
        }
        if (b.nan > 0 && first_nan_block == kNone) first_nan_block = block;
        nan += b.nan;
        inf += b.inf;
    }

    // `o` covers elements after this one's (partitions merge in order).
    void merge(const StreamAcc& o) {
        add_moments(o.n, o.mean, o.m2);
        sum += o.sum;
        sum_sq += o.sum_sq;
        sum_abs += o.sum_abs;
        if (o.have_extrema) {
            if (!have_extrema || o.mn < mn) { mn = o.mn; mn_block = o.mn_block; }
            if (!have_extrema || o.mx > mx) { mx = o.mx; mx_block = o.mx_block; }
            have_extrema = true;
        }
        if (first_nan_block == kNone) first_nan_block = o.first_nan_block;
        nan += o.nan;
        inf += o.inf;
    }
};

// The one-pass kernel's buffers for one block of compute type T: `own` holds the inputs loaded
// (float32: narrowed) when they are not read in place, and the differences when a block needs
// the exact treatment; `scratch` is the kernel's own.
template <typename T>
struct FusedBlock {
    FusedScratchOf<T> own;
    alignas(64) double wide[kBlock];
    FusedScratchOf<T> scratch;
};

// The kernel table's entries for compute type T.
bool fused_block(const KernelTable& k, const CompareConfig& cfg, const float* a, const float* b, std::size_t m,
                 const WindowSet* w, WindowTally32* t, BlockStats& out, FusedScratchOf<float>& sc) {
    return k.fused_f32(cfg, a, b, m, w, t, out, sc);
}
bool fused_block(const KernelTable& k, const CompareConfig& cfg, const double* a, const double* b, std::size_t m,
                 const WindowSet* w, WindowTally64* t, BlockStats& out, FusedScratchOf<double>& sc) {
    return k.fused_f64(cfg, a, b, m, w, t, out, sc);
}
void exact_block(const KernelTable& k, const CompareConfig& cfg, const float* a, const float* b, std::size_t m,
                 float* ad, float* rd, BlockStats& out) {
    k.diff_f32(cfg, a, b, m, ad, rd);
    k.block_stats_f32(a, b, ad, rd, m, cfg.atol, cfg.rtol, out);
}
void exact_block(const KernelTable& k, const CompareConfig& cfg, const double* a, const double* b, std::size_t m,
                 double* ad, double* rd, BlockStats& out) {
    k.diff_f64(cfg, a, b, m, ad, rd);
    k.block_stats_f64(a, b, ad, rd, m, cfg.atol, cfg.rtol, out);
}

// Elements [s, s + m) of v as the compute type T into dst (exact: float16/bfloat16/float32
// values are float32 values, and any dtype of a float64 comparison but the integer pairs
// that the one-pass kernel does not take is exact in double).
void load_as(const KernelTable& k, const ArrayView& v, std::size_t s, std::size_t m, double* dst, double*) {
    k.load_block(v, s, m, dst);
}
void load_as(const KernelTable& k, const ArrayView& v, std::size_t s, std::size_t m, float* dst, double* wide) {
    k.load_block(v, s, m, wide);
    for (std::size_t i = 0; i < m; ++i) dst[i] = static_cast<float>(wide[i]);
}

struct MainState {
    std::array<StreamAcc, 4> acc;
    double dot = 0;
    std::uint64_t fails = 0;
    RankWindows::Counts windows;  // one-pass order statistics (see rank_windows.hpp)
};

// First index in `block` whose value in `stream` is `target` (or NaN when want_nan).
std::int64_t locate(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b, std::uint64_t block,
                    int stream, double target, bool want_nan) {
    if (block == kNone || block * kBlock >= a.size) return -1;
    auto blk = new_block();
    const std::size_t start = block * kBlock;
    const std::size_t m = std::min(kBlock, a.size - start);
    compute_block(cfg, a, b, start, m, *blk);
    const double* v = blk->v[stream];
    for (std::size_t i = 0; i < m; ++i) {
        if (want_nan ? std::isnan(v[i]) : v[i] == target) return static_cast<std::int64_t>(start + i);
    }
    // Unreachable unless the inputs changed since the main pass (another thread writing to
    // them while the GIL is released): any index of the block keeps the result well-formed.
    return static_cast<std::int64_t>(start);
}

StreamStats finish_stream(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                          const StreamAcc& s, int stream) {
    StreamStats r;
    r.nan = s.nan;
    r.inf = s.inf;
    if (s.n == 0) {
        r.min = r.max = r.mean = r.var = r.std = r.mean_abs = r.mean_sq = kNaN;
        return r;
    }
    // With NaN or Inf present the plain sum carries NumPy's semantics (inf, or NaN for inf - inf).
    r.mean = (s.nan > 0 || s.inf > 0) ? s.sum / s.n : s.mean;
    r.var = (s.nan > 0 || s.inf > 0) ? kNaN : s.m2 / s.n;
    r.std = std::sqrt(r.var);
    r.mean_abs = s.sum_abs / s.n;
    r.mean_sq = s.sum_sq / s.n;
    if (s.nan > 0) {  // NumPy: min/max are NaN and argmin/argmax point at the first NaN
        r.min = r.max = kNaN;
        r.argmin = r.argmax = locate(cfg, a, b, s.first_nan_block, stream, 0, true);
    } else {
        r.min = s.mn;
        r.max = s.mx;
        r.argmin = locate(cfg, a, b, s.mn_block, stream, s.mn, false);
        r.argmax = locate(cfg, a, b, s.mx_block, stream, s.mx, false);
    }
    return r;
}

}  // namespace

ErrorStats compute_error_stats(const CompareConfig& cfg, const ArrayView& a, const ArrayView& b,
                               const StatsOptions& opts) {
    const std::size_t n = a.size;
    const int threads = resolve_threads(opts.threads, n);

    std::vector<OrderRequest> reqs;
    for (int k : {kAbs, kRel}) {
        if (opts.median) reqs.push_back({k, true, 0.5});
        for (double q : opts.quantiles) reqs.push_back({k, false, q});
    }
    // Ranks are planned as if no NaN were present; a stream with NaN gets NaN at the end.
    const RankPlan optimistic = plan_ranks(reqs, n, {0, 0, 0, 0});
    // Float32 compute (float16/bfloat16/float32 inputs, bool beside them) and float64 compute
    // (float64 beside any dtype but the integer pairs subtracted as integers, and bool pairs)
    // run the one-pass kernel per block. Two contiguous, aligned inputs of the compute type
    // (the common case) are read in place; other layouts and dtypes are loaded into it first
    // (exact). Results equal the general path's (extrema, counts, order statistics exactly,
    // sums within float64 rounding).
    const bool fused32 = cfg.f32;
    const bool fused64 = !cfg.f32 && !cfg.xor_mode && !cfg.needs_bits();
    auto in_place_as = [&](DType t, std::size_t size) {
        auto ok = [&](const ArrayView& v) {
            return v.dtype == t && v.contiguous() && reinterpret_cast<std::uintptr_t>(v.data) % size == 0;
        };
        return ok(a) && ok(b);
    };
    const bool in_place = fused32 ? in_place_as(DType::F32, sizeof(float))
                                  : fused64 && in_place_as(DType::F64, sizeof(double));
    const RankWindows windows(cfg, a, b, optimistic.targets, fused32 || fused64);

    auto add_block = [](MainState& st, const BlockStats& bs, std::size_t m, std::uint64_t block) {
        for (int k = 0; k < 4; ++k) st.acc[k].add_block(bs.s[k], m, block);
        st.dot += bs.dot;
        st.fails += bs.fails;
    };
    // One partition through the one-pass kernel of compute type T.
    auto fused_partition = [&](auto type_tag, MainState& st, std::size_t begin, std::size_t end) {
        using T = decltype(type_tag);
        using K = WindowKey<T>;
        const KernelTable& kt = kernels();
        BlockStats bs;
        if (windows.active()) st.windows = windows.make_counts(end - begin);
        std::unique_ptr<FusedBlock<T>> fb(new FusedBlock<T>);
        for (std::size_t s = begin; s < end; s += kBlock) {
            const std::size_t m = std::min(kBlock, end - s);
            const T* pa = reinterpret_cast<const T*>(a.data) + s;
            const T* pb = reinterpret_cast<const T*>(b.data) + s;
            if (!in_place) {
                load_as(kt, a, s, m, fb->own.a, fb->wide);
                load_as(kt, b, s, m, fb->own.b, fb->wide);
                pa = fb->own.a;
                pb = fb->own.b;
            }
            WindowTallyOf<K>* tally = windows.active() ? windows.tally_for<K>(st.windows, m) : nullptr;
            const bool done = fused_block(kt, cfg, pa, pb, m, tally ? &windows.window_set() : nullptr, tally, bs,
                                          fb->scratch);
            if (tally) windows.after_block(st.windows);
            // NaN, Inf, overflowing sums or a partial block: the exact treatment
            if (!done) exact_block(kt, cfg, pa, pb, m, fb->own.ad, fb->own.rd, bs);
            add_block(st, bs, m, s / kBlock);
        }
    };
    // One partition through the general path (integer and bool pairs).
    auto general_partition = [&](MainState& st, std::size_t begin, std::size_t end) {
        const KernelTable& kt = kernels();
        BlockStats bs;
        if (windows.active()) st.windows = windows.make_counts(end - begin);
        std::unique_ptr<Block> blk(new Block);
        for (std::size_t s = begin; s < end; s += kBlock) {
            const std::size_t m = std::min(kBlock, end - s);
            compute_block(cfg, a, b, s, m, *blk);
            kt.block_stats(*blk, m, cfg.atol, cfg.rtol, bs);
            add_block(st, bs, m, s / kBlock);
            if (windows.active()) {
                for (int k : {kAbs, kRel})
                    if (windows.wants(k)) windows.feed(st.windows, k, blk->v[k], m);
            }
        }
    };
    auto states = run_partitions<MainState>(n, threads, kBlock,
                                            [&](MainState& st, std::size_t begin, std::size_t end) {
        if (fused32) fused_partition(float{}, st, begin, end);
        else if (fused64) fused_partition(double{}, st, begin, end);
        else general_partition(st, begin, end);
    });

    MainState total;
    for (const auto& st : states) {
        for (int k = 0; k < 4; ++k) total.acc[k].merge(st.acc[k]);
        total.dot += st.dot;
        total.fails += st.fails;
    }

    ErrorStats out;
    out.size = n;
    out.mismatches = total.fails;
    for (int k = 0; k < 4; ++k) out.stream[k] = finish_stream(cfg, a, b, total.acc[k], k);
    out.dot = total.dot;

    if (!reqs.empty() && n > 0) {
        const std::array<std::uint64_t, 4> nans{out.stream[0].nan, out.stream[1].nan, out.stream[2].nan,
                                                out.stream[3].nan};
        std::array<bool, 4> has_nan{};
        for (int k = 0; k < 4; ++k) has_nan[k] = nans[k] > 0;
        std::vector<std::uint64_t> keys;
        std::vector<double> vals;
        std::vector<RankWindows::Counts*> parts;
        for (auto& st : states) parts.push_back(&st.windows);
        // Every value of a requested stream equal (its smallest is its largest: two equal outputs
        // give absdiff and reldiff 0 everywhere): every rank has that value, known from the pass's
        // extrema, with no select (whose windows overflow on such ties and whose passes count
        // and gather every key). absdiff and reldiff are never -0, so equal values have one key.
        bool constant = true;
        for (const auto& r : reqs)
            constant = constant && (has_nan[r.stream] || out.stream[r.stream].min == out.stream[r.stream].max);
        if (constant)
            for (const auto& t : optimistic.targets) keys.push_back(order_key(out.stream[t.stream].min, cfg.f32));
        const bool ok = constant || (windows.active() && (windows.fused() ? windows.resolve_fused(parts, keys, has_nan, threads)
                                                                          : windows.resolve(parts, keys, has_nan, threads)));
        out.order_method = constant ? "constant" : ok ? "windows" : "radix";
        if (ok) {
            vals = combine_ranks_nan_free(optimistic, keys, cfg.f32, reqs, has_nan);
        } else {
            vals = order_statistics(cfg, a, b, reqs, nans, opts.threads);
        }
        std::size_t i = 0;
        for (int k : {kAbs, kRel}) {
            const std::size_t per = (opts.median ? 1 : 0) + opts.quantiles.size();
            out.stream[k].order.assign(vals.begin() + static_cast<std::ptrdiff_t>(i),
                                       vals.begin() + static_cast<std::ptrdiff_t>(i + per));
            i += per;
        }
    }

    // Distance and quality metrics (Polygraphy's conventions for the degenerate cases).
    const StreamStats& sb = out.stream[kB];
    const double nd = static_cast<double>(n);
    out.l2 = std::sqrt(total.acc[kAbs].sum_sq);
    out.mse = n ? total.acc[kAbs].sum_sq / nd : kNaN;
    const double norm_a = std::sqrt(total.acc[kA].sum_sq), norm_b = std::sqrt(total.acc[kB].sum_sq);
    if (n == 0) out.cosine = kNaN;
    else if (norm_a == 0 && norm_b == 0) out.cosine = 1.0;
    else if (norm_a == 0 || norm_b == 0) out.cosine = 0.0;
    else out.cosine = total.dot / (norm_a * norm_b);
    if (n == 0 || std::isnan(out.mse)) {
        out.psnr = out.snr = kNaN;
    } else if (out.mse == 0) {
        out.psnr = out.snr = std::numeric_limits<double>::infinity();
    } else {
        double peak = std::max(std::fabs(sb.min), std::fabs(sb.max));
        if (peak == 0) peak = 1.0;  // an all-zero reference has no peak to speak of
        out.psnr = 20.0 * std::log10(peak) - 10.0 * std::log10(out.mse);
        const double signal = sb.mean_sq;
        out.snr = signal == 0 ? -std::numeric_limits<double>::infinity() : 10.0 * std::log10(signal / out.mse);
    }
    return out;
}

}  // namespace poly
