// DeviceBuffer, Stream, Event and PinnedBuffer (SPEC 2.2) over the run-time-loaded driver.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cuda_driver.hpp"

namespace py = pybind11;
using namespace poly::cuda;

namespace {

class Stream {
public:
    Stream() {
        const Driver& d = driver();
        d.check(d.cuStreamCreate(&handle_, 0), "cuStreamCreate");
    }
    ~Stream() { release(); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    void synchronize() const { driver().check(driver().cuStreamSynchronize(get()), "cuStreamSynchronize"); }
    void release() {
        if (handle_ != nullptr && available()) driver().cuStreamDestroy(handle_);
        handle_ = nullptr;
    }
    CUstream get() const {
        if (handle_ == nullptr) throw Error("the stream was freed");
        return handle_;
    }
    std::uintptr_t ptr() const { return reinterpret_cast<std::uintptr_t>(handle_); }

private:
    CUstream handle_ = nullptr;
};

CUstream stream_of(const py::object& stream) {
    if (stream.is_none()) return nullptr;  // the legacy default stream
    return stream.cast<const Stream&>().get();
}

class Event {
public:
    Event() {
        const Driver& d = driver();
        d.check(d.cuEventCreate(&handle_, 0), "cuEventCreate");
    }
    ~Event() { release(); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;

    void record(const py::object& stream) { driver().check(driver().cuEventRecord(get(), stream_of(stream)), "cuEventRecord"); }
    void synchronize() const {
        py::gil_scoped_release release;
        driver().check(driver().cuEventSynchronize(get()), "cuEventSynchronize");
    }
    // Milliseconds from this event to `end` (both recorded and completed).
    float elapsed_ms(const Event& end) const {
        float ms = 0;
        driver().check(driver().cuEventElapsedTime(&ms, get(), end.get()), "cuEventElapsedTime");
        return ms;
    }
    void release() {
        if (handle_ != nullptr && available()) driver().cuEventDestroy(handle_);
        handle_ = nullptr;
    }
    CUevent get() const {
        if (handle_ == nullptr) throw Error("the event was freed");
        return handle_;
    }

private:
    CUevent handle_ = nullptr;
};

std::string typestr_of(const py::dtype& dt) {
    return std::string(1, dt.byteorder() == '>' ? '>' : (dt.itemsize() == 1 ? '|' : '<')) + dt.kind() +
           std::to_string(dt.itemsize());
}

// Device memory that only grows: resize() reallocates when asked for more than it holds and
// keeps the allocation when asked for less, so repeated inference with shrinking shapes does
// not thrash the allocator.
class DeviceBuffer {
public:
    explicit DeviceBuffer(std::size_t nbytes) { resize(nbytes); }
    ~DeviceBuffer() { release(); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    void resize(std::size_t nbytes) {
        if (nbytes > capacity_) {
            const Driver& d = driver();
            if (ptr_ != 0) d.check(d.cuMemFree(ptr_), "cuMemFree");
            ptr_ = 0;
            capacity_ = 0;
            d.check(d.cuMemAlloc(&ptr_, nbytes), "cuMemAlloc");
            capacity_ = nbytes;
        }
        nbytes_ = nbytes;
        shape_ = {static_cast<py::ssize_t>(nbytes)};
        typestr_ = "|u1";
    }

    void copy_from(const py::array& host, const py::object& stream) {
        const py::array src = py::array::ensure(host, py::array::c_style);
        if (!src) throw py::value_error("copy_from needs an array-like host buffer");
        resize(static_cast<std::size_t>(src.nbytes()));
        set_layout(src);
        const Driver& d = driver();
        if (nbytes_ == 0) return;
        if (stream.is_none()) {
            py::gil_scoped_release release;
            d.check(d.cuMemcpyHtoD(ptr_, src.data(), nbytes_), "cuMemcpyHtoD");
        } else {
            d.check(d.cuMemcpyHtoDAsync(ptr_, src.data(), nbytes_, stream_of(stream)), "cuMemcpyHtoDAsync");
        }
    }

    // From any object exposing __cuda_array_interface__ (CuPy, PyTorch, another DeviceBuffer):
    // a device-to-device copy, never through the host.
    void copy_from_device(const py::object& obj, const py::object& stream) {
        const py::dict cai = obj.attr("__cuda_array_interface__").cast<py::dict>();
        if (cai.contains("strides") && !cai["strides"].is_none())
            throw py::value_error("copy_from_device needs a C-contiguous device array (strides must be None)");
        const auto data = cai["data"].cast<py::tuple>();
        const auto src = data[0].cast<std::uintptr_t>();
        const auto shape = cai["shape"].cast<std::vector<py::ssize_t>>();
        const py::dtype dt(cai["typestr"].cast<std::string>());
        std::size_t n = static_cast<std::size_t>(dt.itemsize());
        for (auto s : shape) n *= static_cast<std::size_t>(s);
        resize(n);
        shape_ = shape;
        typestr_ = cai["typestr"].cast<std::string>();
        const Driver& d = driver();
        if (n == 0) return;
        if (stream.is_none()) d.check(d.cuMemcpyDtoD(ptr_, src, n), "cuMemcpyDtoD");
        else d.check(d.cuMemcpyDtoDAsync(ptr_, src, n, stream_of(stream)), "cuMemcpyDtoDAsync");
    }

    void copy_to(py::array& host, const py::object& stream) const {
        if (!(host.flags() & py::array::c_style) || !host.writeable())
            throw py::value_error("copy_to needs a writable C-contiguous host array");
        if (static_cast<std::size_t>(host.nbytes()) < nbytes_)
            throw py::value_error("copy_to: the host array holds " + std::to_string(host.nbytes()) +
                                  " bytes, the device buffer " + std::to_string(nbytes_));
        const Driver& d = driver();
        if (nbytes_ == 0) return;
        if (stream.is_none()) {
            void* dst = host.mutable_data();
            py::gil_scoped_release release;
            d.check(d.cuMemcpyDtoH(dst, ptr_, nbytes_), "cuMemcpyDtoH");
        } else {
            d.check(d.cuMemcpyDtoHAsync(host.mutable_data(), ptr_, nbytes_, stream_of(stream)), "cuMemcpyDtoHAsync");
        }
    }

    py::array numpy(const py::object& stream) const {
        py::array out(py::dtype(typestr_), shape_);
        copy_to(out, stream);
        if (!stream.is_none()) stream.cast<const Stream&>().synchronize();
        return out;
    }

    void set_layout(const py::array& a) {
        shape_.assign(a.shape(), a.shape() + a.ndim());
        typestr_ = typestr_of(a.dtype());
    }

    void release() {
        if (ptr_ != 0 && available()) driver().cuMemFree(ptr_);
        ptr_ = 0;
        capacity_ = nbytes_ = 0;
        shape_ = {0};
    }

    py::dict interface() const {
        py::dict d;
        d["shape"] = py::tuple(py::cast(shape_));
        d["typestr"] = typestr_;
        d["data"] = py::make_tuple(static_cast<std::uintptr_t>(ptr_), false);
        d["strides"] = py::none();
        d["version"] = 3;
        return d;
    }

    std::uintptr_t ptr() const { return static_cast<std::uintptr_t>(ptr_); }
    std::size_t nbytes() const { return nbytes_; }
    std::size_t capacity() const { return capacity_; }
    py::tuple shape() const { return py::tuple(py::cast(shape_)); }
    py::dtype dtype() const { return py::dtype(typestr_); }

    // Describes the contents as `shape` of `dtype` (the bytes must fit what is allocated).
    void view_as(const std::vector<py::ssize_t>& shape, const py::dtype& dt) {
        std::size_t n = static_cast<std::size_t>(dt.itemsize());
        for (auto s : shape) n *= static_cast<std::size_t>(s);
        if (n > capacity_) resize(n);
        nbytes_ = n;
        shape_ = shape;
        typestr_ = typestr_of(dt);
    }

private:
    CUdeviceptr ptr_ = 0;
    std::size_t capacity_ = 0, nbytes_ = 0;
    std::vector<py::ssize_t> shape_{0};
    std::string typestr_ = "|u1";
};

// Page-locked host memory: host<->device copies from it are truly asynchronous.
class PinnedBuffer {
public:
    explicit PinnedBuffer(std::size_t nbytes) : nbytes_(nbytes) {
        const Driver& d = driver();
        d.check(d.cuMemAllocHost(&ptr_, nbytes ? nbytes : 1), "cuMemAllocHost");
    }
    ~PinnedBuffer() { release(); }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;

