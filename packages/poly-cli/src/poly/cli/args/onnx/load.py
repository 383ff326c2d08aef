"""The ONNX loading group: --onnx-outputs / --onnx-exclude-outputs (which outputs the model
has) and --shape-inference, applied when the ONNX model is loaded; for `poly run` also where its
external data is (--external-data-dir, --ignore-external-data) and --fp-to-fp16. The loaders
are call trees (``poly.cli.gen_script.call_tree``): evaluated by the commands, printed by
`poly run --gen-script`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.gen_script.call_tree import Assign, Comment, Do, Ref, Var, evaluate, run_statements
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
    def options(cls, shape_inference: bool = False, run_flags: bool = False) -> Any:
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
        return stack_options(options, section="ONNX Model Loading")

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

    @property
    def changes_model(self) -> bool:
        """Whether a flag changes the model as loaded (else runners read MODEL's path)."""
        return (self.outputs is not None or self.exclude_outputs is not None or self.shape_inference
                or self.external_data_dir is not None or self.ignore_external_data or self.fp_to_fp16)

    def loader_expr(self, path: str) -> Any:
        """The call tree of the ONNX loader of ``path`` (InferShapes, ModifyOutputs, ConvertToFp16
        as asked), or ``path`` itself when nothing is to be changed."""
        if not self.changes_model:
            return path
        expr = Ref("poly.onnx", "OnnxFromPath")(path, external_data_dir=self.external_data_dir,
                                                ignore_external_data=self.ignore_external_data or None)
        if self.shape_inference:
            expr = Ref("poly.onnx", "InferShapes")(expr, allow_onnxruntime=self.allow_onnxruntime_shape_inference)
        if self.outputs is not None or self.exclude_outputs is not None:
            excluded = list(self.exclude_outputs) if self.exclude_outputs is not None else None
            expr = Ref("poly.onnx", "ModifyOutputs")(expr, outputs=outputs_argument(self.outputs),
                                                     exclude_outputs=excluded)
        if self.fp_to_fp16:
            expr = Ref("poly.onnx", "ConvertToFp16")(expr)
        return expr

    def load_onnx(self, path: str) -> Any:
        """A lazy ONNX loader for ``path`` (``loader_expr`` evaluated), or ``path`` itself when
        nothing is to be changed (runners then load it directly)."""
        return evaluate(self.loader_expr(path))

    def parser_model_statements(self, path: str) -> tuple[list, object]:
        """(statements, the call tree of the ONNX file TensorRT's parser reads): MODEL ``path``
        itself, or, with --external-data-dir or --fp-to-fp16, the model as loaded and converted,
        written (weights as external data) to a temporary directory removed at exit."""
        if self.external_data_dir is None and not self.fp_to_fp16:
            return [], path
        expr = Ref("poly.onnx", "OnnxFromPath")(path, external_data_dir=self.external_data_dir)
        if self.fp_to_fp16:
            expr = Ref("poly.onnx", "ConvertToFp16")(expr)
        return [
            Comment("TensorRT's parser reads the model as loaded and converted, from a temporary directory"),
            Assign("trt_onnx_dir", Ref("tempfile").attr("mkdtemp")(prefix="poly-trt-onnx-")),
            Do(Ref("atexit").attr("register")(Ref("shutil").attr("rmtree"), Var("trt_onnx_dir"), ignore_errors=True)),
            Assign("trt_onnx_path", Ref("os").attr("path").attr("join")(Var("trt_onnx_dir"), os.path.basename(path))),
            Do(Ref("poly.onnx", "SaveOnnx")(expr, Var("trt_onnx_path"), external_data_path="")()),
        ], Var("trt_onnx_path")

    def parser_model_path(self, path: str) -> str:
        """The ONNX file TensorRT's parser should read for MODEL ``path`` (``parser_model_statements``
        run)."""
        statements, result = self.parser_model_statements(path)
        return evaluate(result, run_statements(statements))


def outputs_argument(outputs: Any) -> Any:
    """--onnx-outputs / --trt-outputs as a loader's argument: a list of names, ``MARK_ALL`` (as
    the name poly.core exports) or None."""
    from poly.core import MARK_ALL

    if outputs is None:
        return None
    if outputs == MARK_ALL:
        return Ref("poly.core", "MARK_ALL")
    return list(outputs)
