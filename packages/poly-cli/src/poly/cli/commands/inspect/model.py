"""`poly inspect model MODEL`: an ONNX model (inputs, outputs, initializers, nodes), the TensorRT
network it parses to (`--display-as trt`), or a TensorRT engine."""

from __future__ import annotations

import click

from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.model_args import resolve_model
from poly.cli.options import logging_options, multi_option

SHOW = ("layers", "attrs", "weights")


def _type_str(value_info):
    from onnx import helper

    t = value_info.type.tensor_type
    dims = [d.dim_param or (d.dim_value if d.HasField("dim_value") else "?") for d in t.shape.dim]
    dtype = helper.tensor_dtype_to_np_dtype(t.elem_type) if t.elem_type else "unknown"
    return f"{value_info.name} [dtype={dtype}, shape={tuple(dims)}]"


def describe(model, show) -> str:
    from onnx import helper, numpy_helper

    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    lines = [f"Name: {graph.name} | ONNX Opset: {model.opset_import[0].version if model.opset_import else '?'}"
             f" | IR Version: {model.ir_version}", ""]
    inputs = [i for i in graph.input if i.name not in inits]
    lines += [f"---- {len(inputs)} Graph Input(s) ----", "{" + ", ".join(map(_type_str, inputs)) + "}", ""]
    lines += [f"---- {len(graph.output)} Graph Output(s) ----",
              "{" + ", ".join(map(_type_str, graph.output)) + "}", ""]
    lines += [f"---- {len(inits)} Initializer(s) ----"]
    if "weights" in show:
        for name, init in inits.items():
            array = numpy_helper.to_array(init)
            lines.append(f"Initializer | {name} [dtype={array.dtype}, shape={array.shape}] | Values:\n    {array}")
    else:
        lines.append("{" + ", ".join(f"{n} [shape={tuple(i.dims)}]" for n, i in inits.items()) + "}")
    lines += ["", f"---- {len(graph.node)} Node(s) ----"]
    if "layers" in show:
        for index, node in enumerate(graph.node):
            lines.append(f"Node {index:<4} | {node.name} [Op: {node.op_type}]")
            lines.append(f"    {{{', '.join(node.input)}}}")
            lines.append(f"     -> {{{', '.join(node.output)}}}")
            if "attrs" in show and node.attribute:
                lines.append("    ---- Attributes ----")
                for attr in node.attribute:
                    value = helper.get_attribute_value(attr)
                    if hasattr(value, "dims"):
                        value = numpy_helper.to_array(value)
                    lines.append(f"    {node.name}.{attr.name} = {value}")
    return "\n".join(lines)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model_file", metavar="MODEL")
@click.option("--model-type", type=click.Choice(["onnx", "engine"]),
              help="Type of MODEL: onnx, or a serialized TensorRT engine (default: from the extension).")
@click.option("--display-as", type=click.Choice(["onnx", "trt"]),
              help="How to display an ONNX model: as ONNX (default) or as the TensorRT network it parses to.")
@multi_option("--show", type=click.Choice(SHOW), help="What to show: layers attrs weights.")
@click.option("--load-external-data", "--ext", "external_data_dir", help="Directory of the model's external data.")
@logging_options
@handle_errors
def inspect_model(model_file, model_type, display_as, show, external_data_dir):
    """Display information about an ONNX model, the TensorRT network it parses to, or an engine."""
    from poly.cli.trt_args import is_engine_path
    from poly.core.logger import G_LOGGER

    path = resolve_model(model_file)
    if is_engine_path(path, model_type):
        from poly.trt import EngineFromPath
        from poly.trt.engine_summary import describe_engine

        G_LOGGER.info(f"==== TensorRT Engine ====\n{describe_engine(EngineFromPath(path)(), set(show))}")
        return EXIT_PASS
    if display_as == "trt":
        from poly.trt import NetworkFromOnnxPath
        from poly.trt.network_summary import describe_network

        _, network, _ = NetworkFromOnnxPath(path)()
        G_LOGGER.info(f"==== TensorRT Network ====\n{describe_network(network, set(show))}")
        return EXIT_PASS
    from poly.onnx import OnnxFromPath

    model = OnnxFromPath(path, external_data_dir=external_data_dir, ignore_external_data="weights" not in show)()
    G_LOGGER.info(f"==== ONNX Model ====\n{describe(model, set(show))}")
    return EXIT_PASS
