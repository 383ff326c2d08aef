"""`poly surgeon extract MODEL --inputs name:shape:dtype --outputs name:dtype -o OUT`."""

from __future__ import annotations

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx_save import OnnxSaveArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.multi_option import multi_option
from poly.cli.value_parsing import parse_meta


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Path to save the subgraph.")
@multi_option("--inputs", help="Subgraph inputs as NAME:SHAPE:DTYPE, `auto` for unknown parts, e.g. x:[1,3]:float32 y:auto:auto.")
@multi_option("--outputs", help="Subgraph outputs as NAME:DTYPE, `auto` for unknown, e.g. z:float32 w:auto.")
@OnnxSaveArgs.options()
@LoggingArgs.options()
@handle_errors
def extract(output, inputs, outputs, **kwargs):
    """Extract a subgraph based on the specified inputs and outputs."""
    from poly.core import G_LOGGER
    from poly.onnx import ExtractSubgraph, OnnxFromPath

    if not inputs and not outputs:
        raise click.UsageError("At least one of --inputs or --outputs must be given.")
    in_meta = parse_meta("--inputs", inputs) if inputs else None
    out_meta = parse_meta("--outputs", outputs, with_shape=False) if outputs else None

    model_args = ModelArgs.from_kwargs(kwargs)

    def to_dict(metas):
        return {name: (dtype, shape) for name, dtype, shape in metas}

    model = ExtractSubgraph(OnnxFromPath(model_args.path),
                            input_metadata=to_dict(in_meta) if in_meta else None,
                            output_metadata=to_dict(out_meta) if out_meta else None)
    OnnxSaveArgs.from_kwargs(kwargs).save_onnx(model, output)()
    G_LOGGER.info(f"Saved subgraph to: {output}")
    return EXIT_PASS
