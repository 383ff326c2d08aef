"""Polygraphy-compatible import path `poly.tools.args.base`: `BaseArgs` and `BaseRunnerArgs` from
`poly.cli.argparse_tools`."""

from poly.cli.argparse_tools import BaseArgs, BaseRunnerArgs  # noqa: F401

__all__ = ["BaseArgs", "BaseRunnerArgs"]
