"""`poly inspect model MODEL`: inputs, outputs, initializers and nodes of an ONNX model."""

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
@click.option("--model-type", type=click.Choice(["onnx"]), help="Type of the model (only ONNX for now).")
@click.option("--display-as", type=click.Choice(["onnx"]), help="How to display the model (trt lands with poly-trt).")
@multi_option("--show", type=click.Choice(SHOW), help="What to show: layers attrs weights.")
@click.option("--load-external-data", "--ext", "external_data_dir", help="Directory of the model's external data.")
@logging_options
@handle_errors
def inspect_model(model_file, model_type, display_as, show, external_data_dir):
    """Display information about an ONNX model."""
    from poly.core.logger import G_LOGGER
    from poly.onnx import OnnxFromPath

    path = resolve_model(model_file)
    if not path.endswith(".onnx") and model_type != "onnx":
        G_LOGGER.warning(f"Assuming {path} is an ONNX model (engines and scripts land with poly-trt).")
    model = OnnxFromPath(path, external_data_dir=external_data_dir, ignore_external_data="weights" not in show)()
    G_LOGGER.info(f"==== ONNX Model ====\n{describe(model, set(show))}")
    return EXIT_PASS
