"""`poly check`: a group of lazily loaded commands that check and validate models."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.lazy_group import LazyGroup

SUBCOMMANDS = {
    "lint": ("poly.cli.commands.check.lint:lint",
             "[EXPERIMENTAL] Find invalid, unused and badly named nodes of an ONNX model; write a JSON report."),
}


@click.group(cls=LazyGroup, lazy_subcommands=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
def check() -> Any:
    """Check and validate models."""
