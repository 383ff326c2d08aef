"""`poly surgeon`: a group of lazily loaded ONNX-modifying commands."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.lazy_group import LazyGroup

SUBCOMMANDS = {
    "extract": ("poly.cli.commands.surgeon.extract:extract", "Extract a subgraph based on the specified inputs and outputs."),
    "sanitize": ("poly.cli.commands.surgeon.sanitize:sanitize", "Clean up, optimize, and/or change input shapes."),
    "insert": ("poly.cli.commands.surgeon.insert:insert", "[EXPERIMENTAL] Insert a single node into an ONNX model."),
    "prune": ("poly.cli.commands.surgeon.prune:prune",
              "[EXPERIMENTAL] Prune the weights of a model to follow a 2:4 structured sparsity pattern."),
    "weight-strip": ("poly.cli.commands.surgeon.weight_strip:weight_strip", "Strip weights from an ONNX model."),
    "weight-reconstruct": ("poly.cli.commands.surgeon.weight_reconstruct:weight_reconstruct",
                           "Reconstruct proxy weights in a stripped ONNX model."),
}


@click.group(cls=LazyGroup, lazy_subcommands=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
def surgeon() -> Any:
    """Modify ONNX models."""
