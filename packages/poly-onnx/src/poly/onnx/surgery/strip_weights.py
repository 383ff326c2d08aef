"""
``StripWeights``: removes the data of the initializers TensorRT can refit (weights of
convolutions, matrix multiplications, large gathers and slices, plugins) and marks them as
TensorRT's weightless ONNX models are marked: each stripped initializer keeps its name, data
type and dimensions and gets the doc string ``TRT_WEIGHTLESS/`` (``TRT_WEIGHTLESS/SPARSE_2_4``
when it was 2:4 sparse), and the model's doc string gains ``TRT_WEIGHTLESS``. TensorRT builds
such a model as a weight-stripped engine, refittable from the original model; ``poly surgeon
weight-reconstruct`` (or Polygraphy's) fills the weights back in.
"""

from collections.abc import Iterator
from typing import Any

from poly.core import G_LOGGER
from poly.core.func import funcify
from poly.core.optional_import import lazy_import
from poly.onnx.model.base import BaseLoadOnnxCopy
from poly.onnx.surgery.sparsity import SparsityPruner
from poly.onnx.surgery.tensor_data import clear_data

onnx = lazy_import("onnx")

__all__ = [
    "WEIGHTLESS_MARKER",
    "SPARSE_MARKER",
    "StripWeights",
    "strip_weights",
    "strippable_initializers",
    "is_weightless",
    "weightless_doc_string",
]

WEIGHTLESS_MARKER = "TRT_WEIGHTLESS"
"""Doc string marker of a stripped initializer (``TRT_WEIGHTLESS/<sparsity>``) and of its model."""
SPARSE_MARKER = "SPARSE_2_4"
"""Sparsity part of a stripped initializer's doc string when its values were 2:4 sparse."""

WEIGHT_OPS = {"Conv": (2, 3), "ConvTranspose": (2, 3), "Gemm": (2, 3), "MatMul": (2,)}
"""Operators whose initializer inputs are stripped -> the input counts they may have."""
WEIGHT_OP_FEED_POSITIONS = {"Conv": (0,), "ConvTranspose": (0,), "Gemm": (0, 1, 2), "MatMul": (0, 1)}
"""Inputs of ``WEIGHT_OPS`` through which a Transpose or a QuantizeLinear-DequantizeLinear pair
feeding them has its first input stripped."""
LARGE_WEIGHT_OPS = {"Gather": (2,), "Slice": (3, 4, 5)}
"""Operators whose initializer inputs are stripped when large (see ``MIN_SIZES``)."""
MIN_SIZES = {"Conv": 1, "ConvTranspose": 1, "Gather": 1024, "Gemm": 1, "Slice": 1024}
"""Fewest elements an initializer of these operators must have to be stripped."""
STRIPPED_INPUTS = {"QuantizeLinear": (0,), "Slice": (0,)}
"""Operators of which only these inputs are stripped."""
QUANTIZE_INPUT_COUNTS = (2, 3)


def is_weightless(tensor: Any) -> bool:
    """Whether an initializer (``onnx.TensorProto``) is marked as stripped."""
    return WEIGHTLESS_MARKER in tensor.doc_string


def weightless_doc_string(sparse: Any) -> str:
    """The doc string of a stripped initializer."""
    return "/".join([WEIGHTLESS_MARKER, SPARSE_MARKER if sparse else ""])


def _is_plugin(node: Any) -> bool:
    return not onnx.defs.has(node.op_type)


def _producer(producers: Any, name: Any, op: Any, input_counts: Any) -> Any:
    node = producers.get(name)
    if node is not None and node.op_type == op and len(node.input) in input_counts:
        return node
    return None


