"""`poly plugin`: a group of lazily loaded commands that substitute plugins for subgraphs of
ONNX models."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.lazy_group import LazyGroup

SUBCOMMANDS = {
    "match": ("poly.cli.commands.plugin.match:match",
              "Find subgraphs that plugins can replace and save them to a config file."),
    "list": ("poly.cli.commands.plugin.match:list_matches",
             "Find subgraphs that plugins can replace and print how many per plugin (no file written)."),
    "replace": ("poly.cli.commands.plugin.replace:replace",
                "Replace the subgraphs of a config file with plugin nodes."),
}


@click.group(cls=LazyGroup, lazy_subcommands=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
def plugin() -> Any:
    """Plugin substitution in ONNX models: match plugin patterns, review the config, replace."""
