"""Polygraphy-compatible import path `poly.tools.debug.subtool.reduce`: the `Reduce` tool of
`poly.cli.debug_tools` and the markers of `poly.tools.debug.subtool.node_markers`."""

from poly.cli.debug_tools import Reduce  # noqa: F401
from poly.tools.debug.subtool.node_markers import BisectMarker, LinearMarker  # noqa: F401

__all__ = ["Reduce"]  # the markers are imported by name, as from Polygraphy's module
