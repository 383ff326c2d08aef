// Python bindings of poly._native. The Python side (poly.compare.error_stats) maps dtypes
// to codes and wraps the dictionaries in typed results.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/numpy.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "base64_decode.hpp"
#include "error_stats.hpp"
#include "histogram.hpp"
#include "kernels.hpp"
#include "key_buffers.hpp"
#include "order_select.hpp"
#include "parallel.hpp"
#include "stream_order.hpp"
#include "usable_cpus.hpp"

namespace py = pybind11;
using namespace poly;

void register_cuda(py::module_& m);  // cuda_bindings.cpp

namespace {

ArrayView view_of(const py::array& arr, int code) {
    if (code < 0 || code > static_cast<int>(DType::F64)) throw py::value_error("unsupported dtype code " + std::to_string(code));
    std::vector<std::int64_t> shape(static_cast<std::size_t>(arr.ndim())), strides(static_cast<std::size_t>(arr.ndim()));
    for (py::ssize_t d = 0; d < arr.ndim(); ++d) {
        shape[static_cast<std::size_t>(d)] = arr.shape(d);
        strides[static_cast<std::size_t>(d)] = arr.strides(d);
    }
    return ArrayView(arr.data(), static_cast<DType>(code), static_cast<std::size_t>(arr.itemsize()),
                     static_cast<int>(arr.ndim()), shape.data(), strides.data());
}

void check_shapes(const py::array& a, const py::array& b) {
    bool same = a.ndim() == b.ndim();
    for (py::ssize_t d = 0; same && d < a.ndim(); ++d) same = a.shape(d) == b.shape(d);
    if (!same) throw py::value_error("error statistics need arrays of the same shape");
}

py::dict stream_dict(const StreamStats& s) {
    py::dict d;
    d["min"] = s.min;
    d["max"] = s.max;
    d["mean"] = s.mean;
    d["var"] = s.var;
    d["std"] = s.std;
    d["mean_abs"] = s.mean_abs;
    d["mean_sq"] = s.mean_sq;
    d["argmin"] = s.argmin;
    d["argmax"] = s.argmax;
    d["nan"] = s.nan;
    d["inf"] = s.inf;
    d["order"] = s.order;
    return d;
}

py::dict error_stats(const py::array& a, const py::array& b, int code_a, int code_b, double atol, double rtol,
                     const std::vector<double>& quantiles, bool median, bool inf_equal, int threads) {
    check_shapes(a, b);
    const ArrayView va = view_of(a, code_a), vb = view_of(b, code_b);
    const CompareConfig cfg = CompareConfig::make(va.dtype, vb.dtype, atol, rtol, inf_equal);
    StatsOptions opts;
    opts.quantiles = quantiles;
    opts.median = median;
    opts.threads = threads;
    ErrorStats r;
    {
        py::gil_scoped_release release;
        r = compute_error_stats(cfg, va, vb, opts);
    }
    py::dict d;
    d["size"] = r.size;
    d["mismatches"] = r.mismatches;
    d["compute_dtype"] = cfg.xor_mode ? "bool" : (cfg.f32 ? "float32" : "float64");
    d["a"] = stream_dict(r.stream[kA]);
    d["b"] = stream_dict(r.stream[kB]);
    d["absdiff"] = stream_dict(r.stream[kAbs]);
    d["reldiff"] = stream_dict(r.stream[kRel]);
    d["l2"] = r.l2;
    d["mse"] = r.mse;
    d["cosine"] = r.cosine;
    d["psnr"] = r.psnr;
    d["snr"] = r.snr;
    d["dot"] = r.dot;
    d["order_method"] = r.order_method;
    return d;
}

int stream_index(const std::string& stream) {
    if (stream == "a") return kA;
    if (stream == "b") return kB;
    if (stream == "absdiff") return kAbs;
    if (stream == "reldiff") return kRel;
    throw py::value_error("unknown stream '" + stream + "'");
}

// Order statistics of one stream ("a", "b", "absdiff", "reldiff"), or of a list of them found in
// the same passes, on demand: each entry of `qs` is a quantile in [0, 1], or None for the median;
// the values come stream by stream, each in the order of `qs`.
std::vector<double> order_stats(const py::array& a, const py::array& b, int code_a, int code_b,
                                const py::object& stream, const std::vector<std::optional<double>>& qs,
                                bool inf_equal, int threads) {
    check_shapes(a, b);
    std::vector<int> streams;
    if (py::isinstance<py::str>(stream)) streams.push_back(stream_index(stream.cast<std::string>()));
    else
        for (const auto& s : stream.cast<std::vector<std::string>>()) streams.push_back(stream_index(s));
    const ArrayView va = view_of(a, code_a), vb = view_of(b, code_b);
    const CompareConfig cfg = CompareConfig::make(va.dtype, vb.dtype, 0, 0, inf_equal);
    std::vector<OrderRequest> reqs;
    for (int k : streams)
        for (const auto& q : qs) reqs.push_back({k, !q.has_value(), q.value_or(0.5)});
    py::gil_scoped_release release;
    return stream_order_statistics(cfg, va, vb, reqs, threads);
}


// Histogram of one stream; `b` may be None for a histogram of `a` alone.
std::vector<std::uint64_t> histogram_of(const py::array& a, const py::object& b, int code_a, int code_b,
                                        const std::string& stream, const std::vector<double>& edges, bool inf_equal,
                                        int threads) {
    if (edges.size() < 2) throw py::value_error("a histogram needs at least two edges");
    for (std::size_t i = 1; i < edges.size(); ++i)
        if (!(edges[i] > edges[i - 1])) throw py::value_error("histogram edges must increase");
    const int k = stream_index(stream);
    const bool only_a = b.is_none();
    if (only_a && k != kA) throw py::value_error("a histogram of '" + stream + "' needs both arrays");
    const py::array b_arr = only_a ? a : py::array(b);
    if (!only_a) check_shapes(a, b_arr);
    const ArrayView va = view_of(a, code_a), vb = view_of(b_arr, only_a ? code_a : code_b);
    const CompareConfig cfg = CompareConfig::make(va.dtype, vb.dtype, 0, 0, inf_equal);
    py::gil_scoped_release release;
    return poly::histogram(cfg, va, vb, k, only_a, edges, threads);
}

// Strict base64 of a bytes-like object (base64_decode.hpp), decoded with the GIL released: its
// bytes (a bytearray), or None for what this decoder does not take (base64.b64decode(validate=True) decides).
// An ASCII str is read in place (a JSON file's payloads arrive as str: encoding each to bytes first
// cost 0.16 s of a 472 MB file's load); any other str gives None.
py::object b64decode(const py::object& data) {
    const unsigned char* text = nullptr;
    std::size_t n = 0;
    py::buffer_info info;
    if (PyUnicode_Check(data.ptr())) {
        if (!PyUnicode_IS_ASCII(data.ptr())) return py::none();
        text = static_cast<const unsigned char*>(PyUnicode_DATA(data.ptr()));
        n = static_cast<std::size_t>(PyUnicode_GET_LENGTH(data.ptr()));
    } else {
        if (!PyObject_CheckBuffer(data.ptr())) throw py::type_error("b64decode takes a str or a bytes-like object of bytes");
        info = py::reinterpret_borrow<py::buffer>(data).request();
        if (info.ndim != 1 || info.itemsize != 1) throw py::type_error("b64decode takes a str or a bytes-like object of bytes");
        text = static_cast<const unsigned char*>(info.ptr);
        n = static_cast<std::size_t>(info.size);
    }
    const std::ptrdiff_t size = poly::base64_decoded_size(text, n);
    if (size < 0) return py::none();
    // A bytearray: an array read from it is a view of it, where bytes (read-only) were copied once
    // more (0.2 s of a 472 MB results file's load).
    py::object out = py::reinterpret_steal<py::object>(PyByteArray_FromStringAndSize(nullptr, size));
    if (!out) throw py::error_already_set();
    auto* dst = reinterpret_cast<unsigned char*>(PyByteArray_AS_STRING(out.ptr()));
    bool ok = false;
    {
        py::gil_scoped_release release;
        ok = poly::base64_decode(text, n, dst);
    }
    return ok ? out : py::none();
}

}  // namespace

