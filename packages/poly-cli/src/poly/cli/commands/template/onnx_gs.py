"""`poly template onnx-gs MODEL -o SCRIPT`: a script that loads MODEL as an ONNX-GraphSurgeon graph,
has a place to edit it, and saves it as MODEL_updated.onnx (run it with `python SCRIPT`)."""

from __future__ import annotations

import os
from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.load import OnnxLoadArgs
from poly.cli.commands.template.script_source import call, literal, output_option, write_script
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand

USAGE = "Edit the graph below, then run `python {path}`."
EDIT_AND_SAVE = """graph = load_gs()

# TODO: Edit the graph here. For example:
#
# To change the inputs or outputs:
#     graph.inputs = [...]
#     graph.outputs = [...]
#
# To look up tensors by name:
#     tensors = graph.tensors()  # Dict[str, gs.Tensor]
#
# To visit the nodes:
#     for node in graph.nodes:
#         print(f"{{node.name}} ({{node.op}}): {{node.inputs}} -> {{node.outputs}}")
#
# Remove what the edits left unused, and sort the nodes, before saving:
graph.cleanup().toposort()

onnx.save(gs.export_onnx(graph), {output})
print("Saved the edited model to", {output})"""


def updated_path(path: str) -> str:
    """`model.onnx` -> `model_updated.onnx`: where the script saves the edited model."""
    root, ext = os.path.splitext(path)
    return f"{root}_updated{ext or '.onnx'}"


def onnx_loader_source(model_path: str, onnx: OnnxLoadArgs) -> tuple[list[str], list[str]]:
    """(imports, loader lines) that load MODEL as ONNX-GraphSurgeon graph `load_gs`, with
    --shape-inference, --onnx-outputs and --onnx-exclude-outputs as given."""
    imports = ["from poly.onnx import GsFromOnnx, OnnxFromPath"]
    lines = [f"load_onnx = {call('OnnxFromPath', literal(model_path))}"]
    name = "load_onnx"
    if onnx.shape_inference:
        imports.append("from poly.onnx import InferShapes")
        lines.append(f"infer_shapes = {call('InferShapes', name)}")
        name = "infer_shapes"
    if onnx.outputs is not None or onnx.exclude_outputs is not None:
        imports.append("from poly.onnx import ModifyOutputs")
        kwargs = {}
        if isinstance(onnx.outputs, tuple):
            kwargs["outputs"] = literal(list(onnx.outputs))
        elif onnx.outputs is not None:
            imports.append("from poly.core import MARK_ALL")
            kwargs["outputs"] = "MARK_ALL"
        if onnx.exclude_outputs is not None:
            kwargs["exclude_outputs"] = literal(list(onnx.exclude_outputs))
        lines.append(f"modify_outputs = {call('ModifyOutputs', name, **kwargs)}")
        name = "modify_outputs"
    lines.append(f"load_gs = {call('GsFromOnnx', name)}")
    return imports, lines


@click.command("onnx-gs", cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@output_option()
@OnnxLoadArgs.options(shape_inference=True)
@LoggingArgs.options()
@handle_errors
def onnx_gs(output: Any, **kwargs: Any) -> Any:
    """[EXPERIMENTAL] Write a script that edits an ONNX model with ONNX-GraphSurgeon.

    The script loads MODEL as a graph, leaves a marked place for your edits, and saves the
    result next to MODEL as MODEL_updated.onnx."""
    model = ModelArgs.from_kwargs(kwargs)
    if not model.is_onnx:
        raise click.BadParameter(f"{model.path!r} is not an ONNX model", param_hint="'MODEL'")
    imports, lines = onnx_loader_source(model.path, OnnxLoadArgs.from_kwargs(kwargs))  # type: ignore[arg-type]
    body = EDIT_AND_SAVE.format(output=literal(updated_path(model.path)))  # type: ignore[arg-type]
    write_script(output, f"Edits the ONNX model {model.path} with ONNX-GraphSurgeon.", USAGE.format(path=output),
                 ["import onnx", "import onnx_graphsurgeon as gs", *imports], ["\n".join(lines), body])
    return EXIT_PASS
