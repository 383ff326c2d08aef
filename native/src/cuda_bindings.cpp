// DeviceBuffer, Stream, Event and PinnedBuffer (SPEC 2.2) over the run-time-loaded driver.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda_driver.hpp"
#include "memory_block.hpp"

namespace py = pybind11;
using namespace poly::cuda;

namespace {

// The CUstream of a Stream, destroyed when its last holder lets go: the Stream itself (until
// free()) and any buffer whose last write was queued on it (the "stream" its
// __cuda_array_interface__ names must stay valid while a consumer may read that key).
class StreamHandle {
public:
    StreamHandle() {
        const Driver& d = driver();
        d.check(d.cuStreamCreate(&handle_, 0), "cuStreamCreate");
    }
    ~StreamHandle() {
        if (handle_ != nullptr && available()) driver().cuStreamDestroy(handle_);
    }
    StreamHandle(const StreamHandle&) = delete;
    StreamHandle& operator=(const StreamHandle&) = delete;
    CUstream get() const { return handle_; }

private:
    CUstream handle_ = nullptr;
};

class Stream {
public:
    Stream() : handle_(std::make_shared<StreamHandle>()) {}

    void synchronize() const { driver().check(driver().cuStreamSynchronize(get()), "cuStreamSynchronize"); }
    // Makes this stream wait (on the device, the host goes on) for the work queued so far on
    // `producer`, a stream handle as __cuda_array_interface__ gives it (1: the legacy default
    // stream, 2: the per-thread default stream, else a cudaStream_t).
    void wait_for(std::uintptr_t producer) const { stream_wait(reinterpret_cast<CUstream>(producer), get()); }
    void release() { handle_.reset(); }
    CUstream get() const {
        if (!handle_) throw Error("the stream was freed");
        return handle_->get();
    }
    const std::shared_ptr<StreamHandle>& shared() const { return handle_; }
    std::uintptr_t ptr() const { return handle_ ? reinterpret_cast<std::uintptr_t>(handle_->get()) : 0; }

private:
    std::shared_ptr<StreamHandle> handle_;
};

CUstream stream_of(const py::object& stream) {
    if (stream.is_none()) return nullptr;  // the legacy default stream
    return stream.cast<const Stream&>().get();
}

// What a reader of some device memory must wait for: the stream the last write to it was
// queued on, as __cuda_array_interface__ v3's "stream" key says it (None: nothing pending).
struct Producer {
    std::shared_ptr<StreamHandle> stream;  // a poly Stream
    bool legacy = false;                   // the legacy default stream (copies given no stream)

