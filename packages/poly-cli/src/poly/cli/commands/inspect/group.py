"""`poly inspect`: a group of lazily loaded inspection commands."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.lazy_group import LazyGroup

SUBCOMMANDS = {
    "model": ("poly.cli.commands.inspect.model:inspect_model", "Display information about an ONNX model, its TensorRT network, or an engine."),
    "data": ("poly.cli.commands.inspect.data:inspect_data", "Display information about inference inputs or results."),
    "tactics": ("poly.cli.commands.inspect.tactics:inspect_tactics",
                "Display a tactic replay file or a TensorRT timing cache in a readable form."),
    "diff-tactics": ("poly.cli.commands.inspect.tactics:diff_tactics",
                     "Find potentially bad TensorRT tactics from good and bad tactic replay files."),
    "capability": ("poly.cli.commands.inspect.capability:inspect_capability",
                   "Determine which parts of an ONNX model TensorRT's ONNX parser supports."),
    "sparsity": ("poly.cli.commands.inspect.sparsity:inspect_sparsity",
                 "[EXPERIMENTAL] Display which weights of an ONNX model follow 2:4 structured sparsity."),
}


@click.group(cls=LazyGroup, lazy_subcommands=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
def inspect() -> Any:
    """View information about various types of files."""
