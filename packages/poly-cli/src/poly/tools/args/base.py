"""Polygraphy-compatible import path `poly.tools.args.base`: `BaseArgs` from `poly.cli.argparse_tools`."""

from poly.cli.argparse_tools import BaseArgs  # noqa: F401

__all__ = ["BaseArgs"]
