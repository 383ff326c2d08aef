"""Polygraphy-compatible import path `poly.tools.debug.debug`: the `Debug` tool of `poly.cli.debug_tools`."""

from poly.cli.debug_tools import Debug  # noqa: F401

__all__ = ["Debug"]
