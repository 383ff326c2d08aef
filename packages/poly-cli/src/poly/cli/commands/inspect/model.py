"""`poly inspect model MODEL`: an ONNX model (inputs, outputs, initializers, nodes), the TensorRT
network it parses to (`--display-as trt`), or a TensorRT engine."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.trt.scripts import TrtNetworkScriptArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand
from poly.cli.multi_option import multi_option

SHOW = ("layers", "attrs", "weights")


def _text(value: Any) -> Any:
    # protobuf hands out bytes for a name that is not UTF-8 (a corrupt file): shown escaped
    return value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else value


def _type_str(value_info: Any, helper: Any) -> str:
    t = value_info.type.tensor_type
    dims = [d.dim_param or (d.dim_value if d.HasField("dim_value") else "?") for d in t.shape.dim]
    try:
        dtype = helper.tensor_dtype_to_np_dtype(t.elem_type) if t.elem_type else "unknown"
    except (KeyError, ValueError, TypeError):
        dtype = f"<unknown element type {t.elem_type}>"
    return f"{value_info.name} [dtype={dtype}, shape={tuple(dims)}]"


def _decoded(what: Any, source: Any, decode: Any, *args: Any) -> Any:
    # A tensor or attribute whose stored data does not fit its declared type or shape.
    from poly.core import PolyException

    try:
        return decode(*args)
    except (ValueError, TypeError, KeyError) as err:
        detail = " ".join(str(err).split()) or type(err).__name__
        raise PolyException(f"Cannot read {what} of ONNX model {source}: {detail}") from None


def describe(model: Any, show: Any, source: str = "") -> str:
    """The text `poly inspect model` shows for an ONNX model (``show``: layers, attrs, weights);
    ``source`` (the quoted path) names the model in errors about corrupt tensors."""
    from poly.core import lazy_import

    onnx = lazy_import("onnx")
    helper, numpy_helper = onnx.helper, onnx.numpy_helper
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    lines = [f"Name: {graph.name} | ONNX Opset: {model.opset_import[0].version if model.opset_import else '?'}"
             f" | IR Version: {model.ir_version}", ""]
    inputs = [i for i in graph.input if i.name not in inits]
    lines += [f"---- {len(inputs)} Graph Input(s) ----", "{" + ", ".join(_type_str(i, helper) for i in inputs) + "}", ""]
    lines += [f"---- {len(graph.output)} Graph Output(s) ----",
              "{" + ", ".join(_type_str(o, helper) for o in graph.output) + "}", ""]
    lines += [f"---- {len(inits)} Initializer(s) ----"]
    if "weights" in show:
        for name, init in inits.items():
            array = _decoded(f"initializer '{name}'", source, numpy_helper.to_array, init)
            lines.append(f"Initializer | {name} [dtype={array.dtype}, shape={array.shape}] | Values:\n    {array}")
    else:
        lines.append("{" + ", ".join(f"{n} [shape={tuple(i.dims)}]" for n, i in inits.items()) + "}")
    lines += ["", f"---- {len(graph.node)} Node(s) ----"]
    if "layers" in show:
        for index, node in enumerate(graph.node):
            lines.append(f"Node {index:<4} | {node.name} [Op: {node.op_type}]")
            lines.append(f"    {{{', '.join(map(_text, node.input))}}}")
            lines.append(f"     -> {{{', '.join(map(_text, node.output))}}}")
            if "attrs" in show and node.attribute:
                lines.append("    ---- Attributes ----")
                for attr in node.attribute:
                    what = f"attribute '{attr.name}' of node '{node.name}'"
                    value = _decoded(what, source, helper.get_attribute_value, attr)
                    if hasattr(value, "dims"):
                        value = _decoded(what, source, numpy_helper.to_array, value)
                    lines.append(f"    {node.name}.{attr.name} = {value}")
    return "\n".join(lines)


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options(model_type=True)
@click.option("--display-as", type=click.Choice(["onnx", "trt"]),
              help="How to display an ONNX model: as ONNX (default) or as the TensorRT network it parses to.")
@multi_option("--show", type=click.Choice(SHOW), help="What to show: layers attrs weights.")
@click.option("--load-external-data", "--ext", "external_data_dir", help="Directory of the model's external data.")
@click.option("--list-unbounded-dds", "show_unbounded_dds", is_flag=True,
              help="List the tensors with unbounded data-dependent shapes (fold constants and infer shapes first).")
@TrtNetworkScriptArgs.options()
@LoggingArgs.options()
@handle_errors
def inspect_model(display_as: Any, show: Any, external_data_dir: Any, show_unbounded_dds: Any, **kwargs: Any) -> Any:
    """Display information about an ONNX model, the TensorRT network it parses to, an engine, or
    the TensorRT network a network script (MODEL.py) creates."""
    from poly.core import G_LOGGER

    model = ModelArgs.from_kwargs(kwargs)
    path = model.path
    if model.is_engine:
        from poly.trt import EngineFromPath
        from poly.trt.inspection.engine_summary import describe_engine

        G_LOGGER.info(f"==== TensorRT Engine ====\n{describe_engine(EngineFromPath(path)(), set(show))}")
        return EXIT_PASS
    scripts = TrtNetworkScriptArgs.from_kwargs(kwargs)
    if display_as == "trt" or model.is_network_script or scripts.postprocess:
        from poly.trt import NetworkFromOnnxPath
        from poly.trt.inspection.network_summary import describe_network
        from poly.trt.networks.creation import unpack_network

        loader = scripts.load_script_network(model) if model.is_network_script else NetworkFromOnnxPath(path)
        builder, network, _parser = unpack_network(scripts.postprocess_network(loader))
        G_LOGGER.info(f"==== TensorRT Network ====\n{describe_network(network, set(show))}")
        return EXIT_PASS
    from poly.onnx import OnnxFromPath

    onnx_model = OnnxFromPath(path, external_data_dir=external_data_dir, ignore_external_data="weights" not in show)()
    text = describe(onnx_model, set(show), f"'{path}'")
    G_LOGGER.info(f"==== ONNX Model ====\n{text}")
    if show_unbounded_dds:
        from poly.onnx import gs_from_onnx, unbounded_dds_tensors

        names = [tensor.name for tensor in unbounded_dds_tensors(gs_from_onnx(onnx_model))]
        G_LOGGER.info(f"Found tensors with unbounded DDS: {names}")
    return EXIT_PASS
