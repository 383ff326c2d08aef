"""The model group: MODEL (the positional argument), --example and --model-type: which model a
command works on, and whether it is an ONNX model or a serialized TensorRT engine."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files

import click

from poly.cli.multi_option import stack_options

ENGINE_SUFFIXES = (".engine", ".plan", ".trt")
"""Extensions that make MODEL a serialized TensorRT engine when --model-type does not say."""
EXAMPLE_MODEL = "example_cnn.onnx"


def example_model_path() -> str:
    """Path of the bundled example CNN (input `input` [1,3,8,8] float32, output `probs` [1,4])."""
    return str(files("poly.cli.examples") / EXAMPLE_MODEL)


def resolve_model_path(path: str | None, example: bool = False) -> str:
    """The model path: the bundled example for `--example` (or for the word `example` when no
    such file exists); a usage error when MODEL is missing or does not exist."""
    if example or (path == "example" and not os.path.exists(path)):
        return example_model_path()
    if path is None:
        raise click.UsageError("Missing argument 'MODEL' (or pass --example for the bundled model).")
    if not os.path.exists(path):
        raise click.BadParameter(f"Path {path!r} does not exist.", param_hint="'MODEL'")
    return path


@dataclass(frozen=True)
class ModelArgs:
    """The model a command works on."""

    path: str | None
    """The model file (the bundled example's for --example); None where MODEL may be left out and was."""
    model_type: str | None = None
    """--model-type: "onnx" or "engine"; None: decided by the file's extension."""

    @classmethod
    def options(cls, required: bool = True, example: bool = False, model_type: bool = False):
        """MODEL (click reports it missing when ``required``), and --example and --model-type
        for the commands that offer them."""
        options = [click.argument("model_file", required=required, metavar="MODEL")]
        if example:
            options.append(click.option("--example", is_flag=True, help="Use the bundled example CNN as MODEL."))
        if model_type:
            options.append(click.option(
                "--model-type", type=click.Choice(["onnx", "engine"]),
                help="Type of MODEL: onnx, or a serialized TensorRT engine (default: from the extension)."))
        return stack_options(options)

    @classmethod
    def from_kwargs(cls, kwargs: Mapping, required: bool = True) -> ModelArgs:
        """
        The model of a command's click arguments. With ``required=False`` and neither MODEL nor
        --example given, ``path`` is None; otherwise a missing or nonexistent MODEL is a usage error.
        """
        model_file, example = kwargs["model_file"], kwargs.get("example", False)
        model_type = kwargs.get("model_type")
        if not required and not (model_file or example):
            return cls(None, model_type)
        return cls(resolve_model_path(model_file, example), model_type)

    @property
    def is_engine(self) -> bool:
        """Whether MODEL is a serialized TensorRT engine (by --model-type, else by its extension)."""
        if self.model_type:
            return self.model_type == "engine"
        return str(self.path).lower().endswith(ENGINE_SUFFIXES)
