"""
poly.onnx.runners: running ONNX models: ``OnnxrtRunner`` over an ONNX-Runtime session built by
``SessionFromOnnx`` (``onnxrt_runner``, ``session``), ``OnnxRefRunner`` over ONNX's reference
evaluator with its corrected operators (``ref_runner``, ``ref_ops``), ``PluginRefRunner``
(``pluginref_runner``), and what their loaders accept as a model (``model_source``).
"""

from poly.onnx.runners.model_source import PROTOBUF_LIMIT, ModelSource
from poly.onnx.runners.onnxrt_runner import OnnxrtRunner
from poly.onnx.runners.pluginref_runner import PLUGIN_REFERENCES, PluginRefRunner, register_reference
from poly.onnx.runners.ref_ops import corrected_ops
from poly.onnx.runners.ref_runner import OnnxRefRunner
from poly.onnx.runners.session import (
    PROVIDER_ALIASES,
    SessionFromOnnx,
    session_from_onnx,
    session_model_label,
    usable_cpus,
)

__all__ = [
    "ModelSource",
    "PROTOBUF_LIMIT",
    "OnnxrtRunner",
    "PLUGIN_REFERENCES",
    "register_reference",
    "PluginRefRunner",
    "corrected_ops",
    "OnnxRefRunner",
    "SessionFromOnnx",
    "session_from_onnx",
    "session_model_label",
    "PROVIDER_ALIASES",
    "usable_cpus",
]
