"""
``PluginRefRunner``: runs an onnx-graphsurgeon graph node by node with NumPy reference
implementations of the operators TensorRT usually runs as plugins (InstanceNormalization,
MeanVarianceNormalization) plus Identity, to check a TensorRT plugin's results against them.
Operators without a reference are an error naming the operator.
"""

import time
from typing import Any

import numpy as np

from poly.core import G_LOGGER, BaseRunner, TensorMetadata
from poly.core.func import invoke_if_callable

__all__ = ["PLUGIN_REFERENCES", "register_reference", "PluginRefRunner"]

PLUGIN_REFERENCES: dict[Any, Any] = {}
"""Operator name -> ``func(attrs, *inputs) -> list of outputs`` (NumPy arrays)."""


def register_reference(op: Any) -> Any:
    """Decorator that registers ``func(attrs, *inputs) -> [outputs]`` as the reference of ``op``."""

    def register(func: Any) -> Any:
        PLUGIN_REFERENCES[op] = func
        return func

    return register


@register_reference("Identity")
def _identity(attrs: Any, x: Any) -> list[Any]:
    return [x]


@register_reference("InstanceNormalization")
def _instance_norm(attrs: Any, x: Any, scale: Any, bias: Any) -> list[Any]:
    axes = tuple(range(2, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    per_channel = (-1,) + (1,) * (x.ndim - 2)
    eps = attrs.get("epsilon", 1e-5)
    return [scale.reshape(per_channel) * (x - mean) / np.sqrt(var + eps) + bias.reshape(per_channel)]


@register_reference("MeanVarianceNormalization")
def _mean_variance_norm(attrs: Any, x: Any) -> list[Any]:
    axes = tuple(attrs.get("axes", [0, 2, 3]))
    mean = x.mean(axis=axes, keepdims=True)
    std = np.sqrt((x**2).mean(axis=axes, keepdims=True) - mean**2)
    return [(x - mean) / (std + 1e-9)]


def _metadata(tensors: Any) -> Any:
    meta = TensorMetadata()
    for tensor in tensors:
        meta.add(tensor.name, tensor.dtype, tensor.shape)
    return meta


class PluginRefRunner(BaseRunner):
    """Runs inference with CPU reference implementations (``PLUGIN_REFERENCES``) of each node."""

    def __init__(self, graph: Any, name: Any = None) -> None:
        """
        Args:
            graph (Union[onnx_graphsurgeon.Graph, Callable() -> onnx_graphsurgeon.Graph]):
                    The graph, or a loader of it (``GsFromOnnx``); called at activation.
            name (str): The runner's name. Defaults to ``"pluginref-runner-N<count>-<date>-<time>"``.
        """
        super().__init__(name=name, prefix="pluginref-runner")
        self._graph = graph
        self.graph: Any = None

    def activate_impl(self) -> None:
        self.graph = invoke_if_callable(self._graph)

    def get_input_metadata_impl(self) -> Any:
        return _metadata(self.graph.inputs)

    def infer_impl(self, feed_dict: Any) -> Any:
        start = time.perf_counter()
        values = dict(feed_dict)
        for node in self.graph.nodes:
            reference = PLUGIN_REFERENCES.get(node.op)
            if reference is None:
                G_LOGGER.critical(f"Op: {node.op} does not have a reference implementation registered! "
                                  f"(node {node.name!r}; references exist for: {sorted(PLUGIN_REFERENCES)})")
            inputs = [values[t.name] if t.name in values else getattr(t, "values", None) for t in node.inputs]
            for tensor, value in zip(node.outputs, reference(node.attrs, *inputs), strict=True):
                values[tensor.name] = value
        outputs = {t.name: values[t.name] for t in self.graph.outputs}
        self.inference_time = time.perf_counter() - start
        return outputs

    def deactivate_impl(self) -> None:
        self.graph = None
