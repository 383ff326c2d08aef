"""A text description of a TensorRT network: inputs, outputs and, on request, its layers with
their attributes and weights (``poly inspect model --display-as trt``)."""

from typing import Any

import numpy as np

from poly.core import DataType
from poly.trt.networks.layer_classes import downcast_layer, layer_attributes

__all__ = ["describe_network", "tensor_str"]


def tensor_str(tensor: Any) -> str:
    """``name [dtype=float32, shape=(1, 3, 8, 8)]`` for a ``trt.ITensor``."""
    try:
        dtype: object = DataType.from_dtype(tensor.dtype)
    except Exception:
        dtype = str(tensor.dtype).split(".")[-1]
    return f"{tensor.name} [dtype={dtype}, shape={tuple(tensor.shape)}]"


def _tensors(tensors: Any) -> Any:
    return "{" + ", ".join(tensor_str(t) for t in tensors if t is not None) + "}"


def _value_str(value: Any, show_weights: Any) -> Any:
    if isinstance(value, np.ndarray) or type(value).__name__ == "Weights":
        array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        head = f"<array dtype={array.dtype}, shape={array.shape}>"
        if not show_weights:
            return head
        values = np.array2string(array, threshold=64, edgeitems=4).replace("\n", "\n            ")
        return f"{head}\n            {values}"
    return str(value)


def describe_network(network: Any, show: Any = ()) -> str:
    """
    Args:
        network (trt.INetworkDefinition): The network.
        show (Iterable[str]): Any of "layers", "attrs", "weights".

    Returns:
        str
    """
    show = set(show)
    inputs = [network.get_input(i) for i in range(network.num_inputs)]
    outputs = [network.get_output(i) for i in range(network.num_outputs)]
    name = network.name or "Unnamed Network"
    lines = [f"Name: {name} | Explicit Batch Network", ""]
    lines += [f"---- {len(inputs)} Network Input(s) ----", _tensors(inputs), ""]
    lines += [f"---- {len(outputs)} Network Output(s) ----", _tensors(outputs), ""]
    lines.append(f"---- {network.num_layers} Layer(s) ----")
    if not show & {"layers", "attrs", "weights"}:
        return "\n".join(lines)
    for index in range(network.num_layers):
        layer = network.get_layer(index)
        layer_type = layer.type  # read before downcasting: some classes reuse "type" for their own kind
        layer = downcast_layer(layer)
        layer_inputs = [layer.get_input(i) for i in range(layer.num_inputs)]
        layer_outputs = [layer.get_output(i) for i in range(layer.num_outputs)]
        lines.append(f"Layer {index:<4} | {layer.name} [Op: {layer_type}]")
        lines.append(f"    {_tensors(layer_inputs)}")
        lines.append(f"     -> {_tensors(layer_outputs)}")
        if show & {"attrs", "weights"}:
            attrs = layer_attributes(layer)
            if attrs:
                lines.append("    ---- Attributes ----")
                for attr, value in attrs:
                    lines.append(f"    {layer.name}.{attr} = {_value_str(value, 'weights' in show)}")
    return "\n".join(lines)
