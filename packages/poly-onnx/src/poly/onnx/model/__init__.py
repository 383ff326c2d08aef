"""
poly.onnx.model: getting ONNX models in and out, and the plumbing every loader shares: reading and
writing files and bytes with external data (``io``), onnx-graphsurgeon conversions (``graph``), clear
load errors (``errors``), keeping a model readable by the installed ONNX-Runtime (``ir_version``),
resolving "a model or a callable returning one" and working on copies (``base``), and Polygraphy's
TensorFlow loader stub (``from_tensorflow``).
"""

from poly.onnx.model.base import (
    PROTOBUF_THRESHOLD,
    BaseLoadOnnxCopy,
    copy_model,
    iter_graphs,
    load_model,
    model_size,
    tensor_size,
)
from poly.onnx.model.errors import (
    ModelLoadError,
    UnsupportedModelError,
    check_external_data,
    check_is_model,
    check_known_ops,
    explain_onnxruntime_error,
    external_data_tensors,
    find_unknown_ops,
    parse_model_bytes,
)
from poly.onnx.model.from_tensorflow import OnnxFromTfGraph, onnx_from_tf_graph
from poly.onnx.model.graph import (
    GsFromOnnx,
    OnnxFromGs,
    copy_model_metadata,
    export_graph,
    gs_from_onnx,
    onnx_from_gs,
)
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

__all__ = [
    "PROTOBUF_THRESHOLD",
    "BaseLoadOnnxCopy",
    "load_model",
    "copy_model",
    "model_size",
    "tensor_size",
    "iter_graphs",
    "ModelLoadError",
    "UnsupportedModelError",
    "parse_model_bytes",
    "check_is_model",
    "external_data_tensors",
    "check_external_data",
    "find_unknown_ops",
    "check_known_ops",
    "explain_onnxruntime_error",
    "OnnxFromTfGraph",
    "onnx_from_tf_graph",
    "GsFromOnnx",
    "gs_from_onnx",
    "OnnxFromGs",
    "onnx_from_gs",
    "copy_model_metadata",
    "export_graph",
    "OnnxFromPath",
    "onnx_from_path",
    "OnnxFromBytes",
    "onnx_from_bytes",
    "BytesFromOnnx",
    "bytes_from_onnx",
    "SaveOnnx",
    "save_onnx",
    "onnxruntime_max_ir_version",
    "onnxruntime_max_opset",
    "required_ir_version",
    "LowerIrVersion",
    "lower_ir_version",
]
