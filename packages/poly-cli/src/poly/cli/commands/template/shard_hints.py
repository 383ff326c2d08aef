"""`poly template shard-hints MODEL -o HINTS.json`: the sharding hints suggested for a model
(the logic is poly.onnx.multi_device.suggest_shard_hints)."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.shard_hints import ShardHintArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Path to save the hints file (a .json file).")
@ShardHintArgs.options()
@LoggingArgs.options()
@handle_errors
def shard_hints(output: Any, **kwargs: Any) -> Any:
    """Generate a sharding hints file for a model's attention layers.

    One hint per attention layer (MatMul -> Softmax -> MatMul, named by its Q tensor), and unless
    --no-suggest-io the model inputs the layers depend on and the outputs that depend on them.
    Edit it as needed, then pass it to `poly multi-device shard -s`.
    """
    from poly.core import G_LOGGER
    from poly.onnx import GsFromOnnx, OnnxFromPath
    from poly.onnx.multi_device import suggest_shard_hints

    if not output.endswith(".json"):
        raise click.BadParameter(f"{output!r} must be a .json file", param_hint="'-o' / '--output'")
    hint_args = ShardHintArgs.from_kwargs(kwargs)
    path = ModelArgs.from_kwargs(kwargs).path
    hints = suggest_shard_hints(GsFromOnnx(OnnxFromPath(path))(), hint_args.hint_options)  # type: ignore[arg-type]
    hints.save(output)  # type: ignore[attr-defined]
    G_LOGGER.info(f"Saved sharding hints to: {output}")
    return EXIT_PASS
