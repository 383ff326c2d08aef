"""Polygraphy-compatible import path `poly.backend.trt.util`: network and logger helpers of
`poly.trt` under Polygraphy's names."""

from poly.trt.networks.network_postprocess import all_tensors, io_tensors
from poly.trt.trt_logger import get_trt_logger  # noqa: F401

#: Every tensor of a TensorRT network by name.
get_all_tensors = all_tensors
#: The input and output tensors of a TensorRT network by name.
get_all_io_tensors = io_tensors

__all__ = ["get_all_tensors", "get_all_io_tensors", "get_trt_logger"]
