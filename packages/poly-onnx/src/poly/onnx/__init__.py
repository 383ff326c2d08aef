"""
poly.onnx: ONNX loaders and surgery (loading and saving with external data, output marking,
shape inference, constant folding, subgraph extraction, float16 conversion, IR-version
lowering) and the ONNX-Runtime and ONNX reference runners.
"""

from poly.onnx.model.base import copy_model
from poly.onnx.model.errors import (
    ModelLoadError,
    UnsupportedModelError,
    check_known_ops,
    explain_onnxruntime_error,
    find_unknown_ops,
)
from poly.onnx.model.from_tensorflow import OnnxFromTfGraph, onnx_from_tf_graph
from poly.onnx.model.graph import GsFromOnnx, OnnxFromGs, gs_from_onnx, onnx_from_gs
from poly.onnx.model.io import (
    BytesFromOnnx,
    OnnxFromBytes,
    OnnxFromPath,
    SaveOnnx,
    bytes_from_onnx,
    onnx_from_bytes,
    onnx_from_path,
    save_onnx,
)
from poly.onnx.model.ir_version import (
    LowerIrVersion,
    lower_ir_version,
    onnxruntime_max_ir_version,
    onnxruntime_max_opset,
    required_ir_version,
)
from poly.onnx.runners.onnxrt_runner import OnnxrtRunner
from poly.onnx.runners.pluginref_runner import PluginRefRunner
from poly.onnx.runners.ref_runner import OnnxRefRunner
from poly.onnx.runners.session import SessionFromOnnx, session_from_onnx
from poly.onnx.surgery import (
    InsertNode,
    PruneSparsity,
    ReconstructWeights,
    SparsityPruner,
    StripWeights,
    insert_node,
    prune_sparsity,
    reconstruct_weights,
    strip_weights,
)
from poly.onnx.surgery.extract import ExtractSubgraph, extract_subgraph
from poly.onnx.surgery.fold import FoldConstants, default_fold_size_threshold, fold_constants
from poly.onnx.surgery.fp16 import (
    DEFAULT_FP16_OP_BLOCK_LIST,
    ConvertToFp16,
    convert_to_fp16,
    onnxruntime_fp16_op_block_list,
)
from poly.onnx.surgery.input_shapes import override_input_shapes
from poly.onnx.surgery.modify_outputs import ModifyOutputs, modify_outputs
from poly.onnx.surgery.shapes import InferShapes, infer_shapes
from poly.onnx.surgery.upper_bounds import SetUpperBound, set_upper_bound, unbounded_dds_tensors

__all__ = [
    "override_input_shapes",
    "OnnxFromPath",
    "onnx_from_path",
    "OnnxFromBytes",
    "onnx_from_bytes",
    "BytesFromOnnx",
    "bytes_from_onnx",
    "SaveOnnx",
    "save_onnx",
    "GsFromOnnx",
    "gs_from_onnx",
    "OnnxFromGs",
    "onnx_from_gs",
    "ModifyOutputs",
    "modify_outputs",
    "InferShapes",
    "infer_shapes",
    "FoldConstants",
    "fold_constants",
    "default_fold_size_threshold",
    "ExtractSubgraph",
    "extract_subgraph",
    "SetUpperBound",
    "set_upper_bound",
    "unbounded_dds_tensors",
    "InsertNode",
    "insert_node",
    "SparsityPruner",
    "PruneSparsity",
    "prune_sparsity",
    "StripWeights",
    "strip_weights",
    "ReconstructWeights",
    "reconstruct_weights",
    "OnnxFromTfGraph",
    "onnx_from_tf_graph",
    "PluginRefRunner",
    "ConvertToFp16",
    "convert_to_fp16",
    "DEFAULT_FP16_OP_BLOCK_LIST",
    "onnxruntime_fp16_op_block_list",
    "LowerIrVersion",
    "lower_ir_version",
    "onnxruntime_max_ir_version",
    "onnxruntime_max_opset",
    "required_ir_version",
    "ModelLoadError",
    "UnsupportedModelError",
    "check_known_ops",
    "find_unknown_ops",
    "explain_onnxruntime_error",
    "SessionFromOnnx",
    "session_from_onnx",
    "OnnxrtRunner",
    "OnnxRefRunner",
    "copy_model",
]
