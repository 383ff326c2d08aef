"""Polygraphy-compatible import path `poly.tools.debug.subtool.repeat`: the `Repeat` tool of `poly.cli.debug_tools`."""

from poly.cli.debug_tools import Repeat  # noqa: F401

__all__ = ["Repeat"]
