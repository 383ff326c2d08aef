"""
poly.onnx.surgery: transformations of an ONNX model: marking outputs (``modify_outputs``), shape
inference and input-shape overrides (``shapes``, ``input_shapes``), constant folding (``fold``),
subgraph extraction (``extract``), float16 conversion (``fp16``), upper bounds on data-dependent
sizes (``upper_bounds``), inserting a node, 2:4 sparsity checks and pruning, stripping refittable
weights and reconstructing them (``tensor_data`` holds the initializer-data helpers they share).
"""

from poly.onnx.surgery.extract import ExtractSubgraph, extract_subgraph
from poly.onnx.surgery.fold import FoldConstants, count_nodes, default_fold_size_threshold, fold_constants
from poly.onnx.surgery.fp16 import (
    DEFAULT_FP16_OP_BLOCK_LIST,
    ConvertToFp16,
    convert_to_fp16,
    onnxruntime_fp16_op_block_list,
)
from poly.onnx.surgery.input_shapes import override_input_shapes
from poly.onnx.surgery.insert_node import InsertNode, insert_node
from poly.onnx.surgery.modify_outputs import ModifyOutputs, markable_tensor_names, modify_outputs
from poly.onnx.surgery.reconstruct_weights import ReconstructWeights, reconstruct_weights
from poly.onnx.surgery.shapes import (
    InferShapes,
    infer_shapes,
    onnxruntime_tensor_types,
    tensor_types,
    untyped_tensors,
)
from poly.onnx.surgery.sparsity import (
    PruneSparsity,
    SparsityPruner,
    WeightSparsity,
    check_sparsity,
    find_sparsity_candidates,
    is_2_4_sparse,
    prune_2_4,
    prune_sparsity,
)
from poly.onnx.surgery.strip_weights import StripWeights, strip_weights, strippable_initializers
from poly.onnx.surgery.upper_bounds import SIZE_INPUTS, SetUpperBound, set_upper_bound, unbounded_dds_tensors

__all__ = [
    "ModifyOutputs",
    "modify_outputs",
    "markable_tensor_names",
    "InferShapes",
    "infer_shapes",
    "tensor_types",
    "untyped_tensors",
    "onnxruntime_tensor_types",
    "override_input_shapes",
    "FoldConstants",
    "fold_constants",
    "count_nodes",
    "default_fold_size_threshold",
    "ExtractSubgraph",
    "extract_subgraph",
    "ConvertToFp16",
    "convert_to_fp16",
    "DEFAULT_FP16_OP_BLOCK_LIST",
    "onnxruntime_fp16_op_block_list",
    "SIZE_INPUTS",
    "unbounded_dds_tensors",
    "SetUpperBound",
    "set_upper_bound",
    "InsertNode",
    "insert_node",
    "SparsityPruner",
    "PruneSparsity",
    "prune_sparsity",
    "prune_2_4",
    "is_2_4_sparse",
    "WeightSparsity",
    "find_sparsity_candidates",
    "check_sparsity",
    "StripWeights",
    "strip_weights",
    "strippable_initializers",
    "ReconstructWeights",
    "reconstruct_weights",
]
