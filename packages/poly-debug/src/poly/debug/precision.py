"""
``Precision``: finds how many layers must run in higher precision (``poly debug precision``).
Layers are taken in network order (``forward``) or from the outputs back (``reverse``); each
iteration builds an engine with the first N of them marked, checks it, and a ``BisectMarker``
(or ``LinearMarker``) narrows N down to the smallest count that passes.
"""

from typing import Any

from poly.core import G_LOGGER
from poly.debug.markers import BisectMarker, LinearMarker

__all__ = ["Precision", "PrecisionResult", "order_layers"]

DIRECTIONS = ("forward", "reverse")
MODES = ("bisect", "linear")


def order_layers(layer_names: Any, direction: Any) -> Any:
    """The layers in the order they are marked: network order, or reversed."""
    if direction not in DIRECTIONS:
        G_LOGGER.critical(f"--direction must be one of {DIRECTIONS}, got {direction!r}")
    names = list(layer_names)
    return names if direction == "forward" else names[::-1]


class PrecisionResult:
    """The outcome: the smallest passing count found (None if none passed) and its layers."""

    def __init__(self, count: Any, layers: Any, iterations: Any) -> None:
        self.count = count
        self.layers = layers
        self.iterations = iterations

    def __repr__(self) -> str:
        return f"PrecisionResult(count={self.count}, layers={self.layers}, iterations={self.iterations})"


class Precision:
    """Searches for the fewest layers that must run in ``precision`` for the check to pass."""

    def __init__(
        self, debugger: Any, layer_names: Any, build_engine: Any, mode: str = "bisect", direction: str = "forward", precision: str = "float32"
    ) -> None:
        """
        Args:
            debugger (IterativeDebugger): The iteration engine (its ``iter_artifact_path`` is
                    where each engine goes).
            layer_names (Sequence[str]): The candidate layers, in network order.
            build_engine (Callable[[str, List[str]], None]): Builds an engine with the given
                    layers marked to run in ``precision`` and writes it to the path.
            mode (str): "bisect" (binary search) or "linear" (one more layer per iteration).
            direction (str): "forward" (from the inputs) or "reverse" (from the outputs).
            precision (str): The higher precision, "float32" or "float16" (for reporting).
        """
        if mode not in MODES:
            G_LOGGER.critical(f"--mode must be one of {MODES}, got {mode!r}")
        self.debugger = debugger
        self.layers = order_layers(layer_names, direction)
        if not self.layers:
            G_LOGGER.critical("The network has no layers whose precision can be set")
        self.build_engine = build_engine
        self.mode = mode
        self.direction = direction
        self.precision = precision

    def run(self) -> Any:
        """
        Returns:
            PrecisionResult
        """
        count = len(self.layers)
        # Marking no layer is the failure being debugged; marking all of them is assumed to pass.
        marker = (
            BisectMarker(count, invert=True) if self.mode == "bisect" else LinearMarker(count, invert=True)
        )

        def make_artifact(context: Any) -> None:
            n = marker.index
            marked = self.layers[:n]
            context.state["num_marked"] = n
            context.iteration_info["marked_layers"] = marked
            context.iteration_info["precision"] = self.precision
            G_LOGGER.info(f"Marking {n} of {count} layer(s) ({self.direction}) to run in {self.precision}")
            self.build_engine(context.artifact_path, marked)

        def advance(context: Any) -> bool:
            if context.state.get("num_marked") != marker.index:
                G_LOGGER.critical(
                    f"The debug replay does not match this search: iteration {context.iteration} marked "
                    f"{context.state.get('num_marked')} layers, this run would mark {marker.index}"
                )
            return marker.step(context.success) is None

        if marker.index is None:  # a single layer: nothing between "none" and "all" to try
            G_LOGGER.finish(f"The network has one candidate layer: run {self.layers} in {self.precision}")
            return PrecisionResult(count, list(self.layers), 0)
        summary = self.debugger.iterate(
            make_artifact, advance, remaining=marker.remaining, suffix="precision"
        )
        n = marker.good
        if marker.observed_good:
            G_LOGGER.finish(
                f"To pass, run the first {n} layer(s) ({self.direction} order) in {self.precision}: {self.layers[:n]}"
            )
        else:
            G_LOGGER.warning(
                f"Every count of layers in {self.precision} below {count} failed the check: only running all "
                f"{count} layers in {self.precision} (not checked) may pass; the failure may not be a precision problem"
            )
        return PrecisionResult(n, self.layers[:n], summary.total)
