"""
``LocalizeReport``: what ``poly debug localize`` found, aggregated over the samples.

Per node (in topological order): its full-run error (its outputs against the reference's), its
*own* error (the node run alone on the reference's inputs: a shadow run) and the *inherited*
error (full minus own, each figure at least 0), each as the worst and the median over the
samples; the verdict; and whether it produced NaN/Inf. Figures per sample and output:
``severity`` (how many times over its tolerance: at most 1 passes, inf for NaN or a bad pair),
``max_absdiff``, ``max_reldiff`` and ``rel_l2`` (the L2 norm of the difference over that of the
reference).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from poly.core import lazy_import, save_json

np = lazy_import("numpy")

__all__ = ["FIGURES", "NodeRecord", "LocalizeReport", "worst_and_median"]

FIGURES = ("severity", "max_absdiff", "max_reldiff", "rel_l2")
"""The error figures kept per node and sample."""


def _clean(value: float) -> float | None:
    """JSON has no NaN: NaN becomes None; inf stays (Python's json writes Infinity)."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def worst_and_median(samples: Sequence[Mapping[str, float]]) -> dict[str, dict[str, float | None]] | None:
    """``{"worst": {figure: max}, "median": {figure: median}}`` over per-sample figures; None if empty."""
    if not samples:
        return None
    worst, median = {}, {}
    for key in FIGURES:
        values = np.array([s.get(key, math.nan) for s in samples], dtype=np.float64)
        values = np.where(np.isnan(values), np.inf, values) if key == "severity" else values
        finite_or_inf = values[~np.isnan(values)]
        worst[key] = _clean(float(finite_or_inf.max())) if finite_or_inf.size else None
        median[key] = _clean(float(np.median(finite_or_inf))) if finite_or_inf.size else None
    return {"worst": worst, "median": median}


def inherited_figures(full: Mapping[str, float], own: Mapping[str, float]) -> dict[str, float]:
    """Full minus own, figure by figure, at least 0 (inf minus inf counts as 0)."""
    out = {}
    for key in FIGURES:
        a, b = full.get(key, math.nan), own.get(key, math.nan)
        diff = a - b if not (math.isinf(a) and math.isinf(b)) else 0.0
        out[key] = max(diff, 0.0) if not math.isnan(diff) else math.nan
    return out


@dataclass
class NodeRecord:
    """Everything seen about one node over the samples."""

    name: str
    op: str
    index: int
    outputs: list[str]
    full: list[dict[str, float]] = field(default_factory=list)
    """Per sample where its outputs were compared: the figures of its worst output."""
    own: list[dict[str, float]] = field(default_factory=list)
    """Per sample where it was shadowed: the figures of its own run."""
    inherited: list[dict[str, float]] = field(default_factory=list)
    failed_samples: list[int] = field(default_factory=list)
    own_failed_samples: list[int] = field(default_factory=list)
    shadow_errors: list[str] = field(default_factory=list)
    nonfinite_candidate: bool = False
    nonfinite_reference: bool = False
    nonfinite_from_finite_inputs: bool = False
    trt_layers: list[str] | None = None

    @property
    def passed(self) -> bool:
        return not self.failed_samples

    def rank_key(self) -> tuple[float, ...]:
        """Most to blame first: own worst severity, own median severity, own worst rel_l2 (descending);
        nodes that could not be shadowed after those that were, by their full-run error."""
        own = worst_and_median(self.own)
        if own is None:
            full = worst_and_median(self.full) or {"worst": {}}
            return (1, -(full["worst"].get("severity") or 0.0), 0.0, 0.0, self.index)
        return (0, -(own["worst"]["severity"] or 0.0), -(own["median"]["severity"] or 0.0),
                -(own["worst"]["rel_l2"] or 0.0), self.index)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "op": self.op,
            "index": self.index,
            "outputs": list(self.outputs),
            "trt_layers": self.trt_layers,
            "passed": self.passed,
            "samples_compared": len(self.full),
            "failed_samples": list(self.failed_samples),
            "error": worst_and_median(self.full),
            "own": worst_and_median(self.own),
            "inherited": worst_and_median(self.inherited),
            "own_passed": (not self.own_failed_samples) if self.own else None,
            "shadow_errors": list(self.shadow_errors) or None,
            "nonfinite": {"candidate": self.nonfinite_candidate, "reference": self.nonfinite_reference,
                          "from_finite_inputs": self.nonfinite_from_finite_inputs},
        }


@dataclass
class LocalizeReport:
    """The result of ``Localizer.run``."""

    nodes: list[NodeRecord]
    """Every node whose outputs were compared at least once, or that made NaN/Inf, in topological order."""
    samples: int
    first_divergent: str | None
    first_nonfinite: str | None
    info: dict[str, Any] = field(default_factory=dict)
    """Model, reference, runners, options, evaluations, time and memory, as given by the caller."""

    @property
    def ranking(self) -> list[str]:
        """Names of the divergent nodes, most to blame first."""
        return [r.name for r in sorted((r for r in self.nodes if not r.passed), key=NodeRecord.rank_key)]

    def node(self, name: str) -> NodeRecord:
        for record in self.nodes:
            if record.name == name:
                return record
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": "poly debug localize",
            **self.info,
            "samples": self.samples,
            "first_divergent": self.first_divergent,
            "first_nonfinite": self.first_nonfinite,
            "ranking": self.ranking,
            "nodes": [record.to_dict() for record in self.nodes],
        }

    def save_json(self, path: str) -> None:
        save_json(self.to_dict(), path, description="localize report")

    def save_html(self, path: str) -> None:
        from poly.core import save_file
        from poly.debug.localize.html_report import render_html

        save_file(render_html(self.to_dict()), path, mode="w", description="localize HTML report")