    static Producer of(const py::object& stream) {
        Producer p;
        if (stream.is_none()) p.legacy = true;
        else p.stream = stream.cast<const Stream&>().shared();
        return p;
    }
    CUstream handle() const { return stream ? stream->get() : (legacy ? legacy_stream() : nullptr); }
    bool pending() const { return stream || legacy; }
    py::object interface_value() const {
        if (!pending()) return py::none();
        return py::int_(reinterpret_cast<std::uintptr_t>(handle()));
    }
    // Orders a read queued on `consumer` after the write.
    void wait(const py::object& consumer) const {
        if (pending()) stream_wait(handle(), stream_of(consumer));
    }
};

// The stream a __cuda_array_interface__ asks its consumers to synchronise with, or nullptr
// for none. Version 3 allows None, 1 (legacy default stream), 2 (per-thread default stream) or
// a cudaStream_t, and disallows 0 (ambiguous between the two default streams).
bool interface_stream(const py::dict& cai, CUstream& out) {
    if (!cai.contains("stream") || cai["stream"].is_none()) return false;
    const py::object value = cai["stream"];
    if (!py::isinstance<py::int_>(value))
        throw py::value_error("__cuda_array_interface__ 'stream' must be None or an int, got " +
                              std::string(py::str(value)));
    const auto handle = value.cast<std::uintptr_t>();
    if (handle == 0)
        throw py::value_error("__cuda_array_interface__ 'stream' is 0, which version 3 of the interface disallows "
                              "(1 names the legacy default stream, 2 the per-thread default stream)");
    out = reinterpret_cast<CUstream>(handle);
    return true;
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

// -- allocators -------------------------------------------------------------------------------

class DeviceAllocator : public Allocator {
public:
    std::uintptr_t allocate(std::size_t nbytes) override {
        const Driver& d = driver();
        CUdeviceptr ptr = 0;
        d.check(d.cuMemAlloc(&ptr, nbytes), "cuMemAlloc");
        return static_cast<std::uintptr_t>(ptr);
    }
    void deallocate(std::uintptr_t ptr) noexcept override {
        if (available()) driver().cuMemFree(static_cast<CUdeviceptr>(ptr));
    }
};

class PinnedAllocator : public Allocator {
public:
    std::uintptr_t allocate(std::size_t nbytes) override {
        const Driver& d = driver();
        void* ptr = nullptr;
        d.check(d.cuMemAllocHost(&ptr, nbytes), "cuMemAllocHost");
        return reinterpret_cast<std::uintptr_t>(ptr);
    }
    void deallocate(std::uintptr_t ptr) noexcept override {
        if (available()) driver().cuMemFreeHost(reinterpret_cast<void*>(ptr));
    }
};

// An allocator given from Python: an object with alloc(nbytes) -> int and free(ptr).
class PythonAllocator : public Allocator {
public:
    explicit PythonAllocator(py::object obj) : obj_(std::move(obj)) {}
    ~PythonAllocator() override {
        if (!Py_IsInitialized()) {
            obj_.release();  // the interpreter is gone: nothing left to decref
            return;
        }
        py::gil_scoped_acquire gil;
        obj_ = py::object();
    }
    std::uintptr_t allocate(std::size_t nbytes) override {
        py::gil_scoped_acquire gil;
        return obj_.attr("alloc")(nbytes).cast<std::uintptr_t>();
    }
    void deallocate(std::uintptr_t ptr) noexcept override {
        if (!Py_IsInitialized()) return;
        py::gil_scoped_acquire gil;
        try {
            obj_.attr("free")(ptr);
        } catch (py::error_already_set& err) {
            err.discard_as_unraisable("poly allocator free()");
        } catch (...) {
        }
    }

private:
    py::object obj_;
};

std::shared_ptr<Allocator> allocator_from(const py::object& obj, bool pinned) {
    static const auto device = std::make_shared<DeviceAllocator>();
    static const auto host = std::make_shared<PinnedAllocator>();
    if (obj.is_none()) return pinned ? std::static_pointer_cast<Allocator>(host) : std::static_pointer_cast<Allocator>(device);
    if (!py::hasattr(obj, "alloc") || !py::hasattr(obj, "free"))
        throw py::type_error("an allocator needs alloc(nbytes) -> int and free(ptr) methods");
    return std::make_shared<PythonAllocator>(obj);
}

// -- device memory ----------------------------------------------------------------------------

std::string typestr_of(const py::dtype& dt) {
    return std::string(1, dt.byteorder() == '>' ? '>' : (dt.itemsize() == 1 ? '|' : '<')) + dt.kind() +
           std::to_string(dt.itemsize());
}

std::size_t nbytes_of(const std::vector<py::ssize_t>& shape, const py::dtype& dt) {
    std::size_t n = static_cast<std::size_t>(dt.itemsize());
    for (auto s : shape) n *= static_cast<std::size_t>(s);
    return n;
}

// Copies `nbytes` at device address `src` into a host array (asynchronously on `stream`), after
// the work of the stream that last wrote them.
void device_to_host(std::uintptr_t src, std::size_t nbytes, const Producer& producer, py::array& host,
                    const py::object& stream) {
    if (!(host.flags() & py::array::c_style) || !host.writeable())
        throw py::value_error("copy_to needs a writable C-contiguous host array");
    if (static_cast<std::size_t>(host.nbytes()) < nbytes)
        throw py::value_error("copy_to: the host array holds " + std::to_string(host.nbytes()) +
                              " bytes, the device buffer " + std::to_string(nbytes));
    if (nbytes == 0) return;
    producer.wait(stream);
    const Driver& d = driver();
    if (stream.is_none()) {
        void* dst = host.mutable_data();
        py::gil_scoped_release release;
        d.check(d.cuMemcpyDtoH(dst, static_cast<CUdeviceptr>(src), nbytes), "cuMemcpyDtoH");
    } else {
        d.check(d.cuMemcpyDtoHAsync(host.mutable_data(), static_cast<CUdeviceptr>(src), nbytes, stream_of(stream)),
                "cuMemcpyDtoHAsync");
    }
}

// The device array at `src` as a new host array of `shape` and `typestr`, complete on return.
py::array device_to_new_host(std::uintptr_t src, std::size_t nbytes, const std::vector<py::ssize_t>& shape,
                             const std::string& typestr, const Producer& producer, const py::object& stream) {
    py::array out(py::dtype(typestr), shape);
    device_to_host(src, nbytes, producer, out, stream);
    if (!stream.is_none()) stream.cast<const Stream&>().synchronize();
    return out;
}

py::dict array_interface(std::uintptr_t ptr, const std::vector<py::ssize_t>& shape, const std::string& typestr,
                         const Producer& producer) {
    py::dict d;
    d["shape"] = py::tuple(py::cast(shape));
    d["typestr"] = typestr;
    d["data"] = py::make_tuple(ptr, false);
    d["strides"] = py::none();
    d["stream"] = producer.interface_value();
    d["version"] = 3;
    return d;
}

// A fixed-shape window on a buffer's memory that keeps the memory alive (the buffer may be
// freed or grow meanwhile): what TrtRunner returns for outputs left on the device, and what
// __cuda_array_interface__ consumers (CuPy, PyTorch) then hold on to.
class DeviceView {
public:
    DeviceView(std::shared_ptr<MemoryBlock> block, std::size_t nbytes, std::vector<py::ssize_t> shape,
               std::string typestr, Producer producer)
        : block_(std::move(block)), nbytes_(nbytes), shape_(std::move(shape)), typestr_(std::move(typestr)),
          producer_(std::move(producer)) {}

    std::uintptr_t ptr() const { return block_ ? block_->ptr() : 0; }
    std::size_t nbytes() const { return nbytes_; }
    py::tuple shape() const { return py::tuple(py::cast(shape_)); }
    py::dtype dtype() const { return py::dtype(typestr_); }
    py::dict interface() const { return array_interface(ptr(), shape_, typestr_, producer_); }
    void copy_to(py::array& host, const py::object& stream) const {
        device_to_host(ptr(), nbytes_, producer_, host, stream);
    }
    py::array numpy(const py::object& stream) const {
        return device_to_new_host(ptr(), nbytes_, shape_, typestr_, producer_, stream);
    }
    py::object memory() const { return block_ ? py::cast(block_) : py::none(); }

private:
    std::shared_ptr<MemoryBlock> block_;
    std::size_t nbytes_;
    std::vector<py::ssize_t> shape_;
    std::string typestr_;
    Producer producer_;
};

// Device memory that only grows: resize() allocates a new block when asked for more than it
// holds and keeps the block when asked for less, so repeated inference with shrinking shapes
// does not thrash the allocator. Growing or free() drops the buffer's reference to its block;
// views of the old block keep it until they go.
class DeviceBuffer {
public:
    DeviceBuffer(std::size_t nbytes, std::shared_ptr<Allocator> allocator) : allocator_(std::move(allocator)) {
        resize(nbytes);
    }

    void resize(std::size_t nbytes) {
        if (nbytes > capacity()) {
            block_.reset();  // freed now unless a view holds it: the peak stays low when none does
            block_ = std::make_shared<MemoryBlock>(allocator_, nbytes);
            producer_ = Producer();
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
        if (nbytes_ == 0) return;
        const Driver& d = driver();
        if (stream.is_none()) {
            py::gil_scoped_release release;
            d.check(d.cuMemcpyHtoD(dptr(), src.data(), nbytes_), "cuMemcpyHtoD");
        } else {
            d.check(d.cuMemcpyHtoDAsync(dptr(), src.data(), nbytes_, stream_of(stream)), "cuMemcpyHtoDAsync");
        }
        producer_ = Producer::of(stream);
    }

    // From any object exposing __cuda_array_interface__ (CuPy, PyTorch, another DeviceBuffer):
    // a device-to-device copy, never through the host, queued after the work the producer's
    // "stream" still has pending on the source.
    void copy_from_device(const py::object& obj, const py::object& stream) {
        const py::dict cai = obj.attr("__cuda_array_interface__").cast<py::dict>();
        if (cai.contains("strides") && !cai["strides"].is_none())
            throw py::value_error("copy_from_device needs a C-contiguous device array (strides must be None)");
        CUstream producer = nullptr;
        const bool wait = interface_stream(cai, producer);
        const auto data = cai["data"].cast<py::tuple>();
        const auto src = data[0].cast<std::uintptr_t>();
        const auto shape = cai["shape"].cast<std::vector<py::ssize_t>>();
        const py::dtype dt(cai["typestr"].cast<std::string>());
        const std::size_t n = nbytes_of(shape, dt);
        resize(n);
        shape_ = shape;
        typestr_ = cai["typestr"].cast<std::string>();
        if (n == 0) return;
        if (wait) stream_wait(producer, stream_of(stream));
        const Driver& d = driver();
        if (stream.is_none()) d.check(d.cuMemcpyDtoD(dptr(), src, n), "cuMemcpyDtoD");
        else d.check(d.cuMemcpyDtoDAsync(dptr(), src, n, stream_of(stream)), "cuMemcpyDtoDAsync");
        producer_ = Producer::of(stream);
    }

    void copy_to(py::array& host, const py::object& stream) const {
        device_to_host(ptr(), nbytes_, producer_, host, stream);
    }

    py::array numpy(const py::object& stream) const {
        return device_to_new_host(ptr(), nbytes_, shape_, typestr_, producer_, stream);
    }

    void set_layout(const py::array& a) {
        shape_.assign(a.shape(), a.shape() + a.ndim());
        typestr_ = typestr_of(a.dtype());
    }

    void release() {
        block_.reset();
        producer_ = Producer();
        nbytes_ = 0;
        shape_ = {0};
    }

    // The current contents as a DeviceView that keeps this memory alive.
    DeviceView view() const { return DeviceView(block_, nbytes_, shape_, typestr_, producer_); }

    py::dict interface() const { return array_interface(ptr(), shape_, typestr_, producer_); }

    std::uintptr_t ptr() const { return block_ ? block_->ptr() : 0; }
    std::size_t nbytes() const { return nbytes_; }
    std::size_t capacity() const { return block_ ? block_->nbytes() : 0; }
    py::tuple shape() const { return py::tuple(py::cast(shape_)); }
    py::dtype dtype() const { return py::dtype(typestr_); }
    // Views (or other holders) of the current block besides this buffer.
    long outside_references() const { return block_ ? static_cast<long>(block_.use_count()) - 1 : 0; }

    // Describes the contents as `shape` of `dtype` (growing when the bytes do not fit).
    void view_as(const std::vector<py::ssize_t>& shape, const py::dtype& dt) {
        const std::size_t n = nbytes_of(shape, dt);
        if (n > capacity()) resize(n);
        nbytes_ = n;
        shape_ = shape;
        typestr_ = typestr_of(dt);
    }

private:
    CUdeviceptr dptr() const { return static_cast<CUdeviceptr>(ptr()); }

    std::shared_ptr<Allocator> allocator_;
    std::shared_ptr<MemoryBlock> block_;
    std::size_t nbytes_ = 0;
    std::vector<py::ssize_t> shape_{0};
    std::string typestr_ = "|u1";
    Producer producer_;
};

// Page-locked host memory: host<->device copies from it are truly asynchronous. NumPy arrays
// from array() hold its block, so they stay valid after free().
class PinnedBuffer {
public:
    PinnedBuffer(std::size_t nbytes, const std::shared_ptr<Allocator>& allocator)
        : block_(std::make_shared<MemoryBlock>(allocator, nbytes ? nbytes : 1)), nbytes_(nbytes) {}

    void release() {
        block_.reset();
        nbytes_ = 0;
    }
    const std::shared_ptr<MemoryBlock>& block() const {
        if (!block_) throw Error("the pinned buffer was freed");
        return block_;
    }
    std::size_t nbytes() const { return nbytes_; }
    long outside_references() const { return block_ ? static_cast<long>(block_.use_count()) - 1 : 0; }

private:
    std::shared_ptr<MemoryBlock> block_;
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

    m.def("synchronize_stream", [](std::uintptr_t handle) {
        py::gil_scoped_release release;
        driver().check(driver().cuStreamSynchronize(reinterpret_cast<CUstream>(handle)), "cuStreamSynchronize");
    }, py::arg("handle"),
          "Waits on the host for the work queued on a stream given by handle, as "
          "__cuda_array_interface__'s 'stream' gives it (1: legacy default stream, 2: per-thread default stream).");

    // The launch sequence of poly-compare's on-device statistics, a driver call each with no
    // Python object made for its arguments (through cuda-python, each cost 5-10 us: a comparison
    // of one output makes about a dozen). Handles and addresses are plain integers.
    m.def("cuda_push_context", [](std::uintptr_t context) {
        const Driver& d = driver();
        d.check(d.cuCtxPushCurrent(reinterpret_cast<CUcontext>(context)), "cuCtxPushCurrent");
    }, py::arg("context"), "Makes the CUDA context with this handle current on this thread (cuCtxPushCurrent).");
    m.def("cuda_pop_context", [] {
        const Driver& d = driver();
        CUcontext popped = nullptr;
        d.check(d.cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
    }, "Restores the context current before the last cuda_push_context on this thread.");
    m.def("cuda_launch", [](std::uintptr_t function, unsigned grid, unsigned block, unsigned shared,
                            std::uintptr_t stream, const py::buffer& params) {
        const py::buffer_info info = params.request();
        void* args[1] = {info.ptr};  // the kernel's one parameter, passed by value: its bytes are copied at the launch
        const Driver& d = driver();
        d.check(d.cuLaunchKernel(reinterpret_cast<void*>(function), grid, 1, 1, block, 1, 1, shared,
                                 reinterpret_cast<CUstream>(stream), args, nullptr), "cuLaunchKernel");
    }, py::arg("function"), py::arg("grid"), py::arg("block"), py::arg("shared"), py::arg("stream"), py::arg("params"),
          "Launches the kernel with this CUfunction handle on a 1-D grid, its single parameter the bytes of `params`.");
    m.def("cuda_graph_launch", [](std::uintptr_t graph_exec, std::uintptr_t stream) {
        const Driver& d = driver();
        d.check(d.cuGraphLaunch(reinterpret_cast<void*>(graph_exec), reinterpret_cast<CUstream>(stream)), "cuGraphLaunch");
    }, py::arg("graph_exec"), py::arg("stream"),
          "Launches the instantiated CUDA graph with this CUgraphExec handle on a stream, in stream order.");
    m.def("cuda_memset_async", [](std::uintptr_t ptr, std::size_t nbytes, std::uintptr_t stream) {
        const Driver& d = driver();
        d.check(d.cuMemsetD8Async(static_cast<CUdeviceptr>(ptr), 0, nbytes, reinterpret_cast<CUstream>(stream)),
                "cuMemsetD8Async");
    }, py::arg("ptr"), py::arg("nbytes"), py::arg("stream"), "Zeroes `nbytes` of device memory in stream order.");
    m.def("cuda_copy_to_host_async", [](const py::buffer& host, std::uintptr_t ptr, std::uintptr_t stream) {
        const py::buffer_info info = host.request(true);
        const auto nbytes = static_cast<std::size_t>(info.size * info.itemsize);
        if (nbytes == 0) return;
        const Driver& d = driver();
        py::gil_scoped_release release;  // into pageable memory the call returns once the copy is done: a wait
        d.check(d.cuMemcpyDtoHAsync(info.ptr, static_cast<CUdeviceptr>(ptr), nbytes, reinterpret_cast<CUstream>(stream)),
                "cuMemcpyDtoHAsync");
    }, py::arg("host"), py::arg("ptr"), py::arg("stream"),
          "Queues the copy of len(host) bytes from device address `ptr` into the writable buffer `host`; it is "
          "complete once the stream is synchronized.");
    m.def("cuda_copy_to_device_async", [](std::uintptr_t ptr, const py::buffer& host, std::uintptr_t stream) {
        const py::buffer_info info = host.request();
        const auto nbytes = static_cast<std::size_t>(info.size * info.itemsize);
        if (nbytes == 0) return;
        const Driver& d = driver();
        d.check(d.cuMemcpyHtoDAsync(static_cast<CUdeviceptr>(ptr), info.ptr, nbytes, reinterpret_cast<CUstream>(stream)),
                "cuMemcpyHtoDAsync");
    }, py::arg("ptr"), py::arg("host"), py::arg("stream"),
          "Queues the copy of the buffer `host` to device address `ptr` (pageable memory is staged before this returns).");

    py::class_<Stream>(m, "Stream", "A CUDA stream (cuStreamCreate).")
        .def(py::init<>())
        .def("synchronize", &Stream::synchronize, py::call_guard<py::gil_scoped_release>())
        .def("wait_for", &Stream::wait_for, py::arg("producer"),
             "Makes this stream wait, on the device, for the work queued so far on the stream with handle "
             "`producer` (1: legacy default stream, 2: per-thread default stream, else a cudaStream_t).")
        .def("free", &Stream::release)
        .def_property_readonly("ptr", &Stream::ptr);

    py::class_<Event>(m, "Event", "A CUDA event, for ordering and timing work on streams.")
        .def(py::init<>())
        .def("record", &Event::record, py::arg("stream") = py::none())
        .def("synchronize", &Event::synchronize)
        .def("elapsed_time", &Event::elapsed_ms, py::arg("end"), "Milliseconds from this event to `end`.")
        .def("free", &Event::release);

    py::class_<MemoryBlock, std::shared_ptr<MemoryBlock>>(
        m, "MemoryBlock",
        "One allocation, shared by the buffer that made it and by every view of it; returned to its "
        "allocator when the last of them goes (the base object of PinnedBuffer.array()'s arrays).")
        .def_property_readonly("ptr", &MemoryBlock::ptr)
        .def_property_readonly("nbytes", &MemoryBlock::nbytes);

    py::class_<DeviceView>(m, "DeviceView",
                           "A read-only description of device memory (pointer, shape, dtype) that keeps the "
                           "memory alive: valid after the buffer it came from is freed or grows.")
        .def("copy_to", &DeviceView::copy_to, py::arg("host"), py::arg("stream") = py::none(),
             "Copies the contents into a C-contiguous host array.")
        .def("numpy", &DeviceView::numpy, py::arg("stream") = py::none(), "The contents as a new NumPy array.")
        .def_property_readonly("ptr", &DeviceView::ptr)
        .def_property_readonly("nbytes", &DeviceView::nbytes)
        .def_property_readonly("shape", &DeviceView::shape)
        .def_property_readonly("dtype", &DeviceView::dtype)
        .def_property_readonly("memory", &DeviceView::memory, "The MemoryBlock held (None for an empty view).")
        .def_property_readonly("__cuda_array_interface__", &DeviceView::interface)
        .def("__repr__", [](const DeviceView& v) {
            return "DeviceView(ptr=" + std::to_string(v.ptr()) + ", shape=" + std::string(py::str(v.shape())) +
                   ", dtype=" + std::string(py::str(v.dtype())) + ")";
        });

    py::class_<DeviceBuffer>(m, "DeviceBuffer",
                             "Device memory that grows on demand, with host and device copies and "
                             "__cuda_array_interface__.")
        .def(py::init([](std::size_t nbytes, const py::object& allocator) {
                 return std::make_unique<DeviceBuffer>(nbytes, allocator_from(allocator, false));
             }),
             py::arg("nbytes") = 0, py::arg("allocator") = py::none(),
             "`allocator`: None for CUDA device memory, or an object with alloc(nbytes) -> int and free(ptr).")
        .def("resize", &DeviceBuffer::resize, py::arg("nbytes"), "Holds at least `nbytes` (never shrinks).")
        .def("copy_from", &DeviceBuffer::copy_from, py::arg("host"), py::arg("stream") = py::none(),
             "Copies a host array in (asynchronously on `stream`); takes its shape and dtype.")
        .def("copy_from_device", &DeviceBuffer::copy_from_device, py::arg("array"), py::arg("stream") = py::none(),
             "Copies an object with __cuda_array_interface__ in, device to device, after the work pending on "
             "the stream its interface names.")
        .def("copy_to", &DeviceBuffer::copy_to, py::arg("host"), py::arg("stream") = py::none(),
             "Copies the contents into a C-contiguous host array.")
        .def("numpy", &DeviceBuffer::numpy, py::arg("stream") = py::none(), "The contents as a new NumPy array.")
        .def("view_as", [](DeviceBuffer& b, const std::vector<py::ssize_t>& shape, const py::object& dtype_like) {
            b.view_as(shape, py::dtype::from_args(dtype_like));
        }, py::arg("shape"), py::arg("dtype"), "Describes the contents as `shape` of `dtype`, growing if needed.")
        .def("view", &DeviceBuffer::view,
             "The current contents as a DeviceView, which keeps this memory alive after free() or growth.")
        .def("free", &DeviceBuffer::release,
             "Drops the buffer's memory; views of it keep it until they go.")
        .def_property_readonly("ptr", &DeviceBuffer::ptr)
        .def_property_readonly("nbytes", &DeviceBuffer::nbytes)
        .def_property_readonly("capacity", &DeviceBuffer::capacity)
        .def_property_readonly("shape", &DeviceBuffer::shape)
        .def_property_readonly("dtype", &DeviceBuffer::dtype)
        .def_property_readonly("outside_references", &DeviceBuffer::outside_references,
                               "How many views (or other holders) share the current memory.")
        .def_property_readonly("__cuda_array_interface__", &DeviceBuffer::interface);

    py::class_<PinnedBuffer>(m, "PinnedBuffer", "Page-locked host memory (cuMemAllocHost).")
        .def(py::init([](std::size_t nbytes, const py::object& allocator) {
                 return std::make_unique<PinnedBuffer>(nbytes, allocator_from(allocator, true));
             }),
             py::arg("nbytes"), py::arg("allocator") = py::none(),
             "`allocator`: None for cuMemAllocHost, or an object with alloc(nbytes) -> int and free(ptr).")
        .def("array", [](const PinnedBuffer& buf, const py::object& dtype_like, const std::vector<py::ssize_t>& shape) {
            const std::shared_ptr<MemoryBlock>& block = buf.block();
            const py::dtype dt = py::dtype::from_args(dtype_like);
            if (nbytes_of(shape, dt) > buf.nbytes()) throw py::value_error("the pinned buffer is too small for that array");
            // the array's base object holds the block: the memory outlives free() and the buffer
            return py::array(dt, shape, reinterpret_cast<void*>(block->ptr()), py::cast(block));
        }, py::arg("dtype"), py::arg("shape"))
        .def("free", &PinnedBuffer::release, "Drops the buffer's memory; arrays viewing it keep it until they go.")
        .def_property_readonly("nbytes", &PinnedBuffer::nbytes)
        .def_property_readonly("outside_references", &PinnedBuffer::outside_references,
                               "How many arrays (or other holders) share the memory.");
}