PYBIND11_MODULE(_native, m) {
    m.doc() = "poly's compiled hot paths: error statistics of output comparisons";
    m.def("error_stats", &error_stats, py::arg("a"), py::arg("b"), py::arg("code_a"), py::arg("code_b"),
          py::arg("atol"), py::arg("rtol"), py::arg("quantiles"), py::arg("median"), py::arg("inf_equal"),
          py::arg("threads"),
          "Every statistic of comparing a with b in one parallel pass (plus one for order statistics).");
    m.def("order_stats", &order_stats, py::arg("a"), py::arg("b"), py::arg("code_a"), py::arg("code_b"),
          py::arg("stream"), py::arg("qs"), py::arg("inf_equal") = false, py::arg("threads") = 0,
          "Exact medians/quantiles of one stream (or of a list of streams, in the same passes) by radix "
          "select, without sorting or copying.");
    m.def("histogram", &histogram_of, py::arg("a"), py::arg("b"), py::arg("code_a"), py::arg("code_b"),
          py::arg("stream"), py::arg("edges"), py::arg("inf_equal") = false, py::arg("threads") = 0,
          "Counts of one stream in bins with the given edges (numpy.histogram semantics), in one pass.");
    m.def("b64decode", &b64decode, py::arg("data"),
          "Strict base64 (the standard alphabet, '=' padding at the end only) of a bytes-like object "
          "or an ASCII str, decoded with the GIL released into a bytearray; None for anything else "
          "(base64.b64decode(validate=True) then decides).");
    m.def("key_cache_bytes", &poly::cached_key_bytes,
          "Bytes of gathered-key buffers kept for the next comparison (at most 64 MiB).");
    m.def("kernel_arch", [] { return std::string(poly::kernels().name).substr(5); },  // drop "arch_"
          "The instruction-set path of the hot loops chosen for this CPU: 'avx512' (AVX-512 F, VL, BW "
          "and DQ), 'avx2' (AVX2 + FMA) or 'generic' (POLY_NATIVE_ARCH=generic forces the portable "
          "path, POLY_NATIVE_ARCH=avx2 goes no further than AVX2).");
    m.def("usable_cpus", [](const std::optional<std::string>& cgroup_root) {
              return cgroup_root ? poly::usable_cpus(*cgroup_root) : poly::usable_cpus();
          }, py::arg("cgroup_root") = py::none(),
          "CPUs this process may keep busy: its affinity mask, limited by the cgroup CPU quota "
          "(v2 cpu.max, v1 cpu.cfs_quota_us) of the hierarchy mounted at cgroup_root "
          "(default /sys/fs/cgroup, read once).");
    m.def("worker_threads", &poly::resolve_threads, py::arg("threads"), py::arg("n"),
          "Worker threads a call on n elements runs with for a `threads` argument: 0 means "
          "usable_cpus(), at most one per 2^18 elements; requests are capped at 4 x usable_cpus(); "
          "inputs under 65536 elements use one.");
    register_cuda(m);
    m.attr("DTYPE_CODES") = py::dict(
        py::arg("bool") = 0, py::arg("int8") = 1, py::arg("int16") = 2, py::arg("int32") = 3,
        py::arg("int64") = 4, py::arg("uint8") = 5, py::arg("uint16") = 6, py::arg("uint32") = 7,
        py::arg("uint64") = 8, py::arg("float16") = 9, py::arg("bfloat16") = 10, py::arg("float32") = 11,
        py::arg("float64") = 12);
}
