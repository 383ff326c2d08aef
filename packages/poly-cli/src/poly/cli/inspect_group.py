"""`poly inspect`: a group of lazily loaded inspection commands."""

from __future__ import annotations

import click

from poly.cli.lazy_group import LazyGroup

SUBCOMMANDS = {
    "model": ("poly.cli.inspect_model:inspect_model", "Display information about an ONNX model."),
    "data": ("poly.cli.inspect_data:inspect_data", "Display information about inference inputs or results."),
}


@click.group(cls=LazyGroup, lazy_subcommands=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
def inspect():
    """View information about various types of files."""
