"""Binding tensors to a TensorRT execution context with TensorRT's answers checked:
``set_input_shape`` and ``set_tensor_address`` return False instead of raising (an unknown name,
a shape outside the optimization profile, a misaligned address...), and ``TrtRunner`` turns
that into one error naming the tensor."""

from typing import Any

from poly.core import G_LOGGER
from poly.trt.tensorrt_module import trt

__all__ = ["set_input_shape", "set_tensor_address"]


def set_input_shape(context: Any, engine: Any, name: Any, shape: Any, profile: Any, prefix: str = "") -> None:
    """
    Sets ``name``'s shape; raises ``PolyException`` naming the tensor (and the profile's range)
    when TensorRT refuses it.
    """
    if context.set_input_shape(name, shape):
        return
    try:
        is_input = engine.get_tensor_mode(name) == trt.TensorIOMode.INPUT  # TensorIOMode.NONE when unknown
    except Exception:
        is_input = False
    if not is_input:
        detail = " (the engine has no such input)"
    elif engine.is_shape_inference_io(name):
        detail = f" (the shape tensor's shape is {tuple(engine.get_tensor_shape(name))})"
    else:
        lo, _, hi = engine.get_tensor_profile_shape(name, profile)
        detail = f" (profile {profile} allows {tuple(lo)} to {tuple(hi)})"
    G_LOGGER.critical(f"{prefix}Input tensor: {name} | TensorRT refused shape {tuple(shape)}{detail}")


def set_tensor_address(context: Any, name: Any, address: Any, kind: str = "Input", prefix: str = "") -> None:
    """
    Binds ``name`` to ``address`` (device memory; host memory for shape tensors); raises
    ``PolyException`` naming the tensor when TensorRT refuses it.
    """
    if not context.set_tensor_address(name, address):
        G_LOGGER.critical(
            f"{prefix}{kind} tensor: {name} | TensorRT refused address {int(address):#x} (set_tensor_address "
            "returned False: the name is not an input or output of the engine, or the address is not aligned "
            "as TensorRT requires: 256 bytes for device memory)"
        )
