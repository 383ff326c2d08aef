"""
``poly debug localize``: which node of a model is to blame when a candidate's outputs diverge
from a reference's. ``graph_plan`` (the walk and its segments), ``executors`` (running a piece of
a model on a backend), ``tensor_sources`` (where a tensor's value comes from: a model run segment
by segment, saved results, a TensorRT engine's debug tensors: ``trt_source``), ``localizer`` (the comparison, the shadow runs), ``report`` (per node
figures over the samples, the ranking, JSON) and ``html_report`` (the HTML page).
"""

from poly.debug.localize.executors import EXECUTOR_KINDS, OnnxExecutor
from poly.debug.localize.graph_plan import DEFAULT_SEGMENT_BYTES, DEFAULT_SEGMENT_NODES, GraphPlan, Segment
from poly.debug.localize.html_report import render_html
from poly.debug.localize.localizer import OWN_SUFFIX, Localizer, figures
from poly.debug.localize.report import FIGURES, LocalizeReport, NodeRecord, worst_and_median
from poly.debug.localize.tensor_sources import ModelSource, SavedSource, cast_feed
from poly.debug.localize.trt_source import TrtExecutor, TrtSource, debug_marked_network

__all__ = [
    "GraphPlan",
    "Segment",
    "DEFAULT_SEGMENT_BYTES",
    "DEFAULT_SEGMENT_NODES",
    "OnnxExecutor",
    "EXECUTOR_KINDS",
    "ModelSource",
    "SavedSource",
    "cast_feed",
    "TrtSource",
    "TrtExecutor",
    "debug_marked_network",
    "render_html",
    "Localizer",
    "OWN_SUFFIX",
    "figures",
    "LocalizeReport",
    "NodeRecord",
    "FIGURES",
    "worst_and_median",
]
