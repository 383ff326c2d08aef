"""`poly surgeon weight-reconstruct MODEL -o OUT [--weights FILE] [--seed N]`: fills the
stripped weights of a weightless model back in."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.save import OnnxSaveArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand


def load_weights(path: Any) -> dict[Any, Any]:
    """{name: value} from --weights: the initializers of an ONNX model, or the arrays of an .npz file."""
    if str(path).lower().endswith(".npz"):
        import zipfile

        import numpy as np

        if not zipfile.is_zipfile(path):
            raise click.BadParameter(f"{path!r} is not an .npz archive", param_hint="'--weights'")
        try:
            with np.load(path, allow_pickle=False) as archive:
                return {name: archive[name] for name in archive.files}
        except (OSError, ValueError) as err:
            raise click.BadParameter(f"cannot read {path!r} as an .npz archive: {err}",
                                     param_hint="'--weights'") from None
    from poly.onnx import OnnxFromPath

    return {tensor.name: tensor for tensor in OnnxFromPath(path)().graph.initializer}


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Path to save the model.")
@click.option("--weights", type=click.Path(exists=True, dir_okay=False),
              help="Values for the stripped initializers, by name: an ONNX model (the original, for example) or an "
              ".npz file. The others get random values.")
@click.option("--seed", type=int, help="Seed of the random values (default: unpredictable).")
@click.option("--external-data-dir", "--load-external-data", "--ext", "external_data_dir",
              help="Directory of the model's external data (default: the model's directory).")
@OnnxSaveArgs.options()
@LoggingArgs.options()
@handle_errors
def weight_reconstruct(output: Any, weights: Any, seed: Any, external_data_dir: Any, **kwargs: Any) -> Any:
    """Reconstruct proxy weights in the stripped ONNX model.

    Each initializer marked TRT_WEIGHTLESS gets values of its recorded shape and data type:
    standard-normal random numbers (pruned to 2:4 sparsity where marked SPARSE_2_4), or those of
    --weights. The markers are removed."""
    from poly.core import G_LOGGER
    from poly.onnx import OnnxFromPath, ReconstructWeights

    values = load_weights(weights) if weights else None
    path = ModelArgs.from_kwargs(kwargs).path
    model = ReconstructWeights(OnnxFromPath(path, external_data_dir=external_data_dir), values=values, seed=seed,
                               copy=False)
    OnnxSaveArgs.from_kwargs(kwargs).save_onnx(model, output)()
    G_LOGGER.info(f"Saved model to: {output}")
    return EXIT_PASS
