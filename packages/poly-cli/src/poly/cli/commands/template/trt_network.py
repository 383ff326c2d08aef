"""`poly template trt-network [MODEL] -o SCRIPT`: a script whose `load_network` creates a TensorRT
network, from MODEL (an ONNX model, parsed) or from scratch (an empty network), for you to edit
and then use as a network-script MODEL (`poly run SCRIPT --trt`)."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import DEFAULT_NETWORK_FUNC, ModelArgs
from poly.cli.args.trt.network import TrtNetworkArgs, strongly_typed_option
from poly.cli.commands.template.script_source import call, literal, output_option, write_script
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand

USAGE = ("Use it in place of a model: `poly run {path} --trt`, `poly convert {path} -o model.engine`,\n"
         "`poly inspect model {path}`.")
TODO = "pass  # TODO: Set up the network here. This function should not return anything."


def network_source(model_path: str | None, network: TrtNetworkArgs) -> tuple[list[str], list[str], str]:
    """(imports, loader lines, parameters of `load_network`) of the network loaders: MODEL
    parsed (with --strongly-typed, --trt-network-postprocess-script, --trt-outputs and
    --trt-exclude-outputs as given), or an empty network when there is no MODEL."""
    imports = ["from poly import func", "from poly.trt import trt"]
    if model_path is None:
        imports.append("from poly.trt import CreateNetwork")
        kwargs = {"strongly_typed": "True"} if network.strongly_typed else {}
        return imports, [f"create_network = {call('CreateNetwork', **kwargs)}"], "builder, network"
    imports.append("from poly.trt import NetworkFromOnnxPath")
    kwargs = {"strongly_typed": "True"} if network.strongly_typed else {}
    lines = [f"parse_network_from_onnx = {call('NetworkFromOnnxPath', literal(model_path), **kwargs)}"]
    name = "parse_network_from_onnx"
    for index, (path, func) in enumerate(network.scripts.postprocess):
        imports += ["from poly.backend.common import InvokeFromScript", "from poly.trt import PostprocessNetwork"]
        script = call("InvokeFromScript", literal(path), name=literal(func))  # type: ignore[misc]
        lines.append(f"postprocess_step_{index} = {call('PostprocessNetwork', name, func=script)}")
        name = f"postprocess_step_{index}"
    if network.outputs is not None or network.exclude_outputs is not None:
        imports.append("from poly.trt import ModifyNetworkOutputs")
        kwargs = {}
        if isinstance(network.outputs, tuple):
            kwargs["outputs"] = literal(list(network.outputs))
        elif network.outputs is not None:
            imports.append("from poly.core import MARK_ALL")
            kwargs["outputs"] = "MARK_ALL"
        if network.exclude_outputs is not None:
            kwargs["exclude_outputs"] = literal(list(network.exclude_outputs))
        lines.append(f"set_network_outputs = {call('ModifyNetworkOutputs', name, **kwargs)}")
    return imports, lines, "builder, network, parser"


@click.command("trt-network", cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options(required=False)
@output_option()
@TrtNetworkArgs.options()
@strongly_typed_option()
@LoggingArgs.options()
@handle_errors
def trt_network(output: Any, **kwargs: Any) -> Any:
    """Write a script that creates a TensorRT network with the network API.

    With MODEL (an ONNX model) the script parses it and lets you change the parsed network;
    without, it starts from an empty network. Edit the `load_network` function, then use the
    script as the model of `poly run`, `poly convert` or `poly inspect model`."""
    model = ModelArgs.from_kwargs(kwargs, required=False)
    if model.path is not None and not model.is_onnx:
        raise click.BadParameter(f"{model.path!r} is not an ONNX model", param_hint="'MODEL'")
    imports, lines, params = network_source(model.path, TrtNetworkArgs.from_kwargs(kwargs))
    loader = lines[-1].split(" = ", 1)[0]
    function = f"@func.extend({loader})\ndef {DEFAULT_NETWORK_FUNC}({params}):\n    {TODO}"
    summary = "Creates a TensorRT network using the network API" + (f", starting from {model.path}." if model.path
                                                                    else ".")
    write_script(output, summary, USAGE.format(path=output), imports, ["\n".join(lines), function])
    return EXIT_PASS
