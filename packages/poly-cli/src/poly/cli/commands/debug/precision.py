"""`poly debug precision MODEL`: find how many layers must run in higher precision, marking
them in bisect or linear steps, forward or in reverse."""

from __future__ import annotations

import click

from poly.cli.commands.debug.build import engine_builder
from poly.cli.debug_options import DebugCommand, build_debugger, debug_options
from poly.cli.errors import EXIT_FAIL, EXIT_PASS
from poly.cli.model_args import resolve_model
from poly.cli.trt_options import trt_build_options, trt_output_options


@click.command(cls=DebugCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model_file", metavar="MODEL")
@click.option("--mode", type=click.Choice(["bisect", "linear"]), default="bisect", show_default=True,
              help="How layers are chosen: bisect (binary search) or linear (one more layer each iteration).")
@click.option("--dir", "--direction", "direction", type=click.Choice(["forward", "reverse"]), default="forward",
              show_default=True, help="Mark layers from the network inputs (forward) or from its outputs (reverse).")
@click.option("-p", "--precision", type=click.Choice(["float32", "float16"]), default="float32", show_default=True,
              help="The precision marked layers run in.")
@trt_output_options
@trt_build_options
@debug_options(iter_artifact_default="polygraphy_debug.engine")
def precision(model_file, mode, direction, precision, **opts):
    """[EXPERIMENTAL] Iteratively mark layers to run in a higher precision to find a compromise
    between performance and quality.

    Each iteration builds an engine (polygraphy_debug.engine by default) with the first N
    candidate layers marked, checks it, and narrows N down to the fewest that pass. Build with
    a lower precision enabled (--fp16, --int8): per-layer precisions need full TensorRT."""
    from poly.cli.trt_args import network_loader
    from poly.debug import Precision
    from poly.trt import SetLayerPrecisions
    from poly.trt.layer_precisions import precision_candidate_layers, supports_layer_precisions

    model = resolve_model(model_file)
    if opts.get("save_engine"):
        raise click.UsageError("--save-engine: each iteration's engine is the --iter-artifact; sort it with --artifacts")
    _, network, _ = network_loader(model, opts)()
    if not supports_layer_precisions(network):
        from poly.core.logger import G_LOGGER
        from poly.trt import flavour

        G_LOGGER.critical(f"poly debug precision needs per-layer precisions, which {flavour()} does not have "
                          "(its networks are strongly typed); use full TensorRT")
    layers = precision_candidate_layers(network)
    opts["precision_constraints"] = opts.get("precision_constraints") or "obey"

    def mark(network_loader_, marked):
        return SetLayerPrecisions(network_loader_, {name: precision for name in marked})

    debugger = build_debugger(opts)
    result = Precision(debugger, layers, engine_builder(model, opts, network_postprocess=mark), mode=mode,
                       direction=direction, precision=precision).run()
    return EXIT_PASS if result.count is not None else EXIT_FAIL