    void release() {
        if (ptr_ != nullptr && available()) driver().cuMemFreeHost(ptr_);
        ptr_ = nullptr;
        nbytes_ = 0;
    }
    void* data() const {
        if (ptr_ == nullptr) throw Error("the pinned buffer was freed");
        return ptr_;
    }
    std::size_t nbytes() const { return nbytes_; }

private:
    void* ptr_ = nullptr;
    std::size_t nbytes_;
};

}  // namespace

void register_cuda(py::module_& m) {
    static py::exception<Unavailable> unavailable(m, "CudaUnavailableError", PyExc_RuntimeError);
    static py::exception<Error> cuda_error(m, "CudaError", PyExc_RuntimeError);
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const Unavailable& e) {
            PyErr_SetString(unavailable.ptr(), e.what());
        } catch (const Error& e) {
            PyErr_SetString(cuda_error.ptr(), e.what());
        }
    });

    m.def("cuda_available", &available, "True when a CUDA driver and a GPU can be used.");
    m.def("cuda_driver_version", [] { return driver().version; }, "The driver's CUDA version (e.g. 13000).");
    m.def("cuda_mem_get_info", [] {
        std::size_t free_b = 0, total = 0;
        driver().check(driver().cuMemGetInfo(&free_b, &total), "cuMemGetInfo");
        return py::make_tuple(free_b, total);
    }, "(free, total) bytes of device memory.");

