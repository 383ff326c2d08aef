"""`poly surgeon extract MODEL --inputs name:shape:dtype --outputs name:dtype -o OUT`."""

from __future__ import annotations

import click

from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.model_args import resolve_model, save_model, save_options
from poly.cli.options import logging_options, multi_option
from poly.cli.shape_parsing import parse_meta


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model_file", metavar="MODEL")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Path to save the subgraph.")
@multi_option("--inputs", help="Subgraph inputs as NAME:SHAPE:DTYPE, `auto` for unknown parts, e.g. x:[1,3]:float32 y:auto:auto.")
@multi_option("--outputs", help="Subgraph outputs as NAME:DTYPE, `auto` for unknown, e.g. z:float32 w:auto.")
@save_options
@logging_options
@handle_errors
def extract(model_file, output, inputs, outputs, **save):
    """Extract a subgraph based on the specified inputs and outputs."""
    from poly.core.logger import G_LOGGER
    from poly.onnx import ExtractSubgraph, OnnxFromPath

    if not inputs and not outputs:
        raise click.UsageError("At least one of --inputs or --outputs must be given.")
    in_meta = parse_meta("--inputs", inputs) if inputs else None
    out_meta = parse_meta("--outputs", outputs, with_shape=False) if outputs else None

    def to_dict(metas):
        return {name: (dtype, shape) for name, dtype, shape in metas}

    model = ExtractSubgraph(OnnxFromPath(resolve_model(model_file)),
                            input_metadata=to_dict(in_meta) if in_meta else None,
                            output_metadata=to_dict(out_meta) if out_meta else None)
    save_model(model, output, **save)
    G_LOGGER.info(f"Saved subgraph to: {output}")
    return EXIT_PASS
