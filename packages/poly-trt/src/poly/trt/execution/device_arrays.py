"""Device arrays given as inputs (CuPy arrays, PyTorch CUDA tensors, DeviceBuffers...): their
address, shape and producer stream through ``__cuda_array_interface__``, used in place by
TrtRunner and the calibrator."""

from collections import namedtuple
from typing import Any

import numpy as np

from poly.core import G_LOGGER

__all__ = ["DeviceInput", "device_view"]

DeviceInput = namedtuple("DeviceInput", ["ptr", "shape", "stream"])
"""A device array's address, shape and the stream its producer asks readers to synchronise
with (None: nothing pending; 1: the legacy default stream; 2: the per-thread default stream;
else a ``cudaStream_t`` handle), as version 3 of ``__cuda_array_interface__`` defines them."""


def _contiguous_strides(shape: Any, itemsize: Any) -> tuple[Any, ...]:
    strides, step = [], itemsize
    for dim in reversed(shape):
        strides.append(step)
        step *= max(int(dim), 1)
    return tuple(reversed(strides))


def _stream(name: Any, interface: Any) -> Any:
    stream = interface.get("stream")
    if stream is None:
        return None
    if isinstance(stream, bool) or not isinstance(stream, int):
        G_LOGGER.critical(
            f"Input tensor: {name} | __cuda_array_interface__ 'stream' must be None or an int, got {stream!r}"
        )
    if stream == 0:
        G_LOGGER.critical(
            f"Input tensor: {name} | __cuda_array_interface__ 'stream' is 0, which version 3 of the interface "
            "disallows (1 names the legacy default stream, 2 the per-thread default stream)"
        )
    return int(stream)


def device_view(name: Any, value: Any) -> Any:
    """``DeviceInput`` of a device array given through __cuda_array_interface__, else None."""
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is None:
        return None
    shape = tuple(int(d) for d in interface["shape"])
    strides = interface.get("strides")
    itemsize = np.dtype(interface["typestr"]).itemsize
    if strides is not None and tuple(strides) != _contiguous_strides(shape, itemsize) and 0 not in shape:
        G_LOGGER.critical(
            f"Input tensor: {name} | device arrays must be C-contiguous, got strides {tuple(strides)}"
        )
    return DeviceInput(int(interface["data"][0]), shape, _stream(name, interface))
