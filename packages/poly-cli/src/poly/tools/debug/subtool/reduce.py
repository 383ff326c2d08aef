"""Polygraphy-compatible import path `poly.tools.debug.subtool.reduce`: the `Reduce` tool of `poly.cli.debug_tools`."""

from poly.cli.debug_tools import Reduce  # noqa: F401

__all__ = ["Reduce"]
