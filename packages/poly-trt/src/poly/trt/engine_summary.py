"""A text description of a TensorRT engine: I/O tensors, optimization profiles, device memory
and, on request, its layers as TensorRT's engine inspector reports them."""

import json

from poly.core.datatype import DataType
from poly.trt.tensorrt_module import trt

__all__ = ["describe_engine", "engine_layers"]


def _dtype(engine, name):
    try:
        return DataType.from_dtype(engine.get_tensor_dtype(name))
    except Exception:
        return str(engine.get_tensor_dtype(name)).split(".")[-1]


def engine_layers(engine):
    """The engine inspector's layer records (dicts, or names at low profiling verbosity)."""
    inspector = engine.create_engine_inspector()
    if inspector is None:
        return []
    text = inspector.get_engine_information(trt.LayerInformationFormat.JSON)
    try:
        return json.loads(text).get("Layers", [])
    except ValueError:
        return [line for line in str(text).splitlines() if line.strip()]


def describe_engine(engine, show=()):
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

    def tensors(group):
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
            if "attrs" in show:
                for key, value in layer.items():
                    if key not in ("Name", "LayerType"):
                        lines.append(f"    {key} = {value}")
        else:
            lines.append(f"Layer {index:<4} | {layer}")
    return "\n".join(lines)
