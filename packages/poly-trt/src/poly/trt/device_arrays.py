"""Device arrays given as inputs (CuPy arrays, PyTorch CUDA tensors, DeviceBuffers...): their
address and shape through ``__cuda_array_interface__``, used in place by TrtRunner and the
calibrator."""

import numpy as np

from poly.core.logger import G_LOGGER

__all__ = ["device_view"]


def _contiguous_strides(shape, itemsize):
    strides, step = [], itemsize
    for dim in reversed(shape):
        strides.append(step)
        step *= max(int(dim), 1)
    return tuple(reversed(strides))


def device_view(name, value):
    """(pointer, shape) of a device array given through __cuda_array_interface__, else None."""
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
    return int(interface["data"][0]), shape
