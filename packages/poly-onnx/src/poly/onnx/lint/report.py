"""
``LintReport``: the findings of ``lint_onnx`` in Polygraphy's ``check lint`` JSON format, and
``clean_onnxruntime_message``, which strips ONNX-Runtime's decorations from an error message.

The JSON report::

    {
        "summary": {"passing": [node names], "failing": [node names]},
        "lint_entries": [
            {"level": "exception" | "warning" | "info",
             "source": "onnxruntime" | "onnx_checker" | "onnx_loader" | "onnx_graphsurgeon",
             "message": "...",
             "nodes": [node name]},          # only for entries about one node
            ...
        ]
    }
"""

from __future__ import annotations

import enum
import re
from typing import Any

from poly.core import G_LOGGER
from poly.core.json import save_json

__all__ = ["LintLevel", "LintSource", "LintReport", "clean_onnxruntime_message"]


class LintLevel(enum.Enum):
    """How severe a lint entry is: exceptions make the model invalid."""

    EXCEPTION = "exception"
    WARNING = "warning"
    INFO = "info"


class LintSource(enum.Enum):
    """Which check produced a lint entry."""

    ONNXRUNTIME = "onnxruntime"
    ONNX_CHECKER = "onnx_checker"
    ONNX_LOADER = "onnx_loader"
    ONNX_GS = "onnx_graphsurgeon"


# ONNX-Runtime's decorations, removed in this order (each applies to what the previous left).
_ORT_STATUS = re.compile(r"^\[ONNXRuntimeError\] : ")
_ORT_FILLERS = (
    "This is an invalid model. ",
    "Error: ",
    "Failed to load model with error: ",
    "Exception caught: ",
    "Exception during loading: ",
    "\n",
)
_DECORATIONS = (
    re.compile(r"\x1b\[(?:\d+;){0,2}\d+m(.*?)\x1b\[m", re.S),  # log colours: keep the text
    re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+ \[.*?\] "),  # log time stamp and origin
    re.compile(r"Node \(.*\) Op \(.*\) \[ShapeInferenceError\]"),
    re.compile(r".*/.*\.cc:\d+ onnxruntime::.*\(.*\)"),  # source location
    re.compile(r"In Node, .*, Error "),
    re.compile(r".*Status Message: "),
)


def _strip_status(message: str) -> str:
    """'[ONNXRuntimeError] : CODE : NAME : text' -> 'text' (without filler phrases)."""
    parts = message.split(" : ")
    if len(parts) < 4:
        return _ORT_STATUS.sub("", message, count=1)
    text = " : ".join(parts[3:]).replace('"', "`")
    for filler in _ORT_FILLERS:
        text = text.replace(filler, "")
    return text


def clean_onnxruntime_message(message: str) -> str:
    """
    The text of an ONNX-Runtime error or log line without its status prefix, colours, time
    stamp, source location and node prefix, on one line.
    """
    if _ORT_STATUS.match(message):
        message = _strip_status(message)
    for pattern in _DECORATIONS:
        if pattern.match(message):
            message = pattern.sub(r"\1" if pattern.groups else "", message)
    return message.replace("\n", "")


class LintReport:
    """
    Lint entries and the passing and failing nodes. A node with an exception entry is failing
    (and no longer passing); a node checked without one is passing.
    """

    def __init__(self) -> None:
        self.lint_entries: list[dict] = []
        self.passing: dict[str, None] = {}
        """Passing node names, in the order they were checked."""
        self.failing: dict[str, None] = {}
        """Failing node names, in the order they failed."""

    @property
    def is_valid(self) -> bool:
        """Whether no entry is an exception."""
        return not any(entry["level"] == LintLevel.EXCEPTION.value for entry in self.lint_entries)

    def mark_passing(self, node_name: str) -> None:
        """Records a node checked without an error (unless it already failed)."""
        if node_name not in self.failing:
            self.passing[node_name] = None

    def add(self, level: LintLevel, source: LintSource, message: str, node_name: Any = None, op: Any = None, log: bool = True) -> None:
        """
        Adds an entry (ONNX-Runtime decorations stripped from ``message``) and logs it as
        ``LINT | [Name: NODE, Op: OP | ]MESSAGE`` at the entry's level. An exception about a node
        makes it failing; another entry about a node makes it passing unless it failed.
        """
        message = clean_onnxruntime_message(message)
        if log:
            scope = f"Name: {node_name}, Op: {op} | " if node_name and op else ""
            severity = {LintLevel.EXCEPTION: G_LOGGER.ERROR, LintLevel.WARNING: G_LOGGER.WARNING}.get(level, G_LOGGER.INFO)
            G_LOGGER.log(f"LINT | {scope}{message}", severity=severity)
        entry = {"level": level.value, "source": source.value, "message": message}
        if node_name:
            entry["nodes"] = [node_name]  # type: ignore[assignment]
            if level == LintLevel.EXCEPTION:
                self.failing[node_name] = None
                self.passing.pop(node_name, None)
            else:
                self.mark_passing(node_name)
        self.lint_entries.append(entry)

    def to_dict(self) -> dict:
        """The report as Polygraphy's JSON object."""
        return {
            "summary": {"passing": list(self.passing), "failing": list(self.failing)},
            "lint_entries": list(self.lint_entries),
        }

    def save(self, path: Any) -> None:
        """Writes the JSON report (atomically)."""
        save_json(self.to_dict(), path, description="linting report")
