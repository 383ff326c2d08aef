"""
``OnnxLikeFromNetwork``: a picture of a TensorRT network in the ONNX format, for viewers such as
Netron. Each layer becomes a node whose operator is the layer type (``CONVOLUTION``...), in the
``trt`` domain, with the layer's own attributes (numbers, strings, enums by name, shapes as
lists); weights are left out. The result is **not** a valid ONNX model and cannot be run.
"""

import numbers
from typing import Any

from poly.core import G_LOGGER, BaseLoader, DataType
from poly.core.func import funcify
from poly.core.optional_import import lazy_import
from poly.trt.networks.creation import unpack_network
from poly.trt.networks.layer_classes import downcast_layer, layer_attributes

onnx = lazy_import("onnx", purpose="OnnxLikeFromNetwork")

__all__ = ["OnnxLikeFromNetwork", "onnx_like_from_network", "TRT_DOMAIN"]

TRT_DOMAIN = "trt"
"""The ONNX domain of the nodes (the operators are TensorRT layer types, not ONNX operators)."""


def _attribute_value(value: Any) -> Any:
    """The value as something ``onnx.helper.make_attribute`` takes, or None to leave it out."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (numbers.Integral, numbers.Real, str)):
        return value
    if hasattr(value, "name") and hasattr(value, "value") and not callable(value):  # an enum member
        return str(value.name)
    if isinstance(value, (tuple, list)) or type(value).__name__ in ("Dims", "Permutation"):
        try:
            items = list(value)
        except TypeError:
            return None
        if items and all(isinstance(i, numbers.Integral) and not isinstance(i, bool) for i in items):
            return [int(i) for i in items]
        if items and all(isinstance(i, numbers.Real) for i in items):
            return [float(i) for i in items]
    return None


def _value_info(tensor: Any) -> Any:
    try:
        elem_type = DataType.to_dtype(DataType.from_dtype(tensor.dtype), "onnx")
    except Exception:  # a type ONNX has no counterpart for
        elem_type = onnx.TensorProto.UNDEFINED
    shape = [None if dim < 0 else int(dim) for dim in tensor.shape] if tensor.shape is not None else None
    return onnx.helper.make_tensor_value_info(tensor.name, elem_type, shape)


class OnnxLikeFromNetwork(BaseLoader):
    """Functor that turns a TensorRT network into an ONNX-like model for visualization only."""

    def __init__(self, network: Any) -> None:
        """
        Args:
            network (Union[Tuple, Callable() -> Tuple]): ``(builder, network[, parser])`` or its loader.
        """
        self._network = network

    def call_impl(self) -> Any:
        """
        Returns:
            onnx.ModelProto: The ONNX-like model (not valid ONNX).
        """
        builder, network, _ = unpack_network(self._network)
        if builder is None or network is None:
            G_LOGGER.critical("OnnxLikeFromNetwork needs a (builder, network[, parser]) tuple or a loader of one")
        nodes = []
        for index in range(network.num_layers):
            layer = downcast_layer(network.get_layer(index))
            inputs = [layer.get_input(i) for i in range(layer.num_inputs)]
            outputs = [layer.get_output(i) for i in range(layer.num_outputs)]
            attrs = {"precision": DataType.from_dtype(layer.precision).name} if getattr(layer, "precision_is_set", False) else {}
            for name, value in layer_attributes(layer):
                converted = _attribute_value(value)
                if converted is not None and converted != []:
                    attrs[name] = converted
            nodes.append(onnx.helper.make_node(
                str(layer.type).split(".")[-1],
                [t.name if t is not None else "" for t in inputs],
                [t.name for t in outputs if t is not None],
                name=layer.name,
                domain=TRT_DOMAIN,
                **attrs,
            ))
        graph = onnx.helper.make_graph(
            nodes,
            network.name or "network",
            [_value_info(network.get_input(i)) for i in range(network.num_inputs)],
            [_value_info(network.get_output(i)) for i in range(network.num_outputs)],
        )
        return onnx.helper.make_model(graph, producer_name="poly OnnxLikeFromNetwork",
                                      opset_imports=[onnx.helper.make_opsetid(TRT_DOMAIN, 1)])


onnx_like_from_network = funcify(OnnxLikeFromNetwork)
