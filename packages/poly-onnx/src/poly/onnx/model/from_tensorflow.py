"""``OnnxFromTfGraph``: Polygraphy's TensorFlow-to-ONNX loader, present so that code naming it
imports; poly has no TensorFlow backend, so calling it is an error."""

from typing import Any

from poly.core import G_LOGGER, BaseLoader
from poly.core.func import funcify

__all__ = ["OnnxFromTfGraph", "onnx_from_tf_graph"]


class OnnxFromTfGraph(BaseLoader):
    """Polygraphy's TensorFlow-graph converter. poly does not support TensorFlow: calling it
    raises ``PolyException`` saying so (convert with tf2onnx, then load the ``.onnx`` file)."""

    def __init__(self, graph: Any, opset: Any = None, optimize: Any = None) -> None:
        """
        Args:
            graph: A TensorFlow graph (or a loader of one); never used.
            opset (int): The ONNX opset Polygraphy would target.
            optimize (bool): Whether Polygraphy would optimize the graph.
        """
        self.graph = graph
        self.opset = opset
        self.optimize = optimize

    def call_impl(self) -> None:
        G_LOGGER.critical("TensorFlow is not supported by poly (OnnxFromTfGraph): convert the model with "
                          "tf2onnx and load the .onnx file")


onnx_from_tf_graph = funcify(OnnxFromTfGraph)
