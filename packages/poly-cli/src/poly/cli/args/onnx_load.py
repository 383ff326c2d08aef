"""The ONNX loading group: --onnx-outputs / --onnx-exclude-outputs (which outputs the model
has) and --shape-inference, applied when the ONNX model is loaded; for `poly run` also where its
external data is (--external-data-dir, --ignore-external-data) and --fp-to-fp16."""

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
    allow_onnxruntime_shape_inference: bool = True
    external_data_dir: str | None = None
    ignore_external_data: bool = False
    fp_to_fp16: bool = False

    @classmethod
    def options(cls, shape_inference: bool = False, run_flags: bool = False):
        """--onnx-outputs, --onnx-exclude-outputs, and --shape-inference for the commands that offer
        it; with ``run_flags``, `poly run`'s --external-data-dir, --ignore-external-data and
        --fp-to-fp16 too. (`poly run` takes --shape-inference and --no-onnxruntime-shape-inference
        from ``OnnxInferShapesArgs``; ``from_kwargs`` reads both.)"""
        options = [
            multi_option("--onnx-outputs", help="Names of ONNX outputs to mark, or `mark all`."),
            multi_option("--onnx-exclude-outputs", help="Names of ONNX outputs to unmark."),
        ]
        if shape_inference:
            options.append(click.option("--shape-inference", "--do-shape-inference", "shape_inference", is_flag=True,
                                        help="Run ONNX shape inference when loading the model."))
        if run_flags:
            options += [
                click.option("--external-data-dir", "--load-external-data", "--ext", "external_data_dir",
                             type=click.Path(exists=True, file_okay=False),
                             help="Directory of the model's external data (default: the model's directory)."),
                click.option("--ignore-external-data", is_flag=True,
                             help="Load the model's structure without its external weights (for commands that "
                             "need no weights)."),
                click.option("--fp-to-fp16", is_flag=True,
                             help="Convert the ONNX model's float32 tensors and ops to float16 before running it."),
            ]
        return stack_options(options)

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> OnnxLoadArgs:
        outputs = parse_outputs(kwargs["onnx_outputs"])
        return cls(
            outputs=tuple(outputs) if isinstance(outputs, list) else outputs,
            exclude_outputs=tuple(kwargs["onnx_exclude_outputs"] or ()) or None,
            shape_inference=bool(kwargs.get("shape_inference", False)),
            allow_onnxruntime_shape_inference=kwargs.get("allow_onnxruntime", True) is not False,
            external_data_dir=kwargs.get("external_data_dir"),
            ignore_external_data=bool(kwargs.get("ignore_external_data")),
            fp_to_fp16=bool(kwargs.get("fp_to_fp16")),
        )

    def load_onnx(self, path: str):
        """A lazy ONNX loader for ``path`` (InferShapes, ModifyOutputs, ConvertToFp16 as asked), or
        ``path`` itself when nothing is to be changed (runners then load it directly)."""
        from poly.onnx import ConvertToFp16, InferShapes, ModifyOutputs, OnnxFromPath

        if (self.outputs is None and self.exclude_outputs is None and not self.shape_inference
                and self.external_data_dir is None and not self.ignore_external_data and not self.fp_to_fp16):
            return path
        loader = OnnxFromPath(path, external_data_dir=self.external_data_dir,
                              ignore_external_data=self.ignore_external_data or None)
        if self.shape_inference:
            loader = InferShapes(loader, allow_onnxruntime=self.allow_onnxruntime_shape_inference)
        if self.outputs is not None or self.exclude_outputs is not None:
            outputs = list(self.outputs) if isinstance(self.outputs, tuple) else self.outputs
            excluded = list(self.exclude_outputs) if self.exclude_outputs is not None else None
            loader = ModifyOutputs(loader, outputs=outputs, exclude_outputs=excluded)
        if self.fp_to_fp16:
            loader = ConvertToFp16(loader)
        return loader

    def parser_model_path(self, path: str) -> str:
        """The ONNX file TensorRT's parser should read for MODEL ``path``: ``path`` itself, or,
        with --external-data-dir or --fp-to-fp16, the model as loaded and converted, written
        (weights as external data) to a temporary directory removed when the process exits."""
        if self.external_data_dir is None and not self.fp_to_fp16:
            return path
        import atexit
        import os
        import shutil
        import tempfile

        from poly.onnx import ConvertToFp16, OnnxFromPath, SaveOnnx

        loader = OnnxFromPath(path, external_data_dir=self.external_data_dir)
        if self.fp_to_fp16:
            loader = ConvertToFp16(loader)
        directory = tempfile.mkdtemp(prefix="poly-trt-onnx-")
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
        converted = os.path.join(directory, os.path.basename(path))
        SaveOnnx(loader, converted, external_data_path="")()
        return converted