def _feeding_nodes(graph: Any) -> Iterator[Any]:
    """Yields each node whose inputs are candidates for stripping (once per pattern match)."""
    producers = {name: node for node in graph.node for name in node.output}
    for node in graph.node:
        counts = WEIGHT_OPS.get(node.op_type) or LARGE_WEIGHT_OPS.get(node.op_type)
        if counts and len(node.input) in counts:
            yield node
        if node.op_type not in WEIGHT_OPS or len(node.input) not in WEIGHT_OPS[node.op_type]:
            continue
        for position in WEIGHT_OP_FEED_POSITIONS[node.op_type]:
            if position >= len(node.input):
                continue
            transpose = _producer(producers, node.input[position], "Transpose", (1,))
            if transpose is not None:
                yield transpose
            dequantize = _producer(producers, node.input[position], "DequantizeLinear", QUANTIZE_INPUT_COUNTS)
            if dequantize is not None:
                quantize = _producer(producers, dequantize.input[0], "QuantizeLinear", QUANTIZE_INPUT_COUNTS)
                if quantize is not None:
                    yield quantize
    for node in graph.node:
        if _is_plugin(node):
            yield node


def strippable_initializers(model: Any, exclude: Any = ()) -> tuple[Any, ...]:
    """
    The names of the initializers ``StripWeights`` strips, and the names of ``exclude`` that
    were not found among the candidates.

    Candidates are the initializer inputs of: ``Conv``, ``ConvTranspose``, ``Gemm`` and
    ``MatMul`` nodes; a ``Transpose``, or a ``QuantizeLinear`` (its first input) followed by a
    ``DequantizeLinear``, feeding their data inputs; ``Gather`` and ``Slice`` (its first input)
    with at least 1024 elements; and operators outside the ONNX standard (plugins). Unsigned
    8-bit and empty initializers are left in place.

    Args:
        model (onnx.ModelProto): The model (constant folding first finds more weights).
        exclude (Iterable[str]): Initializers to leave in place.

    Returns:
        Tuple[Set[str], Set[str]]: The names to strip, and the excluded names never met.
    """
    graph = model.graph
    initializers = {t.name: t for t in graph.initializer}
    exclude = set(exclude)
    unmet = set(exclude)
    names = set()
    for node in _feeding_nodes(graph):
        for index, name in enumerate(node.input):
            if node.op_type in STRIPPED_INPUTS and index not in STRIPPED_INPUTS[node.op_type]:
                continue
            tensor = initializers.get(name)
            if tensor is None or tensor.data_type == onnx.TensorProto.UINT8:
                continue
            if name in unmet:
                unmet.discard(name)
                continue
            if name in exclude:
                continue
            size = 1
            for dim in tensor.dims:
                size *= dim
            if size < MIN_SIZES.get(node.op_type, 0):
                continue
            names.add(name)
    return names, unmet


class StripWeights(BaseLoadOnnxCopy):
    """
    Functor that strips the refittable weights of an ONNX model (see ``strippable_initializers``)
    and marks them, and the model, as weightless.
    """

    def __init__(self, model: Any, exclude: Any = None, copy: Any = None) -> None:
        """
        Args:
            model (Union[onnx.ModelProto, Callable() -> onnx.ModelProto]):
                    An ONNX model or a callable that returns one, with its external data loaded.
            exclude (Iterable[str]): Names of initializers to keep.
            copy (bool): Whether to work on a copy of the model. Defaults to True.
        """
        super().__init__(model, copy)
        self.exclude = set(exclude or ())

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The weightless model.
        """
        model = self.load()
        G_LOGGER.warning("The model is expected to be constant folded to successfully capture all weights "
                         "eligible for stripping")
        checker = SparsityPruner(model)
        checker.check()
        names, unmet = strippable_initializers(model, self.exclude)
        stripped = 0
        for tensor in model.graph.initializer:
            if tensor.name not in names:
                continue
            if tensor.data_location == onnx.TensorProto.EXTERNAL:
                G_LOGGER.critical(f"Initializer {tensor.name} has its data in an external file that was not "
                                  "loaded; load the model with its external data to strip it")
            G_LOGGER.verbose(f"Stripping initializer {tensor.name}")
            clear_data(tensor)
            tensor.doc_string = weightless_doc_string(tensor.name in checker.sparse_tensors)
            stripped += 1
        if unmet:
            G_LOGGER.warning(f"The following weights to skip stripping were not found in the model: {sorted(unmet)}")
        if stripped and WEIGHTLESS_MARKER not in model.doc_string.split("-"):
            model.doc_string = "-".join(filter(None, [model.doc_string, WEIGHTLESS_MARKER]))
        G_LOGGER.info(f"Finished stripping {stripped} weights")
        return model


strip_weights = funcify(StripWeights)
