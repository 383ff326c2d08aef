"""The model group: MODEL (the positional argument), --example and --model-type: which model a
command works on, and whether it is an ONNX model, a serialized TensorRT engine or a TensorRT
network script (a Python file whose function, `load_network` by default, creates the network)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.multi_option import stack_options

ENGINE_SUFFIXES = (".engine", ".plan", ".trt")
"""Extensions that make MODEL a serialized TensorRT engine when --model-type does not say."""
EXAMPLE_MODEL = "example_cnn.onnx"
MODEL_TYPES = ("onnx", "engine", "trt-network-script")
"""--model-type choices poly runs."""
UNSUPPORTED_MODEL_TYPES = {"frozen": "a frozen TensorFlow graph", "keras": "a Keras model",
                           "ckpt": "a TensorFlow checkpoint", "tf": "a TensorFlow model",
                           "uff": "a UFF model (TensorRT no longer parses UFF)",
                           "caffe": "a Caffe model (TensorRT no longer parses Caffe)"}
"""Polygraphy's other --model-type choices: they parse, and the command ends with one line saying
that poly does not load such models and how to get an ONNX model instead."""
NETWORK_SCRIPT_SUFFIX = ".py"
"""The extension that makes MODEL a TensorRT network script when --model-type does not say."""
DEFAULT_NETWORK_FUNC = "load_network"
"""The function a TensorRT network script defines when neither MODEL (`script.py:func`) nor
--trt-network-func-name names one."""


def example_model_path() -> str:
    """Path of the bundled example CNN (input `input` [1,3,8,8] float32, output `probs` [1,4])."""
    from importlib.resources import files  # ~20 ms of imports, only for --example

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
    """--model-type: "onnx", "engine" or "trt-network-script"; None: decided by the file's extension."""
    func_name: str | None = None
    """The function named after MODEL (`define_network.py:my_func`), for network scripts."""

    @classmethod
    def options(cls, required: bool = True, example: bool = False, model_type: bool = False) -> Any:
        """MODEL (click reports it missing when ``required``), and --example and --model-type
        for the commands that offer them."""
        options = [click.argument("model_file", required=required, metavar="MODEL")]
        if example:
            options.append(click.option("--example", is_flag=True, help="Use the bundled example CNN as MODEL."))
        if model_type:
            options.append(click.option(
                "--model-type", type=click.Choice(MODEL_TYPES + tuple(UNSUPPORTED_MODEL_TYPES)),
                help="Type of MODEL: onnx, engine (a serialized TensorRT engine), or trt-network-script (a Python "
                "script whose function `load_network`, or the one named as `script.py:func`, returns a TensorRT "
                "builder, network and optionally parser). Default: from the extension (.py is a network script). "
                "TensorFlow (frozen, keras, ckpt), UFF and Caffe models are not supported: convert them to ONNX."))
        return stack_options(options, section="Model")

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
        func_name = None
        if model_file and not example and not os.path.exists(model_file):
            from poly.compare.io.data_loader_script import parse_script_and_func_name

            script, func_name = parse_script_and_func_name(model_file)
            if func_name is not None:
                model_file = script
        model = cls(resolve_model_path(model_file, example), model_type, func_name)
        if model_type in UNSUPPORTED_MODEL_TYPES:
            from poly.core import G_LOGGER

            G_LOGGER.critical(f"{model.path!r} is {UNSUPPORTED_MODEL_TYPES[model_type]} (--model-type {model_type}), "
                              "which poly does not load: convert it to ONNX (e.g. with tf2onnx for TensorFlow) and "
                              "pass the .onnx file")
        if model.is_network_script and not model.path.endswith(NETWORK_SCRIPT_SUFFIX):  # type: ignore[union-attr]
            raise click.BadParameter(f"{model.path!r} is not a Python script: a TensorRT network script must be a "
                                     f"'{NETWORK_SCRIPT_SUFFIX}' file", param_hint="'MODEL'")
        return model

    @property
    def is_engine(self) -> bool:
        """Whether MODEL is a serialized TensorRT engine (by --model-type, else by its extension)."""
        if self.model_type:
            return self.model_type == "engine"
        return str(self.path).lower().endswith(ENGINE_SUFFIXES)

    @property
    def is_network_script(self) -> bool:
        """Whether MODEL is a TensorRT network script (by --model-type, else by its `.py` extension)."""
        if self.model_type:
            return self.model_type == "trt-network-script"
        return str(self.path).lower().endswith(NETWORK_SCRIPT_SUFFIX)

    @property
    def is_onnx(self) -> bool:
        """Whether MODEL is an ONNX model (neither an engine nor a network script)."""
        return self.path is not None and not (self.is_engine or self.is_network_script)
