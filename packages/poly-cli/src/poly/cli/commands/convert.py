"""`poly convert MODEL -o OUT`: ONNX to a TensorRT engine (with the builder flags), or ONNX to
ONNX (with --fp-to-fp16)."""

from __future__ import annotations

import click

from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.model_args import onnx_loader, resolve_model, save_model, save_options
from poly.cli.options import logging_options, multi_option
from poly.cli.trt_options import trt_build_options, trt_output_options


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("model_file", metavar="MODEL")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Path to save the converted model.")
@click.option("--convert-to", type=click.Choice(["onnx", "trt"]),
              help="Target format (default: onnx for a .onnx output, else a TensorRT engine).")
@click.option("--fp-to-fp16", is_flag=True, help="Convert the ONNX model's float32 tensors and ops to float16.")
@multi_option("--onnx-outputs", help="Names of ONNX outputs to mark, or `mark all`.")
@multi_option("--onnx-exclude-outputs", help="Names of ONNX outputs to unmark.")
@trt_output_options
@trt_build_options
@save_options
@logging_options
@handle_errors
def convert(model_file, output, convert_to, fp_to_fp16, onnx_outputs, onnx_exclude_outputs, **opts):
    """Convert models to other formats: ONNX to a TensorRT engine, or ONNX to ONNX."""
    from poly.core.logger import G_LOGGER

    model_file = resolve_model(model_file)
    target = convert_to or ("onnx" if output.endswith(".onnx") else "trt")
    if target == "trt":
        return _to_engine(model_file, output, opts)
    from poly.onnx import ConvertToFp16, OnnxFromPath

    loader = onnx_loader(model_file, onnx_outputs, onnx_exclude_outputs)
    loader = OnnxFromPath(loader) if isinstance(loader, str) else loader
    if fp_to_fp16:
        loader = ConvertToFp16(loader)
    save = {key: opts[key] for key in ("external_data_path", "external_data_size_threshold", "all_tensors_to_one_file")}
    save_model(loader, output, **save)
    G_LOGGER.info(f"Saved ONNX model to: {output}")
    return EXIT_PASS


def _to_engine(model_file, output, opts):
    from poly.cli.trt_args import check_builder_flags, engine_bytes_loader
    from poly.trt import SaveEngine

    check_builder_flags(opts)
    opts = dict(opts, save_engine=None)
    SaveEngine(engine_bytes_loader(model_file, opts), output)()
    return EXIT_PASS
