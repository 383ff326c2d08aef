"""CUDA device memory, streams and events from the native extension `poly._native`.

The driver (libcuda.so.1) is loaded at first use, so this imports everywhere; on a machine
without a driver or GPU every constructor raises `CudaUnavailableError`.
"""

from poly._native import (
    CudaError,
    CudaUnavailableError,
    DeviceBuffer,
    Event,
    PinnedBuffer,
    Stream,
    cuda_available,
    cuda_driver_version,
    cuda_mem_get_info,
)

__all__ = [
    "CudaError",
    "CudaUnavailableError",
    "DeviceBuffer",
    "Event",
    "PinnedBuffer",
    "Stream",
    "cuda_available",
    "cuda_driver_version",
    "cuda_mem_get_info",
]
