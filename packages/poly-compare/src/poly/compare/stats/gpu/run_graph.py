"""
``RunGraph``: a comparison's device work captured once as a CUDA graph, and replayed as one launch
when the same comparison comes again; ``RunGraphs``, a device's graphs.

A comparison of a mid-size or small output on the GPU spends more of its time in the host's
launch sequence (a dozen driver calls, each after Python that prepares it) than in its kernels,
and the GPU idles between dependent operations. The same two buffers are compared again and
again (a runner's outputs, a validation's iterations), so the second time a run is seen its
operations are captured on a private stream into a graph that owns its scratch memory and the
page-locked memory its results come back through; from the third time on, the whole sequence
is one launch and one wait. A run is the same when its arrays (address, shape, strides, dtype,
stream), its arithmetic, its kernels' build and what it computes are: the kernels take their parameters by value
and data-dependent choices are made on the device, so a graph replays the run exactly, whatever
the arrays hold.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["RunGraph", "RunGraphs", "GRAPHS_KEPT", "BUDGET_SHARE", "SEEN_KEPT", "REFUSED_KEPT"]

GRAPHS_KEPT = 32  # graphs a device keeps (least recently used dropped first)...
BUDGET_SHARE = 128  # ... holding at most 1/BUDGET_SHARE of the device's memory in scratch between them
SEEN_KEPT = 64  # runs remembered as seen once (a run is captured when it comes the second time)
REFUSED_KEPT = 1024  # runs not captured again (a graph dropped unreplayed, a capture that failed)


@dataclass(eq=False)
class RunGraph:
    """One captured run: the instantiated graph (``exec_handle`` for the launch), the device memory
    it owns (``buffers``: (size, address, pooled) each), the page-locked arrays it copies from and
    into (``pinned``), where each result lies in ``readback`` (offset, dtype, shape), and the
    ``context`` the run's caller keeps to read the results (opaque here)."""

    exec_handle: int
    release_graph: Callable[[], None]
    buffers: list[tuple[int, int, bool]]
    pinned: list[np.ndarray]
    readback: np.ndarray
    reads: list[tuple[int, np.dtype, tuple[int, ...]]]
    context: Any = None
    replays: int = 0
    nbytes: int = field(init=False)

    def __post_init__(self) -> None:
        self.nbytes = sum(size for size, _, _ in self.buffers)

    def results(self, into: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
        """The results of the last launch, copied from the graph's page-locked memory into ``into``
        (arrays of the results' dtypes and shapes) or into fresh arrays."""
        out = list(into) if into is not None else [np.empty(shape, dtype=dtype) for _, dtype, shape in self.reads]
        for (offset, _, _), arr in zip(self.reads, out, strict=True):
            np.copyto(arr.reshape(-1).view(np.uint8), self.readback[offset:offset + arr.nbytes])
        return out


class RunGraphs:
    """A device's captured runs by key, and the keys seen once. ``free(graph)`` gives a dropped
    graph's memory back (the device's pool for pooled buffers); it runs under the device's lock,
    when no launch of the graph can be in flight (every run waits for its work before it ends).

    More runs taking turns than graphs are kept (a model with many outputs) would otherwise make
    each capture drop a graph before its turn came again, a capture a comparison and no replay: a
    run whose graph is dropped unreplayed is not captured again."""

    def __init__(self, budget_bytes: int, free: Callable[[RunGraph], None]):
        self.budget_bytes = budget_bytes
        self._free = free
        self._graphs: OrderedDict[Hashable, RunGraph] = OrderedDict()
        self._seen: OrderedDict[Hashable, None] = OrderedDict()
        self._refused: OrderedDict[Hashable, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._graphs)

    def graphs(self) -> list[RunGraph]:
        """The graphs kept, least recently used first."""
        return list(self._graphs.values())

    def get(self, key: Hashable) -> RunGraph | None:
        """The graph of run ``key`` (now the most recently used), or None."""
        graph = self._graphs.get(key)
        if graph is not None:
            self._graphs.move_to_end(key)
        return graph

    def repeated(self, key: Hashable) -> bool:
        """Whether run ``key`` (which has no graph) was seen before: it is worth capturing. A key seen
        for the first time is remembered; a run whose graph was dropped unreplayed never is."""
        if key in self._refused:
            return False
        if key in self._seen:
            del self._seen[key]
            return True
        _remember(self._seen, key, SEEN_KEPT)
        return False

    def refuse(self, key: Hashable) -> None:
        """Never captures run ``key`` again (its capture failed, or its graph went unreplayed)."""
        _remember(self._refused, key, REFUSED_KEPT)

    def add(self, key: Hashable, graph: RunGraph) -> None:
        """Keeps ``graph`` for run ``key``, dropping the least recently used graphs beyond
        GRAPHS_KEPT or the memory budget (a graph larger than the whole budget is not kept)."""
        if graph.nbytes > self.budget_bytes:
            self.refuse(key)
            self._free(graph)
            return
        old = self._graphs.pop(key, None)
        if old is not None:
            self._free(old)
        self._graphs[key] = graph
        while len(self._graphs) > GRAPHS_KEPT or sum(g.nbytes for g in self._graphs.values()) > self.budget_bytes:
            dropped_key, dropped = self._graphs.popitem(last=False)
            if dropped.replays == 0:
                self.refuse(dropped_key)
            self._free(dropped)

    def clear(self) -> None:
        """Drops every graph."""
        while self._graphs:
            _, dropped = self._graphs.popitem(last=False)
            self._free(dropped)
        self._seen.clear()
        self._refused.clear()


def _remember(keys: OrderedDict[Hashable, None], key: Hashable, kept: int) -> None:
    """Adds ``key`` to ``keys``, forgetting the oldest beyond ``kept``."""
    keys[key] = None
    if len(keys) > kept:
        keys.popitem(last=False)
