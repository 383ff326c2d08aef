"""
Search strategies over a count of items (nodes kept, layers marked...): ``BisectMarker``
(binary search, optionally galloping from the good end first) and ``LinearMarker`` (one item
at a time). Both look for the boundary between passing and failing counts, assuming that
failures are monotone in the count.
"""

import math
from typing import Any

__all__ = ["BisectMarker", "LinearMarker"]


class _Marker:
    """
    Common state: ``good`` and ``bad`` are the counts known (or assumed) to pass and fail;
    ``index`` is the count to try next. With ``invert=False`` small counts pass and large ones
    fail (``good=0``, ``bad=num_items``); with ``invert=True`` the other way round.
    """

    def __init__(self, num_items: Any, invert: bool = False, good: Any = None, bad: Any = None) -> None:
        self.num_items = int(num_items)
        self.invert = bool(invert)
        low, high = 0, self.num_items
        self.good = (high if self.invert else low) if good is None else good
        self.bad = (low if self.invert else high) if bad is None else bad
        self.iteration = 0
        self.observed_bad = False
        """Whether a failure was actually seen (``bad`` may still be the assumed end)."""
        self.observed_good = False
        self.index: Any = None

    @property
    def direction(self) -> Any:
        """+1 when counts grow from good to bad, -1 otherwise."""
        return 1 if self.bad > self.good else -1

    def gap(self) -> Any:
        """Counts strictly between good and bad: the candidates still untested."""
        return max(abs(self.bad - self.good) - 1, 0)

    def stop(self) -> bool:
        """Whether the boundary is found (good and bad are adjacent)."""
        return self.gap() == 0

    def _record(self, success: Any) -> None:
        self.iteration += 1
        if success:
            self.good = self.index
            self.observed_good = True
        else:
            self.bad = self.index
            self.observed_bad = True


class BisectMarker(_Marker):
    """
    Binary search for the boundary: ``ceil(log2(num_items))`` steps at most.

    With ``gallop=True`` it first probes counts 1, 2, 4... away from the good end, then
    bisects: when the boundary is close to the good end (a failure caused by few items) that
    takes ``2*log2(distance)+1`` steps instead of ``log2(num_items)``, and just one when the
    very first probe fails.
    """

    def __init__(self, num_items: Any, invert: bool = False, good: Any = None, bad: Any = None, gallop: bool = False) -> None:
        super().__init__(num_items, invert, good, bad)
        self.gallop = bool(gallop)
        self._stride = 1
        self.index = self._next()

    def _next(self) -> Any:
        if self.stop():
            return None
        d = self.direction
        if self.gallop:
            probe = self.good + d * self._stride
            if (probe - self.bad) * d < 0:
                return probe
            self.gallop = False
        # The midpoint, rounded toward the good end; strictly between good and bad since gap >= 1.
        total = self.good + self.bad
        return total // 2 if d > 0 else -(-total // 2)

    def step(self, success: Any) -> Any:
        """Records the result for ``index`` and returns the next count to try (None when done)."""
        self._record(success)
        if self.gallop:
            if success:
                self._stride *= 2
            else:
                self.gallop = False
        self.index = self._next()
        return self.index

    def remaining(self) -> int:
        """Estimated steps left."""
        gap = self.gap()
        if gap == 0:
            return 0
        if self.gallop:
            return 1  # the optimistic case galloping is for; revised as results come in
        return int(math.ceil(math.log2(gap + 1)))


class LinearMarker(_Marker):
    """
    Walks one count at a time from the bad end toward the good end and stops at the first pass:
    ``abs(bad - good)`` steps at most.
    """

    def __init__(self, num_items: Any, invert: bool = False, good: Any = None, bad: Any = None) -> None:
        super().__init__(num_items, invert, good, bad)
        self.index = self._next()

    def _next(self) -> Any:
        return None if self.stop() else self.bad - self.direction

    def step(self, success: Any) -> Any:
        """Records the result for ``index`` and returns the next count to try (None when done)."""
        self._record(success)
        self.index = self._next()
        return self.index

    def remaining(self) -> Any:
        """Steps left at most."""
        return self.gap()
