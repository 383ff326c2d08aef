"""A text description of a TensorRT engine: I/O tensors, optimization profiles, device memory
and, on request, its layers as TensorRT's engine inspector reports them."""

import json
from typing import Any

from poly.core import DataType
from poly.trt.tensorrt_module import trt

__all__ = ["describe_engine", "engine_layers"]


def _dtype(engine: Any, name: Any) -> Any:
    try:
        return DataType.from_dtype(engine.get_tensor_dtype(name))
    except Exception:
        return str(engine.get_tensor_dtype(name)).split(".")[-1]


# Words in the inspector's format text ("Row major linear FP32", "Channel major FP16 format
# where channel % 2 == 0", ...) and the data type each names; longer words first, so that
# "INT32" is not read as "INT" nor "BFLOAT16" as "FLOAT".
_FORMAT_DTYPES = (
    ("BFLOAT16", "BFLOAT16"), ("FLOAT8E4M3", "FLOAT8E4M3FN"), ("FP8", "FLOAT8E4M3FN"),
    ("FLOAT8E5M2", "FLOAT8E5M2"), ("FLOAT4", "FLOAT4"), ("FP4", "FLOAT4"), ("FP32", "FLOAT32"),
    ("FP16", "FLOAT16"), ("HALF", "FLOAT16"), ("FLOAT", "FLOAT32"), ("UINT8", "UINT8"),
    ("INT64", "INT64"), ("INT32", "INT32"), ("INT16", "INT16"), ("INT8", "INT8"), ("INT4", "INT4"),
    ("BOOL", "BOOL"),
)


def _format_text(tensor: Any) -> str:
    # TensorRT 10 writes one "Format/Datatype" field; later versions split it in two.
    if "Format/Datatype" in tensor:
        return str(tensor["Format/Datatype"])
    return " ".join(str(tensor[key]) for key in ("Datatype", "Format") if tensor.get(key))


def _layer_tensor(tensor: Any) -> Any:
    """``name [dtype=float32, shape=(1, 4)]`` for one of the inspector's per-tensor records."""
    if not isinstance(tensor, dict):
        return str(tensor)
    text = _format_text(tensor).upper()
    dtype = next((getattr(DataType, dt) for word, dt in _FORMAT_DTYPES if word in text), None)
    dims = tensor.get("Dimensions")
    shape = tuple(dims) if isinstance(dims, list) else dims
    fields = [f"dtype={dtype}"] if dtype is not None else []
    if shape is not None:
        fields.append(f"shape={shape}")
    return f"{tensor.get('Name', '?')} [{', '.join(fields)}]" if fields else str(tensor.get("Name", "?"))


def _layer_tensors(tensors: Any) -> Any:
    return "{" + ", ".join(_layer_tensor(t) for t in tensors or []) + "}"


def engine_layers(engine: Any) -> Any:
    """The engine inspector's layer records (dicts, or names at low profiling verbosity)."""
    inspector = engine.create_engine_inspector()
    if inspector is None:
        return []
    text = inspector.get_engine_information(trt.LayerInformationFormat.JSON)
    try:
        return json.loads(text).get("Layers", [])
    except ValueError:
        return [line for line in str(text).splitlines() if line.strip()]


def describe_engine(engine: Any, show: Any = ()) -> Any:
    """
    Args:
        engine (trt.ICudaEngine): The engine.
        show (Iterable[str]): "layers" (and "attrs") to add the inspector's layer information.

    Returns:
        str
    """
    show = set(show)
    mode = trt.TensorIOMode
    names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
    inputs = [n for n in names if engine.get_tensor_mode(n) == mode.INPUT]
    outputs = [n for n in names if engine.get_tensor_mode(n) == mode.OUTPUT]

    def tensors(group: Any) -> Any:
        return (
            "{"
            + ", ".join(
                f"{n} [dtype={_dtype(engine, n)}, shape={tuple(engine.get_tensor_shape(n))}]" for n in group
            )
            + "}"
        )

    profiles = engine.num_optimization_profiles
    lines = [f"Name: {engine.name or 'Unnamed Engine'} | {profiles} Optimization Profile(s)", ""]
    lines += [f"---- {len(inputs)} Engine Input(s) ----", tensors(inputs), ""]
    lines += [f"---- {len(outputs)} Engine Output(s) ----", tensors(outputs), ""]
    memory = getattr(engine, "device_memory_size_v2", None)
    if memory is not None:
        lines += ["---- Memory ----", f"Device Memory: {memory} bytes", ""]
    lines.append(f"---- {profiles} Profile(s) ({len(names)} Tensor(s) Each) ----")
    for index in range(profiles):
        lines.append(f"- Profile: {index}")
        for name in names:
            kind = "Input" if name in inputs else "Output"
            text = f"    Tensor: {name:<24} ({kind}), Index: {names.index(name)}"
            if name in inputs and not engine.is_shape_inference_io(name):
                lo, opt, hi = engine.get_tensor_profile_shape(name, index)
                text += f" | Shapes: min={tuple(lo)}, opt={tuple(opt)}, max={tuple(hi)}"
            else:
                text += f" | Shape: {tuple(engine.get_tensor_shape(name))}"
            lines.append(text)
    lines.append("")
    layers = engine_layers(engine) if show & {"layers", "attrs"} else None
    lines.append(f"---- {engine.num_layers} Layer(s) ----")
    for index, layer in enumerate(layers or []):
        if isinstance(layer, dict):
            head = f"Layer {index:<4} | {layer.get('Name', '?')} [Op: {layer.get('LayerType', '?')}]"
            lines.append(head)
            if "Inputs" in layer or "Outputs" in layer:
                lines.append(f"    {_layer_tensors(layer.get('Inputs'))}")
                lines.append(f"     -> {_layer_tensors(layer.get('Outputs'))}")
            attrs = [(k, v) for k, v in layer.items() if k not in ("Name", "LayerType", "Inputs", "Outputs")]
            if "attrs" in show and attrs:
                lines.append("    ---- Attributes ----")
                for key, value in attrs:
                    lines.append(f"    {key} = {value}")
        else:
            lines.append(f"Layer {index:<4} | {layer}")
    return "\n".join(lines)
