"""Polygraphy-compatible import path: `polygraphy.backend.onnx` becomes `poly.backend.onnx`.
The code lives in `poly.onnx`; this module only re-exports its loaders."""

from poly.onnx.extract import ExtractSubgraph, extract_subgraph
from poly.onnx.fold import FoldConstants, fold_constants
from poly.onnx.fp16 import ConvertToFp16, convert_to_fp16
from poly.onnx.graph import GsFromOnnx, OnnxFromGs, gs_from_onnx, onnx_from_gs
from poly.onnx.io import (
    BytesFromOnnx,
    OnnxFromBytes,
    OnnxFromPath,
    SaveOnnx,
    bytes_from_onnx,
    onnx_from_bytes,
    onnx_from_path,
    save_onnx,
)
from poly.onnx.ir_version import LowerIrVersion, lower_ir_version
from poly.onnx.modify_outputs import ModifyOutputs, modify_outputs
from poly.onnx.shapes import InferShapes, infer_shapes

__all__ = [
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
    "ExtractSubgraph",
    "extract_subgraph",
    "ConvertToFp16",
    "convert_to_fp16",
    "LowerIrVersion",
    "lower_ir_version",
]
