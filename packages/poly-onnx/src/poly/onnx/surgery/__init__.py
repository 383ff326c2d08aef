"""
poly.onnx.surgery: edits of an ONNX model's nodes and weights: inserting a node, 2:4 sparsity
checks and pruning, stripping refittable weights and reconstructing them.
"""

from poly.onnx.surgery.insert_node import InsertNode, insert_node
from poly.onnx.surgery.reconstruct_weights import ReconstructWeights, reconstruct_weights
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

__all__ = [
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
