"""Polygraphy-compatible import path `poly.tools.base.tool`: `Tool` from `poly.cli.argparse_tools`."""

from poly.cli.argparse_tools import Tool  # noqa: F401

__all__ = ["Tool"]
