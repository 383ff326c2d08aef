#include "cuda_driver.hpp"

#include <dlfcn.h>

#include <mutex>

namespace poly::cuda {
namespace {

constexpr CUresult kSuccess = 0;

template <typename F>
void bind(void* lib, F& fn, const char* name, const char* fallback = nullptr) {
    void* sym = dlsym(lib, name);
    if (sym == nullptr && fallback != nullptr) sym = dlsym(lib, fallback);
    if (sym == nullptr) throw Unavailable(std::string("CUDA is unavailable: the driver lacks ") + name);
    fn = reinterpret_cast<F>(sym);
}

Driver load() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr)
        throw Unavailable("CUDA is unavailable: libcuda.so.1 could not be loaded (no NVIDIA driver on this machine)");
    Driver d{};
    bind(lib, d.cuInit, "cuInit");
    bind(lib, d.cuDriverGetVersion, "cuDriverGetVersion");
    bind(lib, d.cuDeviceGetCount, "cuDeviceGetCount");
    bind(lib, d.cuDeviceGet, "cuDeviceGet");
    bind(lib, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    bind(lib, d.cuCtxGetCurrent, "cuCtxGetCurrent");
    bind(lib, d.cuCtxSetCurrent, "cuCtxSetCurrent");
    bind(lib, d.cuMemAlloc, "cuMemAlloc_v2");
    bind(lib, d.cuMemFree, "cuMemFree_v2");
    bind(lib, d.cuMemGetInfo, "cuMemGetInfo_v2");
    bind(lib, d.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    bind(lib, d.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    bind(lib, d.cuMemcpyDtoD, "cuMemcpyDtoD_v2");
    bind(lib, d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    bind(lib, d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    bind(lib, d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
    bind(lib, d.cuMemAllocHost, "cuMemAllocHost_v2");
    bind(lib, d.cuMemFreeHost, "cuMemFreeHost");
    bind(lib, d.cuStreamCreate, "cuStreamCreate");
    bind(lib, d.cuStreamDestroy, "cuStreamDestroy_v2");
    bind(lib, d.cuStreamSynchronize, "cuStreamSynchronize");
    bind(lib, d.cuEventCreate, "cuEventCreate");
    bind(lib, d.cuEventDestroy, "cuEventDestroy_v2");
    bind(lib, d.cuEventRecord, "cuEventRecord");
    bind(lib, d.cuEventSynchronize, "cuEventSynchronize");
    bind(lib, d.cuStreamWaitEvent, "cuStreamWaitEvent");
    bind(lib, d.cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
    bind(lib, d.cuGetErrorString, "cuGetErrorString");
    bind(lib, d.cuLaunchKernel, "cuLaunchKernel");
    bind(lib, d.cuMemsetD8Async, "cuMemsetD8Async");
    bind(lib, d.cuGraphLaunch, "cuGraphLaunch");
    bind(lib, d.cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    bind(lib, d.cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    const CUresult rc = d.cuInit(0);
    int count = 0;
    if (rc != kSuccess || d.cuDeviceGetCount(&count) != kSuccess || count == 0)
        throw Unavailable("CUDA is unavailable: the driver found no usable GPU (cuInit returned " +
                          std::to_string(rc) + ")");
    d.cuDriverGetVersion(&d.version);
    CUdevice dev = 0;
    d.check(d.cuDeviceGet(&dev, 0), "cuDeviceGet");
    d.check(d.cuDevicePrimaryCtxRetain(&d.primary, dev), "cuDevicePrimaryCtxRetain");
    return d;
}

struct Loaded {
    bool ok = false;
    Driver driver{};
    std::string error;
};

const Loaded& loaded() {
    static Loaded state;
    static std::once_flag once;
    std::call_once(once, [] {
        try {
            state.driver = load();
            state.ok = true;
        } catch (const std::exception& e) {
            state.error = e.what();
        }
    });
    return state;
}

}  // namespace

void Driver::check(CUresult rc, const char* what) const {
    if (rc == kSuccess) return;
    const char* text = nullptr;
    if (cuGetErrorString != nullptr) cuGetErrorString(rc, &text);
    throw Error(std::string(what) + " failed: " + (text != nullptr ? text : "unknown error") + " (CUDA error " +
                std::to_string(rc) + ")");
}

void Driver::ensure_context() const {
    CUcontext current = nullptr;
    check(cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if (current == nullptr) check(cuCtxSetCurrent(primary), "cuCtxSetCurrent");
}

const Driver& driver() {
    const Loaded& l = loaded();
    if (!l.ok) throw Unavailable(l.error);
    l.driver.ensure_context();
    return l.driver;
}

bool available() { return loaded().ok; }

void stream_wait(CUstream producer, CUstream consumer) {
    // nullptr and CU_STREAM_LEGACY both name the legacy default stream
    auto same = [](CUstream s) { return s == nullptr ? legacy_stream() : s; };
    if (same(producer) == same(consumer)) return;
    const Driver& d = driver();
    constexpr unsigned kDisableTiming = 0x2;  // CU_EVENT_DISABLE_TIMING: the cheapest event
    CUevent event = nullptr;
    d.check(d.cuEventCreate(&event, kDisableTiming), "cuEventCreate");
    CUresult rc = d.cuEventRecord(event, producer);
    if (rc == kSuccess) rc = d.cuStreamWaitEvent(consumer, event, 0);
    d.cuEventDestroy(event);  // released by the driver once the wait is satisfied
    d.check(rc, "waiting for the producer's stream (cuEventRecord / cuStreamWaitEvent)");
}

}  // namespace poly::cuda
