"""The ONNX loading group: --onnx-outputs / --onnx-exclude-outputs (which outputs the model
has) and --shape-inference, applied when the ONNX model is loaded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import click

from poly.cli.multi_option import multi_option, stack_options
from poly.cli.value_parsing import parse_outputs


@dataclass(frozen=True)
class OnnxLoadArgs:
    """How the ONNX model is loaded."""

    outputs: tuple[str, ...] | str | None = None
    """--onnx-outputs: names to mark as outputs, ``poly.core.MARK_ALL`` for `mark all`, None: as in the model."""
    exclude_outputs: tuple[str, ...] | None = None
    """--onnx-exclude-outputs: outputs to unmark; None: none."""
    shape_inference: bool = False

    @classmethod
    def options(cls, shape_inference: bool = False):
        """--onnx-outputs, --onnx-exclude-outputs, and --shape-inference for the commands that offer it."""
        options = [
            multi_option("--onnx-outputs", help="Names of ONNX outputs to mark, or `mark all`."),
            multi_option("--onnx-exclude-outputs", help="Names of ONNX outputs to unmark."),
        ]
        if shape_inference:
            options.append(click.option("--shape-inference", "--do-shape-inference", "shape_inference", is_flag=True,
                                        help="Run ONNX shape inference when loading the model."))
        return stack_options(options)

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> OnnxLoadArgs:
        outputs = parse_outputs(kwargs["onnx_outputs"])
        return cls(
            outputs=tuple(outputs) if isinstance(outputs, list) else outputs,
            exclude_outputs=tuple(kwargs["onnx_exclude_outputs"] or ()) or None,
            shape_inference=bool(kwargs.get("shape_inference", False)),
        )

    def load_onnx(self, path: str):
        """A lazy ONNX loader for ``path`` (InferShapes, ModifyOutputs as asked), or ``path``
        itself when nothing is to be changed (runners then load it directly)."""
        from poly.onnx import InferShapes, ModifyOutputs, OnnxFromPath

        if self.outputs is None and self.exclude_outputs is None and not self.shape_inference:
            return path
        loader = OnnxFromPath(path)
        if self.shape_inference:
            loader = InferShapes(loader)
        if self.outputs is not None or self.exclude_outputs is not None:
            outputs = list(self.outputs) if isinstance(self.outputs, tuple) else self.outputs
            excluded = list(self.exclude_outputs) if self.exclude_outputs is not None else None
            loader = ModifyOutputs(loader, outputs=outputs, exclude_outputs=excluded)
        return loader
