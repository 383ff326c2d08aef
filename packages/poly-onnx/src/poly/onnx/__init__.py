"""
poly.onnx: ONNX loaders and surgery (loading and saving with external data, output marking,
shape inference, constant folding, subgraph extraction, float16 conversion, IR-version
lowering) and the ONNX-Runtime and ONNX reference runners.

Its names are imported on first use (``poly.core.optional_import.lazy_exports``), so that a command
imports only the parts it runs; the imports under ``TYPE_CHECKING`` are the same names, for type
checkers.
"""

from typing import TYPE_CHECKING

from poly.core.optional_import import lazy_exports

if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(__name__, {
    "copy_model": "poly.onnx.model.base",
    "ModelLoadError": "poly.onnx.model.errors",
    "UnsupportedModelError": "poly.onnx.model.errors",
    "check_known_ops": "poly.onnx.model.errors",
    "explain_onnxruntime_error": "poly.onnx.model.errors",
    "find_unknown_ops": "poly.onnx.model.errors",
    "OnnxFromTfGraph": "poly.onnx.model.from_tensorflow",
    "onnx_from_tf_graph": "poly.onnx.model.from_tensorflow",
    "GsFromOnnx": "poly.onnx.model.graph",
    "OnnxFromGs": "poly.onnx.model.graph",
    "gs_from_onnx": "poly.onnx.model.graph",
    "onnx_from_gs": "poly.onnx.model.graph",
    "BytesFromOnnx": "poly.onnx.model.io",
    "OnnxFromBytes": "poly.onnx.model.io",
    "OnnxFromPath": "poly.onnx.model.io",
    "SaveOnnx": "poly.onnx.model.io",
    "bytes_from_onnx": "poly.onnx.model.io",
    "onnx_from_bytes": "poly.onnx.model.io",
    "onnx_from_path": "poly.onnx.model.io",
    "save_onnx": "poly.onnx.model.io",
    "LowerIrVersion": "poly.onnx.model.ir_version",
    "lower_ir_version": "poly.onnx.model.ir_version",
    "onnxruntime_max_ir_version": "poly.onnx.model.ir_version",
    "onnxruntime_max_opset": "poly.onnx.model.ir_version",
    "required_ir_version": "poly.onnx.model.ir_version",
    "OnnxrtRunner": "poly.onnx.runners.onnxrt_runner",
    "PluginRefRunner": "poly.onnx.runners.pluginref_runner",
    "OnnxRefRunner": "poly.onnx.runners.ref_runner",
    "SessionFromOnnx": "poly.onnx.runners.session",
    "session_from_onnx": "poly.onnx.runners.session",
    "InsertNode": "poly.onnx.surgery",
    "PruneSparsity": "poly.onnx.surgery",
    "ReconstructWeights": "poly.onnx.surgery",
    "SparsityPruner": "poly.onnx.surgery",
    "StripWeights": "poly.onnx.surgery",
    "insert_node": "poly.onnx.surgery",
    "prune_sparsity": "poly.onnx.surgery",
    "reconstruct_weights": "poly.onnx.surgery",
    "strip_weights": "poly.onnx.surgery",
    "ExtractSubgraph": "poly.onnx.surgery.extract",
    "extract_subgraph": "poly.onnx.surgery.extract",
    "FoldConstants": "poly.onnx.surgery.fold",
    "default_fold_size_threshold": "poly.onnx.surgery.fold",
    "fold_constants": "poly.onnx.surgery.fold",
    "DEFAULT_FP16_OP_BLOCK_LIST": "poly.onnx.surgery.fp16",
    "ConvertToFp16": "poly.onnx.surgery.fp16",
    "convert_to_fp16": "poly.onnx.surgery.fp16",
    "onnxruntime_fp16_op_block_list": "poly.onnx.surgery.fp16",
    "override_input_shapes": "poly.onnx.surgery.input_shapes",
    "ModifyOutputs": "poly.onnx.surgery.modify_outputs",
    "modify_outputs": "poly.onnx.surgery.modify_outputs",
    "InferShapes": "poly.onnx.surgery.shapes",
    "infer_shapes": "poly.onnx.surgery.shapes",
    "SetUpperBound": "poly.onnx.surgery.upper_bounds",
    "set_upper_bound": "poly.onnx.surgery.upper_bounds",
    "unbounded_dds_tensors": "poly.onnx.surgery.upper_bounds",
})
