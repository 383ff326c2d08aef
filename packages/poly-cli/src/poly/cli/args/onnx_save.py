"""The ONNX saving group: --save-external-data, --external-data-size-threshold and
--no-save-all-tensors-to-one-file, for the commands that write an ONNX model (-o is each
command's own)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import click

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

    @classmethod
    def options(cls):
        """--save-external-data, --external-data-size-threshold, --no-save-all-tensors-to-one-file."""
        return stack_options([
            click.option("--save-external-data", "--external-data-path", "external_data_path", is_flag=False,
                         flag_value="", default=None,
                         help="Save weights as external data at this path (relative to the model); "
                         "no value: <model>.data."),
            click.option("--external-data-size-threshold", type=int, default=None,
                         help="Tensors of at least this many bytes go to the external data file (default 1024)."),
            click.option("--no-save-all-tensors-to-one-file", "all_tensors_to_one_file", flag_value=False,
                         default=None, help="Write each external tensor to its own file."),
        ])

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> OnnxSaveArgs:
        return cls(
            external_data_path=kwargs["external_data_path"],
            size_threshold=kwargs["external_data_size_threshold"],
            all_tensors_to_one_file=kwargs["all_tensors_to_one_file"],
        )

    def save_onnx(self, model, path: str):
        """A SaveOnnx loader that writes ``model`` (a model or a loader of one) to ``path``
        (atomically, with external data as asked); call it to save."""
        from poly.onnx import SaveOnnx

        return SaveOnnx(model, path, external_data_path=self.external_data_path, size_threshold=self.size_threshold,
                        all_tensors_to_one_file=self.all_tensors_to_one_file)
