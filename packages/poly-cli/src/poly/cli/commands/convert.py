"""`poly convert MODEL -o OUT`: ONNX to a TensorRT engine (with the builder flags), or ONNX to
ONNX (with --fp-to-fp16)."""

from __future__ import annotations

import dataclasses
from typing import Any

import click

from poly.cli.args.data.data_loader import DataLoaderArgs
from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.load import OnnxLoadArgs
from poly.cli.args.onnx.mixed_precision import MixedPrecisionArgs
from poly.cli.args.onnx.save import OnnxSaveArgs
from poly.cli.args.trt.config import TrtConfigArgs
from poly.cli.args.trt.network import TrtNetworkArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options(model_type=True)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Path to save the converted model.")
@click.option("--convert-to", type=click.Choice(["onnx", "trt"]),
              help="Target format (default: onnx for a .onnx output, else a TensorRT engine).")
@click.option("--fp-to-fp16", is_flag=True, help="Convert the ONNX model's float32 tensors and ops to float16 "
              "(graph inputs and outputs stay float32); with --keep-accuracy or --fp32-nodes, some nodes stay float32.")
@MixedPrecisionArgs.options()
@OnnxLoadArgs.options()
@TrtNetworkArgs.options(tensor_formats=True)
@TrtConfigArgs.options(tensor_formats=True)
@DataLoaderArgs.options(save_inputs=False)
@OnnxSaveArgs.options()
@LoggingArgs.options()
@handle_errors
def convert(output: Any, convert_to: Any, fp_to_fp16: Any, **kwargs: Any) -> Any:
    """Convert models to other formats: ONNX to a TensorRT engine, or ONNX to ONNX."""
    from poly.core import G_LOGGER

    model = ModelArgs.from_kwargs(kwargs)
    mixed = MixedPrecisionArgs.from_kwargs(kwargs)
    mixed.check_usage(kwargs)
    target = convert_to or ("onnx" if output.endswith(".onnx") else "trt")
    if mixed.given and not fp_to_fp16:
        raise click.UsageError(f"{'--keep-accuracy' if mixed.keep_accuracy else '--fp32-nodes'} needs --fp-to-fp16")
    if target == "trt":
        if mixed.given:
            raise click.UsageError("--keep-accuracy and --fp32-nodes convert to ONNX: give an .onnx output "
                                   "(or --convert-to onnx)")
        return _to_engine(model, output, kwargs)
    if not model.is_onnx:
        raise click.UsageError(f"MODEL {model.path!r} is not an ONNX model: it converts to a TensorRT engine only")
    from poly.onnx import ConvertToFp16, OnnxFromPath

    loader = OnnxLoadArgs.from_kwargs(kwargs).load_onnx(model.path)  # type: ignore[arg-type]
    loader = OnnxFromPath(loader) if isinstance(loader, str) else loader
    if mixed.given:
        loader, _ = mixed.convert(loader(), kwargs, model.path)
    elif fp_to_fp16:
        loader = ConvertToFp16(loader)
    OnnxSaveArgs.from_kwargs(kwargs).save_onnx(loader, output)()
    G_LOGGER.info(f"Saved ONNX model to: {output}")
    return EXIT_PASS


def _to_engine(model: ModelArgs, output: Any, kwargs: Any) -> Any:
    from poly.trt import SaveEngine

    data = DataLoaderArgs.from_kwargs(kwargs)
    config = TrtConfigArgs.from_kwargs(kwargs)
    config = dataclasses.replace(config, save_engine=None)  # -o is where the engine goes
    network = TrtNetworkArgs.from_kwargs(kwargs)
    SaveEngine(config.load_engine_bytes(model, network, data_loader=data.calibration_data(config.int8)), output)()
    return EXIT_PASS
