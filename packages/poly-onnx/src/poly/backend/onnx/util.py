"""Polygraphy-compatible import path `poly.backend.onnx.util`: model helpers of `poly.onnx`
under Polygraphy's names."""

from poly.onnx.surgery.fold import count_nodes
from poly.onnx.surgery.modify_outputs import markable_tensor_names
from poly.onnx.surgery.upper_bounds import unbounded_dds_tensors

#: The number of nodes of a model, subgraphs included.
get_num_nodes = count_nodes
#: The tensors whose runtime values decide an unbounded data-dependent output size.
get_unbounded_dds_tensors = unbounded_dds_tensors
#: The names of the tensors of a model that can be marked as outputs.
all_tensor_names = markable_tensor_names

__all__ = ["get_num_nodes", "get_unbounded_dds_tensors", "all_tensor_names"]