    py::class_<Stream>(m, "Stream", "A CUDA stream (cuStreamCreate).")
        .def(py::init<>())
        .def("synchronize", &Stream::synchronize, py::call_guard<py::gil_scoped_release>())
        .def("free", &Stream::release)
        .def_property_readonly("ptr", &Stream::ptr);

    py::class_<Event>(m, "Event", "A CUDA event, for ordering and timing work on streams.")
        .def(py::init<>())
        .def("record", &Event::record, py::arg("stream") = py::none())
        .def("synchronize", &Event::synchronize)
        .def("elapsed_time", &Event::elapsed_ms, py::arg("end"), "Milliseconds from this event to `end`.")
        .def("free", &Event::release);

    py::class_<DeviceBuffer>(m, "DeviceBuffer",
                             "Device memory that grows on demand, with host and device copies and "
                             "__cuda_array_interface__.")
        .def(py::init<std::size_t>(), py::arg("nbytes") = 0)
        .def("resize", &DeviceBuffer::resize, py::arg("nbytes"), "Holds at least `nbytes` (never shrinks).")
        .def("copy_from", &DeviceBuffer::copy_from, py::arg("host"), py::arg("stream") = py::none(),
             "Copies a host array in (asynchronously on `stream`); takes its shape and dtype.")
        .def("copy_from_device", &DeviceBuffer::copy_from_device, py::arg("array"), py::arg("stream") = py::none(),
             "Copies an object with __cuda_array_interface__ in, device to device.")
        .def("copy_to", &DeviceBuffer::copy_to, py::arg("host"), py::arg("stream") = py::none(),
             "Copies the contents into a C-contiguous host array.")
        .def("numpy", &DeviceBuffer::numpy, py::arg("stream") = py::none(), "The contents as a new NumPy array.")
        .def("view_as", [](DeviceBuffer& b, const std::vector<py::ssize_t>& shape, const py::object& dtype_like) {
            b.view_as(shape, py::dtype::from_args(dtype_like));
        }, py::arg("shape"), py::arg("dtype"), "Describes the contents as `shape` of `dtype`, growing if needed.")
        .def("free", &DeviceBuffer::release)
        .def_property_readonly("ptr", &DeviceBuffer::ptr)
        .def_property_readonly("nbytes", &DeviceBuffer::nbytes)
        .def_property_readonly("capacity", &DeviceBuffer::capacity)
        .def_property_readonly("shape", &DeviceBuffer::shape)
        .def_property_readonly("dtype", &DeviceBuffer::dtype)
        .def_property_readonly("__cuda_array_interface__", &DeviceBuffer::interface);

    py::class_<PinnedBuffer>(m, "PinnedBuffer", "Page-locked host memory (cuMemAllocHost).")
        .def(py::init<std::size_t>(), py::arg("nbytes"))
        .def("array", [](py::object self, const py::object& dtype_like, const std::vector<py::ssize_t>& shape) {
            const PinnedBuffer& buf = self.cast<const PinnedBuffer&>();
            const py::dtype dt = py::dtype::from_args(dtype_like);
            std::size_t n = static_cast<std::size_t>(dt.itemsize());
            for (auto s : shape) n *= static_cast<std::size_t>(s);
            if (n > buf.nbytes()) throw py::value_error("the pinned buffer is too small for that array");
            return py::array(dt, shape, buf.data(), self);  // a view that keeps the buffer alive
        }, py::arg("dtype"), py::arg("shape"))
        .def("free", &PinnedBuffer::release)
        .def_property_readonly("nbytes", &PinnedBuffer::nbytes);
}
