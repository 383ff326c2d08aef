"""
The markers of Polygraphy's ``debug precision`` tool (``polygraphy.tools.debug.subtool.precision``):
``BisectMarker`` and ``LinearMarker`` choose how many layers, from the network's start
(``forward``) or end (``reverse``), run in higher precision, until the fewest that pass are found.

Example::

    marker = BisectMarker(len(layers), "forward")
    while True:
        marked = [layers[i] for i in marker.select_layers()]
        if marker.step(build_and_check(marked)):  # True when the search is over
            break
    marker.success_message()
"""

from __future__ import annotations

import math

from poly.core import G_LOGGER

__all__ = ["BisectMarker", "LinearMarker"]

DIRECTIONS = ("forward", "reverse")


class _LayerMarker:
    """The shared state: ``count`` layers are marked now; ``good`` is the fewest seen passing
    (None: none yet), ``bad`` the most seen failing (0: marking none is the failure debugged)."""

    def __init__(self, max_layers: int, direction: str, count: int) -> None:
        if direction not in DIRECTIONS:
            G_LOGGER.critical(f"direction must be one of {DIRECTIONS}, not {direction!r}")
        self.max_layers = int(max_layers)
        self.direction = direction
        self.count = count
        self.good: int | None = None
        self.bad = 0
        self.done = False

    def select_layers(self) -> range:
        """The indices of the layers to mark in this iteration."""
        where = "first" if self.direction == "forward" else "last"
        G_LOGGER.info(f"Selecting the {where} {self.count} layer(s) to run in higher precision")
        if self.direction == "forward":
            return range(0, self.count)
        return range(self.max_layers - self.count, self.max_layers)

    def _record(self, success: bool) -> None:
        if success:
            self.good = self.count if self.good is None else min(self.good, self.count)
        else:
            self.bad = max(self.bad, self.count)

    def success_message(self) -> None:
        """Logs the outcome: how many layers to run in higher precision, or that none passed."""
        if self.good is None:
            G_LOGGER.error(f"No count of layers passed the check, all {self.max_layers} included: the failure may not "
                           "be a precision problem")
            return
        where = "first" if self.direction == "forward" else "last"
        G_LOGGER.info(f"To pass the check, run the {where} {self.good} layer(s) in higher precision")


class BisectMarker(_LayerMarker):
    """Binary search over the count of marked layers: all of them first (if that fails, nothing
    will pass), then halves of the interval between the most failing and fewest passing counts."""

    def __init__(self, max_layers: int, direction: str) -> None:
        super().__init__(max_layers, direction, int(max_layers))

    def step(self, success: bool) -> bool:
        """Records whether the marked count passed; returns True when the search is over."""
        self._record(bool(success))
        if self.good is None or self.good - self.bad <= 1:
            self.done = True
            self.success_message()
            return True
        self.count = (self.good + self.bad) // 2
        return False

    def remaining(self) -> int:
        """Iterations left at most."""
        if self.done:
            return 0
        high = self.max_layers if self.good is None else self.good
        return max(int(math.ceil(math.log2(max(high - self.bad, 1)))), 1)


class LinearMarker(_LayerMarker):
    """One more marked layer each iteration, from none, until a count passes."""

    def __init__(self, max_layers: int, direction: str) -> None:
        super().__init__(max_layers, direction, 0)

    def step(self, success: bool) -> bool:
        """Records whether the marked count passed; returns True when the search is over."""
        self._record(bool(success))
        if success or self.count >= self.max_layers:
            self.done = True
            self.success_message()
            return True
        self.count += 1
        return False

    def remaining(self) -> int:
        """Iterations left at most."""
        return 0 if self.done else self.max_layers - self.count + 1
