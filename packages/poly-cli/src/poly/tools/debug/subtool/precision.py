"""Polygraphy-compatible import path `poly.tools.debug.subtool.precision`: the `Precision` tool of `poly.cli.debug_tools`."""

from poly.cli.debug_tools import Precision  # noqa: F401

__all__ = ["Precision"]
