"""Polygraphy-compatible import path `poly.tools.debug.subtool.precision`: the `Precision` tool of
`poly.cli.debug_tools` and the markers of `poly.tools.debug.subtool.layer_markers`."""

from poly.cli.debug_tools import Precision  # noqa: F401
from poly.tools.debug.subtool.layer_markers import BisectMarker, LinearMarker  # noqa: F401

__all__ = ["Precision"]  # the markers are imported by name, as from Polygraphy's module
