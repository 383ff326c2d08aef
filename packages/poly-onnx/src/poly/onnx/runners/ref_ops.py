"""
Spec-conforming replacements for operators that ``onnx.reference`` (checked with onnx 1.23)
gets wrong, so that ``OnnxRefRunner`` is a reference worth comparing against:

- LRN, every opset: the square sum is computed over the batch index instead of the channels,
  so every channel but the first passes through unnormalized.
- Softmax, LogSoftmax, Hardmax before opset 13: computed along ``axis`` only, not on the
  input coerced to 2D at ``axis`` as those opsets define (Squeezenet's (1, 1000, 1, 1)
  Softmax comes out all ones).
- BatchNormalization in opsets 7 to 13 with only the Y output (inference): in opsets 9 to 13
  the running statistics are blended with the batch statistics through ``momentum``, as in
  training; in opsets 7 and 8 the evaluator fails outright (its opset-6 kernel runs in training
  mode and returns a tuple).

Each class is built for the model's opset, so that attribute defaults come from the schema of
that opset version rather than the newest one.
"""

from collections.abc import Iterator
from typing import Any

import numpy as np

from poly.core import G_LOGGER
from poly.core.optional_import import lazy_import

onnx = lazy_import("onnx")
op_run = lazy_import("onnx.reference.op_run")

__all__ = ["corrected_ops"]


def _coerced_2d(x: Any, axis: Any) -> Any:
    axis = axis + x.ndim if axis < 0 else axis
    rows = int(np.prod(x.shape[:axis], dtype=np.int64))
    return x.reshape(rows, -1)


def _softmax_2d(x: Any) -> Any:
    shifted = x - x.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)


def _log_softmax_2d(x: Any) -> Any:
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def _hardmax_2d(x: Any) -> Any:
    y = np.zeros_like(x)
    if x.shape[1]:
        y[np.arange(x.shape[0]), x.argmax(axis=1)] = 1
    return y


def _legacy_normalizer(func: Any) -> Any:
    def _run(self: Any, x: Any, axis: Any = None, **_: Any) -> tuple[Any, ...]:
        axis = self.axis if axis is None else axis
        if x.size == 0:
            return (x,)
        return (func(_coerced_2d(x, axis)).reshape(x.shape).astype(x.dtype),)

    return _run


def _lrn(self: Any, x: Any, alpha: Any = None, beta: Any = None, bias: Any = None, size: Any = None, **_: Any) -> tuple[Any, ...]:
    channels = x.shape[1]
    before, after = (size - 1) // 2, -(-(size - 1) // 2)
    squares = np.square(x.astype(np.float64))
    # Prefix sums over channels give each window's sum in one subtraction.
    prefix = np.concatenate([np.zeros_like(squares[:, :1]), np.cumsum(squares, axis=1)], axis=1)
    lo = np.clip(np.arange(channels) - before, 0, channels)
    hi = np.clip(np.arange(channels) + after + 1, 0, channels)
    square_sum = np.take(prefix, hi, axis=1) - np.take(prefix, lo, axis=1)
    y = x / (bias + (alpha / size) * square_sum) ** beta
    return (y.astype(x.dtype),)


def _batchnorm_inference(self: Any, x: Any, scale: Any, bias: Any, mean: Any, var: Any, epsilon: Any = None, **_: Any) -> tuple[Any, ...]:
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + epsilon) * scale.reshape(shape)
    return ((y + bias.reshape(shape)).astype(x.dtype),)


def _dropout_legacy(self: Any, x: Any, ratio: Any = None, is_test: Any = None, **_: Any) -> tuple[Any, ...]:
    # Dropout-7..9 in inference is the identity; its mask has the input's type (bool only from
    # opset 10) and the spec leaves it unfilled, which ONNX-Runtime returns as zeros.
    return (x.copy(), np.zeros_like(x))


def _iter_nodes(graph: Any) -> Iterator[Any]:
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _iter_nodes(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for subgraph in attr.graphs:
                    yield from _iter_nodes(subgraph)


def _spatial(node: Any) -> Any:
    return next((attr.i for attr in node.attribute if attr.name == "spatial"), 1)


def _op_class(op_type: Any, opset: Any, run: Any) -> Any:
    attrs = {"op_domain": "", "op_schema": onnx.defs.get_schema(op_type, opset, ""), "_run": run}
    return type(op_type, (op_run.OpRun,), attrs)


def corrected_ops(model: Any) -> Any:
    """
    Returns the operator classes to pass as ``new_ops`` to ``onnx.reference.ReferenceEvaluator``
    for ``model``: spec-conforming versions of the operators it uses that onnx.reference gets
    wrong at the model's opset.

    Args:
        model (onnx.ModelProto): The model.

    Returns:
        List[type]: ``OpRun`` subclasses.
    """
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None:
        return []
    nodes = [node for node in _iter_nodes(model.graph) if node.domain in ("", "ai.onnx")]
    used = {node.op_type for node in nodes}

    ops = []
    if "LRN" in used:
        ops.append(_op_class("LRN", opset, _lrn))
    if opset < 13:
        for op_type, func in (
            ("Softmax", _softmax_2d),
            ("LogSoftmax", _log_softmax_2d),
            ("Hardmax", _hardmax_2d),
        ):
            if op_type in used:
                ops.append(_op_class(op_type, opset, _legacy_normalizer(func)))
    if 7 <= opset < 10 and "Dropout" in used:
        ops.append(_op_class("Dropout", opset, _dropout_legacy))
    if 7 <= opset < 14 and "BatchNormalization" in used:
        uncorrected = [
            n.name or n.output[0]
            for n in nodes
            if n.op_type == "BatchNormalization" and (len([o for o in n.output if o]) > 1 or _spatial(n) == 0)
        ]
        if uncorrected:
            # Training mode and opset 7's per-activation mode are left to onnx.reference.
            G_LOGGER.verbose(
                f"BatchNormalization nodes {uncorrected}: training or non-spatial mode, not corrected"
            )
        else:
            ops.append(_op_class("BatchNormalization", opset, _batchnorm_inference))
    return ops
