"""
``RunGraphs``, the graphs a device keeps of repeated comparisons (poly.compare.stats.gpu.run_graph):
a run is captured the second time it is seen, the least recently used graphs are dropped beyond
their number or the memory budget, and every dropped graph's memory is given back once. The
graphs themselves are launched on the GPU (tests/compare/test_compare_gpu_stats.py); these are
the bookkeeping rules, which run anywhere.
"""

from __future__ import annotations

import numpy as np

from poly.compare.stats.gpu.run_graph import GRAPHS_KEPT, SEEN_KEPT, RunGraph, RunGraphs


def _graph(nbytes: int, tag: str, released: list[str]) -> RunGraph:
    readback = np.zeros(512, dtype=np.uint8)
    return RunGraph(exec_handle=1, release_graph=lambda: released.append(tag), buffers=[(nbytes, 0x1000, True)],
                    pinned=[readback], readback=readback, reads=[])


class _Freed:
    def __init__(self):
        self.released: list[str] = []
        self.freed: list[RunGraph] = []

    def __call__(self, graph: RunGraph) -> None:
        graph.release_graph()
        self.freed.append(graph)


def test_a_run_is_worth_capturing_the_second_time_it_is_seen():
    graphs = RunGraphs(1 << 30, _Freed())
    assert not graphs.repeated("a")
    assert not graphs.repeated("b")
    assert graphs.repeated("a")  # seen before: capture it
    assert not graphs.repeated("a")  # (the key is forgotten once captured: its graph is what counts now)
    for k in range(SEEN_KEPT + 1):  # the oldest sighting is forgotten beyond SEEN_KEPT
        graphs.repeated(("other", k))
    assert not graphs.repeated("b")
    graphs.refuse("c")  # (a run whose capture failed)
    assert not graphs.repeated("c") and not graphs.repeated("c")


def test_the_least_recently_used_graphs_are_dropped_beyond_their_number():
    freed = _Freed()
    graphs = RunGraphs(1 << 30, freed)
    for k in range(GRAPHS_KEPT):
        graphs.add(k, _graph(1024, str(k), freed.released))
    assert graphs.get(0) is not None  # 0 is now the most recently used
    graphs.add("new", _graph(1024, "new", freed.released))
    assert len(graphs) == GRAPHS_KEPT
    assert graphs.get(1) is None and graphs.get(0) is not None and graphs.get("new") is not None
    assert freed.released == ["1"]


def test_runs_taking_turns_beyond_the_graphs_kept_are_captured_once_then_run_plainly():
    # more outputs than graphs, compared in turn: each capture would drop the graph whose turn is
    # next; a run whose graph went unreplayed is not captured again, so captures stop
    freed = _Freed()
    graphs = RunGraphs(1 << 30, freed)
    outputs = GRAPHS_KEPT + 5
    captures = 0
    for _ in range(6):  # iterations, each comparing every output once
        for k in range(outputs):
            graph = graphs.get(k)
            if graph is not None:
                graph.replays += 1
            elif graphs.repeated(k):
                graphs.add(k, _graph(64, str(k), freed.released))
                captures += 1
    assert outputs <= captures < 2 * outputs
    assert not any(graphs.repeated(k) for k in range(outputs) if graphs.get(k) is None)


def test_a_replayed_graph_dropped_by_the_lru_may_be_captured_again():
    freed = _Freed()
    graphs = RunGraphs(1 << 30, freed)
    graphs.add("used", _graph(64, "used", freed.released))
    graphs.get("used").replays = 4
    for k in range(GRAPHS_KEPT):  # "used" is the least recently used: dropped
        graphs.add(k, _graph(64, str(k), freed.released))
    assert graphs.get("used") is None
    assert not graphs.repeated("used") and graphs.repeated("used")  # seen twice again: captured again


def test_the_memory_budget_drops_graphs_and_refuses_one_larger_than_it():
    freed = _Freed()
    graphs = RunGraphs(10_000, freed)
    graphs.add("a", _graph(4_000, "a", freed.released))
    graphs.add("b", _graph(4_000, "b", freed.released))
    graphs.add("c", _graph(4_000, "c", freed.released))  # 12,000 bytes: a goes
    assert graphs.get("a") is None and graphs.get("b") is not None and graphs.get("c") is not None
    big = _graph(20_000, "big", freed.released)
    graphs.add("big", big)  # larger than the whole budget: given back at once, nothing else dropped
    assert graphs.get("big") is None and len(graphs) == 2
    assert freed.released == ["a", "big"]


def test_a_graph_kept_again_under_its_key_frees_the_old_one_and_clear_frees_all():
    freed = _Freed()
    graphs = RunGraphs(1 << 30, freed)
    graphs.add("k", _graph(100, "old", freed.released))
    graphs.add("k", _graph(100, "new", freed.released))
    graphs.add("j", _graph(100, "j", freed.released))
    assert freed.released == ["old"]
    graphs.clear()
    assert sorted(freed.released) == ["j", "new", "old"] and len(graphs) == 0
    assert len({id(g) for g in freed.freed}) == 3  # each freed once


def test_results_are_fresh_copies_of_the_readback():
    readback = np.arange(512, dtype=np.uint8)
    rec = np.dtype([("x", "<u4"), ("y", "<f8")])
    graph = RunGraph(exec_handle=1, release_graph=lambda: None, buffers=[], pinned=[readback], readback=readback,
                     reads=[(0, np.dtype(np.uint8), (4,)), (256, rec, (1,)), (0, np.dtype(np.float32), (0,))])
    first, record, empty = graph.results()
    assert first.tolist() == [0, 1, 2, 3] and empty.shape == (0,)
    assert record.tobytes() == readback[256:256 + rec.itemsize].tobytes()
    readback[0] = 99  # the next launch's results do not change what was handed out
    assert first[0] == 0 and graph.results()[0][0] == 99
    into = [np.zeros(4, np.uint8), np.zeros(1, rec), np.zeros(0, np.float32)]
    filled = graph.results(into)  # (a capture's first launch fills the run's own arrays)
    assert all(a is b for a, b in zip(filled, into)) and into[0].tolist() == [99, 1, 2, 3]
    assert into[1].tobytes() == record.tobytes()

