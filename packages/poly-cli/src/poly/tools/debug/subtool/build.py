"""Polygraphy-compatible import path `poly.tools.debug.subtool.build`: the `Build` tool of `poly.cli.debug_tools`."""

from poly.cli.debug_tools import Build  # noqa: F401

__all__ = ["Build"]
