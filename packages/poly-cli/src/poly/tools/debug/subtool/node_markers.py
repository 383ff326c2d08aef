"""
The markers of Polygraphy's ``debug reduce`` tool (``polygraphy.tools.debug.subtool.reduce``):
``BisectMarker`` and ``LinearMarker`` move the index where the model is cut (``node_index``)
until the boundary between cuts that keep the failure and cuts that lose it is found. They are
``poly.debug``'s markers (what `poly debug reduce` runs) under Polygraphy's method names.

Example::

    marker = BisectMarker(len(model.graph.node))
    while not marker.stop():
        marker.step(check(cut(model, marker.node_index)), len(model.graph.node))
    marker.finish()
"""

from __future__ import annotations

from poly.core import G_LOGGER
from poly.debug import markers

__all__ = ["BisectMarker", "LinearMarker"]


class _NodeMarker:
    def __init__(self, marker: markers.BisectMarker | markers.LinearMarker) -> None:
        self._marker = marker
        self.num_nodes = marker.num_items

    @property
    def node_index(self) -> int | None:
        """The cut to try next (None once the boundary is found)."""
        return self._marker.index

    @property
    def iteration(self) -> int:
        return self._marker.iteration

    @property
    def good(self) -> int:
        return self._marker.good

    @property
    def bad(self) -> int:
        return self._marker.bad

    def step(self, success: bool, num_nodes: int | None = None) -> int | None:
        """Records the check's result for ``node_index`` (``num_nodes``: the size of the model
        checked, for Polygraphy's signature); returns the next index, None when done."""
        return self._marker.step(bool(success))

    def stop(self) -> bool:
        """Whether the boundary is found."""
        return self._marker.stop()

    def remaining(self) -> int:
        """Iterations left (at most, or as estimated)."""
        return int(self._marker.remaining())

    def finish(self) -> None:
        """Logs where the boundary is."""
        G_LOGGER.info(f"Boundary found between cut {self._marker.good} (passes) and {self._marker.bad} (fails) "
                      f"after {self._marker.iteration} iteration(s)")


class BisectMarker(_NodeMarker):
    """Binary search over the cut index: ``ceil(log2(num_nodes))`` iterations at most."""

    def __init__(self, num_nodes: int, invert: bool = False) -> None:
        super().__init__(markers.BisectMarker(num_nodes, invert=invert))


class LinearMarker(_NodeMarker):
    """One index at a time: ``num_nodes`` iterations at most."""

    def __init__(self, num_nodes: int, invert: bool = False) -> None:
        super().__init__(markers.LinearMarker(num_nodes, invert=invert))
