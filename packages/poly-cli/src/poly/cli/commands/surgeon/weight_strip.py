"""`poly surgeon weight-strip MODEL -o OUT [--exclude-list FILE]`: a weightless model."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.save import OnnxSaveArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand


def read_exclude_list(path: Any) -> set[Any]:
    """The initializer names of an --exclude-list file, one a line (trailing spaces dropped)."""
    try:
        with open(path, encoding="utf-8") as file:
            return {line.rstrip() for line in file if line.strip()}
    except (OSError, UnicodeDecodeError) as err:
        raise click.BadParameter(f"cannot read {path!r}: {getattr(err, 'strerror', None) or err}",
                                 param_hint="'--exclude-list'") from None


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Path to save the model.")
@click.option("--exclude-list", type=click.Path(dir_okay=False),
              help="Text file naming initializers to keep, one a line.")
@click.option("--external-data-dir", "--load-external-data", "--ext", "external_data_dir",
              help="Directory of the model's external data (default: the model's directory).")
@OnnxSaveArgs.options()
@LoggingArgs.options()
@handle_errors
def weight_strip(output: Any, exclude_list: Any, external_data_dir: Any, **kwargs: Any) -> Any:
    """Strip weights from the provided ONNX model.

    The data of the refittable initializers (Conv, ConvTranspose, Gemm and MatMul weights, large
    Gather and Slice data, plugin inputs) is removed; each keeps its name, shape and data type
    and is marked TRT_WEIGHTLESS (with SPARSE_2_4 when it was 2:4 sparse), as TensorRT's
    weight-stripped engines and `surgeon weight-reconstruct` expect. Fold constants first."""
    from poly.core import G_LOGGER
    from poly.onnx import OnnxFromPath, StripWeights

    exclude = read_exclude_list(exclude_list) if exclude_list else set()
    path = ModelArgs.from_kwargs(kwargs).path
    model = StripWeights(OnnxFromPath(path, external_data_dir=external_data_dir), exclude=exclude, copy=False)
    OnnxSaveArgs.from_kwargs(kwargs).save_onnx(model, output)()
    G_LOGGER.info(f"Saved model to: {output}")
    return EXIT_PASS
