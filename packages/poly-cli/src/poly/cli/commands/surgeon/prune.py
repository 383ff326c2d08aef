"""`poly surgeon prune MODEL -o OUT`: 2:4 structured sparsity pruning of the weights."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.save import OnnxSaveArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Path to save the model.")
@click.option("--external-data-dir", "--load-external-data", "--ext", "external_data_dir",
              help="Directory of the model's external data (default: the model's directory).")
@OnnxSaveArgs.options()
@LoggingArgs.options()
@handle_errors
def prune(output: Any, external_data_dir: Any, **kwargs: Any) -> Any:
    """[EXPERIMENTAL] Prune the weights of a model to follow a 2:4 structured sparsity pattern
    without regard for accuracy.

    In every group of four values along the axis TensorRT reduces over, the two of smallest
    magnitude become zero: MatMul, Gemm and Conv weights (through Cast, quantize/dequantize and
    Transpose). For functional tests of sparsity only: accuracy will suffer."""
    from poly.core import G_LOGGER
    from poly.onnx import OnnxFromPath, PruneSparsity

    path = ModelArgs.from_kwargs(kwargs).path
    model = PruneSparsity(OnnxFromPath(path, external_data_dir=external_data_dir), copy=False)
    OnnxSaveArgs.from_kwargs(kwargs).save_onnx(model, output)()
    G_LOGGER.info(f"Saved model to: {output}")
    return EXIT_PASS
