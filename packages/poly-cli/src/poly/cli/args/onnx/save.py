"""The ONNX saving group: --save-external-data, --external-data-size-threshold and
--no-save-all-tensors-to-one-file, for the commands that write an ONNX model (-o is each
command's own; `poly run` has --save-onnx, the model as it runs it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.gen_script.call_tree import Assign, Ref, Value, Var, evaluate
from poly.cli.multi_option import stack_options


@dataclass(frozen=True)
class OnnxSaveArgs:
    """How ONNX models are saved."""

    external_data_path: str | None = None
    """Where weights go as external data (relative to the model); "": <model>.data; None: inside the model."""
    size_threshold: int | None = None
    """Tensors of at least this many bytes go to the external data file; None: SaveOnnx's default."""
    all_tensors_to_one_file: bool | None = None
    """False: one external data file per tensor; None: SaveOnnx's default (one file)."""
    path: str | None = None
    """--save-onnx: where `poly run` saves the ONNX model it runs; None: not saved."""

    @classmethod
    def options(cls, save_onnx: bool = False) -> Any:
        """--save-external-data, --external-data-size-threshold, --no-save-all-tensors-to-one-file;
        with ``save_onnx``, --save-onnx too."""
        save = [click.option("--save-onnx", type=click.Path(dir_okay=False),
                             help="Path to save the ONNX model as it is run (after --onnx-outputs, "
                             "--fp-to-fp16, ...).")] if save_onnx else []
        return stack_options([
            *save,
            click.option("--save-external-data", "--external-data-path", "external_data_path", is_flag=False,
                         flag_value="", default=None,
                         help="Save weights as external data at this path (relative to the model); "
                         "no value: <model>.data."),
            click.option("--external-data-size-threshold", type=int, default=None,
                         help="Tensors of at least this many bytes go to the external data file (default 1024)."),
            click.option("--no-save-all-tensors-to-one-file", "all_tensors_to_one_file", flag_value=False,
                         default=None, help="Write each external tensor to its own file."),
        ], section="ONNX Model Saving")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> OnnxSaveArgs:
        return cls(
            external_data_path=kwargs["external_data_path"],
            size_threshold=kwargs["external_data_size_threshold"],
            all_tensors_to_one_file=kwargs["all_tensors_to_one_file"],
            path=kwargs.get("save_onnx"),
        )

    def save_expr(self, model: Any, path: str, durable: bool = True) -> Any:
        """The call tree of the SaveOnnx loader writing ``model`` (a call tree, a path, or a
        ``Value``) to ``path`` with the external data flags (``durable=False``: without flushing
        it to disk)."""
        return Ref("poly.onnx", "SaveOnnx")(
            model, path, external_data_path=self.external_data_path, size_threshold=self.size_threshold,
            all_tensors_to_one_file=self.all_tensors_to_one_file, durable=None if durable else False)

    def save_onnx(self, model: Any, path: str, durable: bool = True) -> Any:
        """A SaveOnnx loader that writes ``model`` (a model or a loader of one) to ``path``
        (atomically, with external data as asked; ``durable=False``: without flushing it to disk);
        call it to save."""
        return evaluate(self.save_expr(Value(model), path, durable=durable))

    def save_if_asked_statements(self, model_path: str, loader: Any) -> list:
        """With --save-onnx, the statement that loads the model once (``loader``: the call tree
        in the variable ``onnx_model``, or MODEL's path ``model_path`` when nothing changes it),
        saves it and keeps the loaded model in ``onnx_model`` (so that runners sharing it do not
        load or save it again); otherwise none."""
        if self.path is None:
            return []
        model = Ref("poly.onnx", "OnnxFromPath")(model_path) if isinstance(loader, str) else Var("onnx_model")
        return [Assign("onnx_model", self.save_expr(model, self.path)())]
