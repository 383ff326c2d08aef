"""
Whether a comparison involves CUDA arrays, answered without importing ``poly.compare.stats.gpu``.

The on-device statistics (``poly.compare.stats.gpu``: kernel sources, NVRTC, the kernel cache)
cost ~30 ms of start-up, ~150 ms without compiled bytecode, which a comparison of host arrays
never needs. The comparison functions and ``error_stats`` ask here first and import the GPU path
only for a pair it can take.
"""

from __future__ import annotations

import sys
from typing import Any

from poly.core.arrays.host import is_device_array

__all__ = ["is_device_output", "may_compare_on_device"]

_DEVICE_OUTPUT_MODULE = "poly.compare.stats.gpu.device_output"


def is_device_output(obj: Any) -> bool:
    """Whether ``obj`` is a ``poly.compare.stats.gpu.DeviceOutput``: only the GPU path makes them,
    so none exists before its module is imported (which this never does)."""
    module = sys.modules.get(_DEVICE_OUTPUT_MODULE)
    return module is not None and isinstance(obj, module.DeviceOutput)


def may_compare_on_device(a: Any, b: Any) -> bool:
    """Whether the pair may be compared on its GPU: both CUDA arrays (``is_device_array``) or
    ``DeviceOutput`` s. False means the GPU path would decline it (and need not be imported)."""
    return (is_device_output(a) or is_device_array(a)) and (is_device_output(b) or is_device_array(b))
