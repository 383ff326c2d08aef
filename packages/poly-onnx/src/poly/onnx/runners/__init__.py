"""
poly.onnx.runners: running ONNX models: ``OnnxrtRunner`` over an ONNX-Runtime session built by
``SessionFromOnnx`` (``onnxrt_runner``, ``session``), ``OnnxRefRunner`` over ONNX's reference
evaluator with its corrected operators (``ref_runner``, ``ref_ops``), ``PluginRefRunner``
(``pluginref_runner``), and what their loaders accept as a model (``model_source``).

Its names are imported on first use (``poly.core.optional_import.lazy_exports``), so that a command
imports only the parts it runs; the imports under ``TYPE_CHECKING`` are the same names, for type
checkers.
"""

from typing import TYPE_CHECKING

from poly.core.optional_import import lazy_exports

if TYPE_CHECKING:
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
        usable_cpu_ids,
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
    "usable_cpu_ids",
]

__getattr__, __dir__ = lazy_exports(__name__, {
    "PROTOBUF_LIMIT": "poly.onnx.runners.model_source",
    "ModelSource": "poly.onnx.runners.model_source",
    "OnnxrtRunner": "poly.onnx.runners.onnxrt_runner",
    "PLUGIN_REFERENCES": "poly.onnx.runners.pluginref_runner",
    "PluginRefRunner": "poly.onnx.runners.pluginref_runner",
    "register_reference": "poly.onnx.runners.pluginref_runner",
    "corrected_ops": "poly.onnx.runners.ref_ops",
    "OnnxRefRunner": "poly.onnx.runners.ref_runner",
    "PROVIDER_ALIASES": "poly.onnx.runners.session",
    "SessionFromOnnx": "poly.onnx.runners.session",
    "session_from_onnx": "poly.onnx.runners.session",
    "session_model_label": "poly.onnx.runners.session",
    "usable_cpus": "poly.onnx.runners.session",
    "usable_cpu_ids": "poly.onnx.runners.session",
})
