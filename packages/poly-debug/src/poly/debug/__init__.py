"""
poly.debug: iterative debugging. An ``IterativeDebugger`` produces an artifact per iteration,
checks it (a command or an interactive prompt), sorts tracked artifacts into good/ and bad/,
and keeps a debug replay; ``Repeat`` and ``Reduce`` are subtools built on it, and
``BisectMarker`` / ``LinearMarker`` are the search strategies subtools share. ``localize``
(``Localizer``) finds which node is to blame when a candidate's outputs diverge from a reference's.
"""

from poly.debug.artifacts import DEFAULT_ARTIFACTS_DIR, ArtifactSorter
from poly.debug.build import Build
from poly.debug.check import (
    CheckCommand,
    CheckResult,
    InteractiveCheck,
    make_check,
    quoted_command_problem,
    split_check_command,
)
from poly.debug.context import IterationContext, SkipIteration
from poly.debug.iteration import IterationSummary, IterativeDebugger
from poly.debug.localize import GraphPlan, Localizer, LocalizeReport
from poly.debug.markers import BisectMarker, LinearMarker
from poly.debug.precision import Precision, PrecisionResult, order_layers
from poly.debug.reduce import Reduce, ReduceResult
from poly.debug.repeat import Repeat
from poly.debug.replay import DEFAULT_REPLAY_PATH, DebugReplay, replay_key, skip_current_path
from poly.debug.subgraph import SubgraphBuilder, describe_nodes, toposort_model
from poly.debug.tensor_info import TensorInfo
from poly.debug.until import Until
from poly.onnx import override_input_shapes

__all__ = [
    "ArtifactSorter",
    "DEFAULT_ARTIFACTS_DIR",
    "CheckCommand",
    "CheckResult",
    "InteractiveCheck",
    "make_check",
    "split_check_command",
    "quoted_command_problem",
    "IterationContext",
    "SkipIteration",
    "IterativeDebugger",
    "Localizer",
    "LocalizeReport",
    "GraphPlan",
    "IterationSummary",
    "BisectMarker",
    "LinearMarker",
    "Reduce",
    "ReduceResult",
    "override_input_shapes",
    "Repeat",
    "Build",
    "Precision",
    "PrecisionResult",
    "order_layers",
    "DebugReplay",
    "DEFAULT_REPLAY_PATH",
    "replay_key",
    "skip_current_path",
    "SubgraphBuilder",
    "describe_nodes",
    "toposort_model",
    "TensorInfo",
    "Until",
]
