"""The `poly` command. Subcommands (run, convert, inspect, surgeon, debug, validate) are added
by their issues; for now it reports its version and help."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

import click


def _version() -> str:
    try:
        return version("poly-cli")
    except PackageNotFoundError:  # running from a source tree without metadata
        return "unknown"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), "--version", prog_name="poly", message="%(prog)s %(version)s")
def cli() -> None:
    """poly: run, compare and debug deep-learning models across inference backends."""


def main() -> None:
    """Entry point of the `poly` console script."""
    cli()
