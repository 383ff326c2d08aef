"""
The two CUDA libraries the on-device statistics use, reached through cuda-python's low-level
bindings and imported on first use: the driver (``driver_api``) and NVRTC (``nvrtc_api``); the
errors their calls raise, and ``check``, which unpacks a call's result tuple.
"""

from __future__ import annotations

from poly.core.optional_import import lazy_import

__all__ = ["GpuError", "GpuUnavailableError", "check", "compute_capability", "driver_api", "nvrtc_api"]

_GPU_INSTALL = "poly-compare[gpu]"
driver_api = lazy_import("cuda.bindings.driver", install=_GPU_INSTALL, purpose="Comparisons on the GPU")
nvrtc_api = lazy_import("cuda.bindings.nvrtc", install=_GPU_INSTALL, purpose="Comparisons on the GPU")


class GpuError(RuntimeError):
    """A CUDA driver call failed."""


class GpuUnavailableError(GpuError):
    """NVRTC or the driver cannot serve on-device statistics here (the comparison runs on the host)."""


def check(result, what: str):
    """The values of a cuda-python call's result tuple, or GpuError naming ``what`` and the error."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        raise GpuError(f"{what} failed: {getattr(err, 'name', err)}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


def compute_capability(device) -> tuple[int, int]:
    """The (major, minor) compute capability of the driver's ``device`` handle."""
    attr = driver_api.CUdevice_attribute
    major, minor = (int(check(driver_api.cuDeviceGetAttribute(which, device), "cuDeviceGetAttribute"))
                    for which in (attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                  attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
    return major, minor
