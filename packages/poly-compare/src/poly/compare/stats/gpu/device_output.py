"""
``DeviceOutput``: a runner's CUDA output as comparison functions hold it.

Comparison functions used to copy every output to the host first. A CUDA output (when both
outputs of a pair are CUDA arrays and on-device statistics are available) is now wrapped
instead: it has the ``shape``, ``size``, ``ndim`` and NumPy ``dtype`` the comparison's logging
and checks read, hands its CUDA array to ``error_stats`` (which computes on the device), and is
copied to the host only where host data is really needed (``numpy.asarray``: the rare
Polygraphy-precision recheck next to a tolerance, printed values, plots).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from poly.compare.stats.gpu.device_run import DeviceOperand
from poly.compare.stats.gpu.dispatch import cuda_operand, device_count_zeros, gpu_ready
from poly.core.arrays.host import host_array
from poly.core.optional_import import lazy_import

__all__ = ["DeviceOutput", "device_outputs", "has_zero"]

ml_dtypes = lazy_import("ml_dtypes", purpose="bfloat16 outputs")

_NAMES = {0: "bool", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "uint8", 6: "uint16", 7: "uint32",
          8: "uint64", 9: "float16", 11: "float32", 12: "float64"}


class DeviceOutput:
    """A CUDA array kept on its device; ``numpy.asarray`` copies it to the host (once)."""

    __slots__ = ("device_array", "operand", "shape", "dtype", "_host")

    def __init__(self, array: Any, operand: DeviceOperand):
        self.device_array = array
        self.operand = operand  # its description, read once (``cuda_operand`` hands it back)
        self.shape = tuple(operand.shape)
        self.dtype = np.dtype(ml_dtypes.bfloat16) if operand.code == 10 else np.dtype(_NAMES[operand.code])
        self._host: np.ndarray | None = None

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def host(self) -> np.ndarray:
        """The data as a NumPy array (copied from the device on first use)."""
        if self._host is None:
            self._host = host_array(self.device_array)
        return self._host

    def __array__(self, dtype=None, copy=None):
        arr = self.host()
        return arr if dtype is None else arr.astype(dtype)

    def __repr__(self) -> str:
        return f"DeviceOutput(shape={self.shape}, dtype={self.dtype})"


def device_outputs(output0: Any, output1: Any) -> tuple[DeviceOutput, DeviceOutput] | None:
    """Both outputs wrapped as ``DeviceOutput`` when both are CUDA arrays of supported dtypes and
    on-device statistics are available here; None otherwise (compare host copies)."""
    op0, op1 = cuda_operand(output0), cuda_operand(output1)
    if op0 is None or op1 is None or not gpu_ready():
        return None
    return DeviceOutput(output0, op0), DeviceOutput(output1, op1)


def has_zero(arr: Any) -> bool:
    """Whether ``arr`` holds a zero: counted on the device for a ``DeviceOutput``."""
    if isinstance(arr, DeviceOutput):
        count = device_count_zeros(arr.device_array)
        if count is not None:
            return count > 0
    return bool(np.any(np.asarray(arr) == 0))
