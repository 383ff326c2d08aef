"""`poly surgeon sanitize MODEL --fold-constants --cleanup --override-input-shapes ... -o OUT`."""

from __future__ import annotations

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx_save import OnnxSaveArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.multi_option import multi_option
from poly.cli.value_parsing import parse_shapes


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Path to save the model.")
@click.option("--fold-constants", is_flag=True, help="Fold constants in the graph.")
@click.option("--num-passes", "--num-const-fold-passes", "num_passes", type=int, help="Constant-folding passes.")
@click.option("--cleanup", is_flag=True, help="Remove unused nodes and tensors, and sort the graph.")
@click.option("--toposort", is_flag=True, help="Topologically sort the graph.")
@multi_option("--override-input-shapes", "--override-inputs", "override_input_shapes",
              help="Override input shapes, e.g. x:[1,3,224,224] y:[1,10].")
@OnnxSaveArgs.options()
@LoggingArgs.options()
@handle_errors
def sanitize(output, fold_constants, num_passes, cleanup, toposort, override_input_shapes, **kwargs):
    """Clean up, optimize, and/or change input shapes in an ONNX model."""
    from poly.core import G_LOGGER
    from poly.onnx import FoldConstants, OnnxFromPath, gs_from_onnx, onnx_from_gs

    shapes = parse_shapes("--override-input-shapes", override_input_shapes)
    model = OnnxFromPath(ModelArgs.from_kwargs(kwargs).path)()
    if shapes or cleanup or toposort:
        graph = gs_from_onnx(model)
        for name, shape in shapes.items():
            match = [t for t in graph.inputs if t.name == name]
            if not match:
                raise click.BadParameter(f"{name!r} is not an input of the model "
                                         f"(inputs: {[t.name for t in graph.inputs]})",
                                         param_hint="'--override-input-shapes'")
            match[0].shape = shape
        if shapes:  # stale intermediate shapes would contradict the new input shapes
            for tensor in graph.tensors().values():
                if tensor not in graph.inputs and tensor not in graph.outputs and not hasattr(tensor, "values"):
                    tensor.shape = None
        if cleanup:
            graph.cleanup()
        if toposort or cleanup:
            graph.toposort()
        model = onnx_from_gs(graph)
    if fold_constants:
        model = FoldConstants(model, num_passes=num_passes)()
    OnnxSaveArgs.from_kwargs(kwargs).save_onnx(model, output)()
    G_LOGGER.info(f"Saved model to: {output}")
    return EXIT_PASS
