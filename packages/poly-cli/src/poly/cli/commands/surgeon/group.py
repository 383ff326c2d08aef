"""`poly surgeon`: a group of lazily loaded ONNX-modifying commands."""

from __future__ import annotations

import click

from poly.cli.lazy_group import LazyGroup

SUBCOMMANDS = {
    "extract": ("poly.cli.commands.surgeon.extract:extract", "Extract a subgraph based on the specified inputs and outputs."),
    "sanitize": ("poly.cli.commands.surgeon.sanitize:sanitize", "Clean up, optimize, and/or change input shapes."),
}


@click.group(cls=LazyGroup, lazy_subcommands=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
def surgeon():
    """Modify ONNX models."""
