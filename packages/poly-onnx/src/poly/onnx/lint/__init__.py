"""poly.onnx.lint: the ONNX linter (``lint_onnx``, Polygraphy's ``check lint``) and its report."""

from poly.onnx.lint.linter import UNNAMED_NODE_PREFIX, lint_onnx
from poly.onnx.lint.native_stderr import CapturedText, capture_native_stderr
from poly.onnx.lint.report import LintLevel, LintReport, LintSource, clean_onnxruntime_message

__all__ = [
    "lint_onnx",
    "UNNAMED_NODE_PREFIX",
    "LintReport",
    "LintLevel",
    "LintSource",
    "clean_onnxruntime_message",
    "capture_native_stderr",
    "CapturedText",
]
