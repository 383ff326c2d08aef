"""`poly debug`: iterative debugging subcommands, loaded lazily."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.lazy_group import LazyGroup

SUBCOMMANDS = {
    "build": (
        "poly.cli.commands.debug.build:build",
        "[EXPERIMENTAL] Repeatedly build an engine to isolate faulty tactics.",
    ),
    "precision": (
        "poly.cli.commands.debug.precision:precision",
        "[EXPERIMENTAL] Mark layers to run in higher precision to find what accuracy needs.",
    ),
    "repeat": (
        "poly.cli.commands.debug.repeat:repeat",
        "[EXPERIMENTAL] Run an arbitrary command repeatedly, sorting artifacts.",
    ),
    "localize": (
        "poly.cli.commands.debug.localize:localize",
        "Find which node is to blame when a model's outputs diverge from a reference.",
    ),
    "reduce": (
        "poly.cli.commands.debug.reduce:reduce",
        "[EXPERIMENTAL] Reduce a failing ONNX model to its smallest failing part.",
    ),
}


@click.group(
    cls=LazyGroup, lazy_subcommands=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@LoggingArgs.options()
def debug() -> Any:
    """[EXPERIMENTAL] Debug a wide variety of model issues.

    Every subtool iterates: it produces something (a model, an engine, ...), judges it with
    the --check command (or by asking you), sorts the --artifacts into good/ and bad/, and
    changes what it produces next."""
