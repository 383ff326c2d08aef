"""`poly multi-device`: a group of lazily loaded multi-device commands."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.lazy_group import LazyGroup

SUBCOMMANDS = {
    "shard": ("poly.cli.commands.multi_device.shard:shard",
              "Convert a single-device ONNX model to a multi-device one using a sharding hints file."),
}


@click.group(cls=LazyGroup, lazy_subcommands=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
def multi_device() -> Any:
    """Multi-device operations on ONNX models."""
