"""`poly multi-device shard MODEL -s HINTS.json -o OUT.onnx`: a single-device model made multi-device
(the logic is poly.onnx.multi_device)."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.save import OnnxSaveArgs
from poly.cli.args.onnx.shard_hints import ShardHintArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option("-s", "--hint", "hint_file", type=click.Path(dir_okay=False),
              help="Sharding hints file (JSON, Polygraphy's format) naming the inputs to scatter, the outputs "
              "to gather and the attention layers to shard.")
@click.option("--one-shot", is_flag=True,
              help="Suggest the hints from the model (as `poly template shard-hints` with the hint flags below "
              "would) instead of reading a hints file.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Path to save the multi-device model.")
@click.option("--shape-inference", "--do-shape-inference", "shape_inference", is_flag=True,
              help="Run ONNX shape inference first (gives the ranks needed when a seq_len_idx is not 0).")
@OnnxSaveArgs.options()
@ShardHintArgs.options()
@LoggingArgs.options()
@handle_errors
def shard(hint_file: Any, one_shot: Any, output: Any, shape_inference: Any, **kwargs: Any) -> Any:
    """Convert a single-device (SD) ONNX model with attention layers into a multi-device (MD) one.

    Inputs named in the hints are reduce-scattered, the K/V (and Q where asked) of each hinted
    attention layer all-gathered, and the outputs all-gathered, through DistCollective nodes.
    Only context parallelism (CP) is implemented. Running the result needs TensorRT with
    multi-device support.
    """
    import os

    from poly.core import G_LOGGER
    from poly.onnx import GsFromOnnx, InferShapes, OnnxFromPath
    from poly.onnx.multi_device import ShardModel, suggest_shard_hints

    if bool(hint_file) == one_shot:
        raise click.UsageError("Give exactly one of -s/--hint and --one-shot.")
    hint_args = ShardHintArgs.from_kwargs(kwargs)
    path = ModelArgs.from_kwargs(kwargs).path
    if hint_file and not os.path.isfile(hint_file):
        raise click.BadParameter(f"{hint_file!r} does not exist.", param_hint="'-s' / '--hint'")
    model = OnnxFromPath(path)
    if shape_inference:
        model = InferShapes(model)  # type: ignore[assignment]
    hints = hint_file
    if one_shot:
        G_LOGGER.info("Suggesting sharding hints from the model (no hints file)")
        model = model()
        hints = suggest_shard_hints(GsFromOnnx(model)(), hint_args.hint_options)  # type: ignore[arg-type]
    OnnxSaveArgs.from_kwargs(kwargs).save_onnx(ShardModel(model, hints), output)()
    G_LOGGER.info(f"Saved multi-device model to: {output}")
    return EXIT_PASS
