"""
poly.onnx.model: getting ONNX models in and out, and the plumbing every loader shares: reading and
writing files and bytes with external data (``io``), onnx-graphsurgeon conversions (``graph``), clear
load errors (``errors``), keeping a model readable by the installed ONNX-Runtime (``ir_version``),
resolving "a model or a callable returning one" and working on copies (``base``), and Polygraphy's
TensorFlow loader stub (``from_tensorflow``).

Its names are imported on first use (``poly.core.optional_import.lazy_exports``), so that a command
imports only the parts it runs; the imports under ``TYPE_CHECKING`` are the same names, for type
checkers.
"""

from typing import TYPE_CHECKING

from poly.core.optional_import import lazy_exports

if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(__name__, {
    "PROTOBUF_THRESHOLD": "poly.onnx.model.base",
    "BaseLoadOnnxCopy": "poly.onnx.model.base",
    "copy_model": "poly.onnx.model.base",
    "iter_graphs": "poly.onnx.model.base",
    "load_model": "poly.onnx.model.base",
    "model_size": "poly.onnx.model.base",
    "tensor_size": "poly.onnx.model.base",
    "ModelLoadError": "poly.onnx.model.errors",
    "UnsupportedModelError": "poly.onnx.model.errors",
    "check_external_data": "poly.onnx.model.errors",
    "check_is_model": "poly.onnx.model.errors",
    "check_known_ops": "poly.onnx.model.errors",
    "explain_onnxruntime_error": "poly.onnx.model.errors",
    "external_data_tensors": "poly.onnx.model.errors",
    "find_unknown_ops": "poly.onnx.model.errors",
    "parse_model_bytes": "poly.onnx.model.errors",
    "OnnxFromTfGraph": "poly.onnx.model.from_tensorflow",
    "onnx_from_tf_graph": "poly.onnx.model.from_tensorflow",
    "GsFromOnnx": "poly.onnx.model.graph",
    "OnnxFromGs": "poly.onnx.model.graph",
    "copy_model_metadata": "poly.onnx.model.graph",
    "export_graph": "poly.onnx.model.graph",
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
})
