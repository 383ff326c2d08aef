"""`poly template`: a group of lazily loaded commands that write starting-point files."""

from __future__ import annotations

import click

from poly.cli.lazy_group import LazyGroup

SUBCOMMANDS = {
    "shard-hints": ("poly.cli.commands.template.shard_hints:shard_hints",
                    "Write a sharding hints file for `poly multi-device shard`."),
}


@click.group(cls=LazyGroup, lazy_subcommands=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
def template():
    """Write template files to start from."""
