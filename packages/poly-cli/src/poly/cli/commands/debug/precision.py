"""`poly debug precision MODEL`: find how many layers must run in higher precision, marking
them in bisect or linear steps, forward or in reverse; with --onnxrt, the fewest nodes of an ONNX
model to keep in float32 when it is converted to float16 (``poly.debug.mixed_precision``)."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.data.data_loader import DataLoaderArgs
from poly.cli.args.debug.debugger import DebugCommand, DebuggerArgs
from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.mixed_precision import MixedPrecisionArgs
from poly.cli.args.trt.config import TrtConfigArgs, reject_save_engine
from poly.cli.args.trt.network import TrtNetworkArgs
from poly.cli.commands.debug.build import SAVE_ENGINE_REASON, engine_builder
from poly.cli.errors import EXIT_FAIL, EXIT_PASS, handle_errors


@click.command(cls=DebugCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option("--mode", type=click.Choice(["bisect", "linear"]), default="bisect", show_default=True,
              help="How layers are chosen: bisect (binary search) or linear (one more layer each iteration).")
@click.option("--dir", "--direction", "direction", type=click.Choice(["forward", "reverse"]), default="forward",
              show_default=True, help="Mark layers from the network inputs (forward) or from its outputs (reverse).")
@click.option("-p", "--precision", type=click.Choice(["float32", "float16"]), default="float32", show_default=True,
              help="The precision marked layers run in.")
@click.option("--onnxrt", "onnxrt_search", is_flag=True,
              help="Search an ONNX model's float16 conversion on ONNX-Runtime instead of TensorRT layers: the "
              "fewest nodes to keep in float32 (a 1-minimal set) for the outputs to pass the comparison with the "
              "float32 model on every input of the data flags, as `poly convert --fp-to-fp16 --keep-accuracy` does. "
              "The comparison (--atol/--rtol/--check-error-stat) is the check: no --check.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="With --onnxrt: write the mixed-precision ONNX model here.")
@click.option("--layer-precisions-script", type=click.Path(dir_okay=False),
              help="TensorRT search: write the layer precisions found to this network postprocess script "
              "(`postprocess(network)`, for --trt-network-postprocess-script with --precision-constraints obey). "
              "The matching --layer-precisions arguments are logged either way.")
@MixedPrecisionArgs.options(keep_accuracy=False, search="--onnxrt")
@TrtNetworkArgs.options()
@TrtConfigArgs.options()
@DataLoaderArgs.options(save_inputs=False)
@DebuggerArgs.options(iter_artifact_default="polygraphy_debug.engine")
@LoggingArgs.options()
@handle_errors
def precision(mode: Any, direction: Any, precision: Any, onnxrt_search: bool, output: str | None,
              layer_precisions_script: str | None, **kwargs: Any) -> Any:
    """[EXPERIMENTAL] Iteratively mark layers to run in a higher precision to find a compromise
    between performance and quality.

    Each iteration builds an engine (polygraphy_debug.engine by default) with the first N
    candidate layers marked, checks it, and narrows N down to the fewest that pass. Build with
    a lower precision enabled (--fp16, --int8): per-layer precisions need full TensorRT.

    With --onnxrt, the ONNX model's float16 conversion is searched on ONNX-Runtime instead: nodes
    are tried by their measured float16 error and the set kept in float32 is 1-minimal."""
    mixed = MixedPrecisionArgs.from_kwargs(kwargs, keep_accuracy=onnxrt_search)
    mixed.check_usage(kwargs, "--onnxrt")
    if onnxrt_search and layer_precisions_script:
        raise click.UsageError("--layer-precisions-script is for the TensorRT search; --onnxrt writes a model (-o)")
    if onnxrt_search:
        return _onnx_search(mixed, output, kwargs)
    for flag, given in (("-o", output), ("--fp32-nodes", mixed.fp32_nodes)):
        if given:
            raise click.UsageError(f"{flag} needs --onnxrt")
    from poly.debug import Precision
    from poly.trt import SetLayerPrecisions
    from poly.trt.networks.creation import unpack_network
    from poly.trt.networks.layer_precisions import precision_candidate_layers, supports_layer_precisions

    model = ModelArgs.from_kwargs(kwargs)
    reject_save_engine(kwargs, SAVE_ENGINE_REASON)
    network_args = TrtNetworkArgs.from_kwargs(kwargs)
    data = DataLoaderArgs.from_kwargs(kwargs)
    config = TrtConfigArgs.from_kwargs(kwargs).with_precision_constraints("obey")
    _, network, _ = unpack_network(network_args.load_network(model))
    if not supports_layer_precisions(network):
        from poly.core import G_LOGGER
        from poly.trt import flavour

        G_LOGGER.critical(f"poly debug precision needs per-layer precisions, which {flavour()} does not have "
                          "(its networks are strongly typed); use full TensorRT")
    layers = precision_candidate_layers(network)

    def mark(network_loader: Any, marked: Any) -> Any:
        return SetLayerPrecisions(network_loader, {name: precision for name in marked})

    debugger = DebuggerArgs.from_kwargs(kwargs).create_debugger()
    builder = engine_builder(model, network_args, config, network_postprocess=mark, data=data)
    result = Precision(debugger, layers, builder,
                       mode=mode, direction=direction, precision=precision).run()
    if result.count is None:
        return EXIT_FAIL
    report_layer_precisions({name: precision for name in result.layers}, str(model.path), layer_precisions_script)
    return EXIT_PASS


def report_layer_precisions(layer_precisions: dict[str, str], model_path: str, script: str | None) -> None:
    """Logs the --layer-precisions arguments that build with ``layer_precisions`` and writes them
    as a network postprocess script to ``script`` (when given)."""
    import shlex

    from poly.core import G_LOGGER, save_file
    from poly.trt import layer_precisions_args, layer_precisions_script

    args = " ".join(layer_precisions_args(layer_precisions))
    G_LOGGER.finish(f"Build with these layer precisions: poly convert {shlex.quote(model_path)} <precision flags> "
                    f"{args} --precision-constraints obey -o MODEL.engine")
    if script:
        save_file(layer_precisions_script(layer_precisions, note=f"Written by `poly debug precision` for {model_path}."),
                  script, mode="w", description="network postprocess script")
        G_LOGGER.finish(f"Wrote the network postprocess script {script} (use it with "
                        f"--trt-network-postprocess-script {shlex.quote(script)} --precision-constraints obey)")


def _onnx_search(mixed: MixedPrecisionArgs, output: str | None, kwargs: Any) -> Any:
    """`debug precision --onnxrt`: the float16 search of `poly convert --keep-accuracy`."""
    from poly.onnx import OnnxFromPath, SaveOnnx

    model = ModelArgs.from_kwargs(kwargs)
    if not model.is_onnx:
        raise click.UsageError(f"--onnxrt searches an ONNX model; MODEL {model.path!r} is not one")
    if DebuggerArgs.from_kwargs(kwargs).check is not None:
        raise click.UsageError("--onnxrt needs no --check: the comparison with the float32 model is the check")
    converted, _ = mixed.convert(OnnxFromPath(model.path)(), kwargs, model.path)
    if output:
        SaveOnnx(converted, output)()
    return EXIT_PASS
