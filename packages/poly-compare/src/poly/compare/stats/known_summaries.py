"""
The value summaries (``ErrorStats.a`` and ``.b``) of the output pairs ``CompareFunc.simple`` has
already computed, remembered by the arrays themselves, so that the comparator's report written
after the comparisons (``report_lines.pair_stats``) does not make a second pass over both outputs
for them: on a model with every tensor marked as an output (``--onnx-outputs mark all``), half the
report's passes. (A dataset's validation, which reports no output, remembers nothing.)

An entry is found only for the very same two NumPy arrays (by identity, through weak
references: it goes with its first array), so the report of any other pair, or of host copies
of device arrays, computes its own. Arrays are taken not to change between a comparison and its
report (the comparator runs nothing in between).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from poly.compare.stats.native import ValueSummary

__all__ = ["remember_value_summaries", "known_value_summaries"]


# (No lock: a dict's get, set and pop are atomic, and a lock would deadlock where a collection of
# a cycle, run inside a locked section, calls an entry's weak-reference callback.)
_KNOWN: dict[int, tuple[weakref.ref[np.ndarray], weakref.ref[np.ndarray], ValueSummary, ValueSummary]] = {}


def remember_value_summaries(a: Any, b: Any, stats: Any) -> None:
    """Remembers ``stats.a`` and ``stats.b`` (an ``ErrorStats`` of ``a`` against ``b``) for the pair,
    detached from the arrays (``ValueSummary.detached``: a kept summary must not keep its arrays
    alive); nothing for objects that are not NumPy arrays."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        return
    key = id(a)

    def forget(ref: weakref.ref[np.ndarray]) -> None:  # (a's entry only, not one made since under its id)
        entry = _KNOWN.get(key)
        if entry is not None and entry[0] is ref:
            _KNOWN.pop(key, None)

    _KNOWN[key] = (weakref.ref(a, forget), weakref.ref(b), stats.a.detached(), stats.b.detached())


def known_value_summaries(a: Any, b: Any) -> tuple[ValueSummary, ValueSummary] | None:
    """The value summaries remembered for exactly these two arrays, or None."""
    entry = _KNOWN.get(id(a))
    if entry is None or entry[0]() is not a or entry[1]() is not b:
        return None
    return entry[2], entry[3]
