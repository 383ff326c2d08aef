// The CUDA driver API, loaded at run time from libcuda.so.1, so that the extension builds and
// imports on machines without CUDA and reports CudaUnavailableError only when used there.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace poly::cuda {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUdeviceptr = unsigned long long;
using CUstream = void*;
using CUevent = void*;

// No usable driver or device: the Python side raises CudaUnavailableError.
struct Unavailable : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A driver call failed: the Python side raises CudaError.
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Driver {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDriverGetVersion)(int*);
    CUresult (*cuDeviceGetCount)(int*);
    CUresult (*cuDeviceGet)(CUdevice*, int);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
    CUresult (*cuCtxGetCurrent)(CUcontext*);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuMemAlloc)(CUdeviceptr*, std::size_t);
    CUresult (*cuMemFree)(CUdeviceptr);
    CUresult (*cuMemGetInfo)(std::size_t*, std::size_t*);
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, std::size_t);
    CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, std::size_t);
    CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, std::size_t);
    CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, std::size_t, CUstream);
    CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, std::size_t, CUstream);
    CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream);
    CUresult (*cuMemAllocHost)(void**, std::size_t);
    CUresult (*cuMemFreeHost)(void*);
    CUresult (*cuStreamCreate)(CUstream*, unsigned);
    CUresult (*cuStreamDestroy)(CUstream);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuEventCreate)(CUevent*, unsigned);
    CUresult (*cuEventDestroy)(CUevent);
    CUresult (*cuEventRecord)(CUevent, CUstream);
    CUresult (*cuEventSynchronize)(CUevent);
    CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
    CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
    CUresult (*cuGetErrorString)(CUresult, const char**);
    // the launch sequence of poly-compare's on-device statistics (kernels it loads itself)
    CUresult (*cuLaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                               void**, void**);
    CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, std::size_t, CUstream);
    CUresult (*cuGraphLaunch)(void*, CUstream);  // a CUgraphExec poly-compare instantiated
    CUresult (*cuCtxPushCurrent)(CUcontext);
    CUresult (*cuCtxPopCurrent)(CUcontext*);
    CUcontext primary = nullptr;
    int version = 0;

    // Throws Error naming `what` unless `rc` is success.
    void check(CUresult rc, const char* what) const;
    // Makes the primary context of device 0 current on this thread unless one already is
    // (CuPy and PyTorch use the same primary context, so their pointers are valid here).
    void ensure_context() const;
};

// The loaded driver; throws Unavailable when there is none (or no device).
const Driver& driver();

// True when driver() would succeed.
bool available();

// The special stream handles of __cuda_array_interface__ v3's "stream" key, which the driver API
// accepts as they are (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD).
inline CUstream legacy_stream() { return reinterpret_cast<CUstream>(std::uintptr_t{1}); }
inline CUstream per_thread_stream() { return reinterpret_cast<CUstream>(std::uintptr_t{2}); }

// Makes `consumer` (nullptr: the legacy default stream) wait for the work queued so far on
// `producer`, without blocking the host: an event recorded on the producer that the consumer
// waits on. Nothing to do when both are the same stream.
void stream_wait(CUstream producer, CUstream consumer);

}  // namespace poly::cuda
