"""CUDA device memory, streams and events from the native extension `poly._native`.

The driver (libcuda.so.1) is loaded at first use, so this imports everywhere; on a machine
without a driver or GPU every constructor raises `CudaUnavailableError` (except buffers given
their own `allocator`).

Memory lives as long as anything views it: `DeviceBuffer` and `PinnedBuffer` hold their memory
through a shared `MemoryBlock`; `PinnedBuffer.array()`'s NumPy arrays and `DeviceBuffer.view()`'s
`DeviceView` hold it too, so `free()` and growth only drop the buffer's own reference.

Polygraphy's CUDA helpers (`DeviceArray`, its own `DeviceView`, `Stream`, `wrapper()`), built on
these buffers, live in `poly.core.cuda.device_arrays` (Polygraphy's path: `poly.cuda`).
"""

from poly._native import (
    CudaError,
    CudaUnavailableError,
    DeviceBuffer,
    DeviceView,
    Event,
    MemoryBlock,
    PinnedBuffer,
    Stream,
    cuda_available,
    cuda_driver_version,
    cuda_mem_get_info,
    synchronize_stream,
)

__all__ = [
    "CudaError",
    "CudaUnavailableError",
    "DeviceBuffer",
    "DeviceView",
    "Event",
    "MemoryBlock",
    "PinnedBuffer",
    "Stream",
    "cuda_available",
    "cuda_driver_version",
    "cuda_mem_get_info",
    "synchronize_stream",
]
