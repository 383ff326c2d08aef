"""`poly surgeon extract MODEL --inputs name:shape:dtype --outputs name:dtype -o OUT`."""

from __future__ import annotations

import dataclasses
from typing import Any

import click

from poly.cli.args.data.data_loader import DataLoaderArgs
from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.save import OnnxSaveArgs
from poly.cli.args.onnx.shape_inference import OnnxInferShapesArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand
from poly.cli.multi_option import multi_option
from poly.cli.value_parsing import parse_meta, parse_shapes


def _tensors(model: Any) -> Any:
    """The model's tensors by name (onnx-graphsurgeon's view)."""
    from poly.onnx import gs_from_onnx

    return gs_from_onnx(model).tensors()


def _missing(tensors: Any, in_meta: Any, out_meta: Any) -> Any:
    """Names whose data type (or, for inputs, shape) neither the user nor the model (its
    ``tensors``) gives."""
    missing = []
    for metas, needs_shape in ((in_meta, True), (out_meta, False)):
        for name, (dtype, shape) in metas.items():
            tensor = tensors.get(name)
            known_dtype = dtype is not None or getattr(tensor, "dtype", None) is not None
            known_shape = shape is not None or getattr(tensor, "shape", None) is not None
            if not known_dtype or (needs_shape and not known_shape):
                missing.append(name)
    return missing


def _check_names(tensors: Any, path: Any, in_meta: Any, out_meta: Any) -> None:
    """A usage error naming the flag and the first name no tensor of the model (its ``tensors``) has."""
    from poly.core.util.sequences import find_str_in_iterable

    for flag, metas in (("--inputs", in_meta), ("--outputs", out_meta)):
        unknown = [name for name in metas if name not in tensors]
        if unknown:
            close = find_str_in_iterable(unknown[0], tensors)
            hint = f"; did you mean '{close}'?" if close else ""
            raise click.UsageError(f"{flag} {unknown[0]}: {path} has no tensor named '{unknown[0]}'{hint}")


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Path to save the subgraph.")
@multi_option("--inputs", help="Subgraph inputs as NAME:SHAPE:DTYPE, `auto` for unknown parts, e.g. x:[1,3]:float32 y:auto:auto.")
@multi_option("--outputs", help="Subgraph outputs as NAME:DTYPE, `auto` for unknown, e.g. z:float32 w:auto.")
@multi_option("--model-input-shapes", "--model-inputs", "model_input_shapes",
              help="Shapes of the model's inputs for the data of fallback shape inference, e.g. x:[1,3,224,224] "
              "(no effect unless fallback shape inference runs).")
@click.option("--external-data-dir", "--load-external-data", "--ext", "external_data_dir",
              help="Directory of the model's external data (default: the model's directory).")
@OnnxInferShapesArgs.options(default=False)
@DataLoaderArgs.options(input_shapes=False)
@OnnxSaveArgs.options()
@LoggingArgs.options()
@handle_errors
def extract(output: Any, inputs: Any, outputs: Any, model_input_shapes: Any, external_data_dir: Any, **kwargs: Any) -> Any:
    """Extract a subgraph based on the specified inputs and outputs.

    Data types and shapes given as `auto` come from the model, then from ONNX shape inference,
    then from a run in ONNX-Runtime (fallback shape inference, which makes shapes static)."""
    from poly.core import G_LOGGER
    from poly.core.func import invoke_if_callable
    from poly.onnx import ExtractSubgraph, OnnxFromPath

    if not inputs and not outputs:
        raise click.UsageError("At least one of --inputs or --outputs must be given.")
    in_meta = {name: (dtype, shape) for name, dtype, shape in parse_meta("--inputs", inputs)}
    out_meta = {name: (dtype, shape) for name, dtype, shape in parse_meta("--outputs", outputs, with_shape=False)}
    shapes = parse_shapes("--model-input-shapes", model_input_shapes)
    infer = OnnxInferShapesArgs.from_kwargs(kwargs, default=False)
    data_loader = dataclasses.replace(DataLoaderArgs.from_kwargs(kwargs), input_shapes=shapes)

    path = ModelArgs.from_kwargs(kwargs).path
    model = invoke_if_callable(infer.infer_shapes(OnnxFromPath(path, external_data_dir=external_data_dir)))
    tensors = _tensors(model)  # built once for the name check and the first look for unknown types
    _check_names(tensors, path, in_meta, out_meta)
    missing = _missing(tensors, in_meta, out_meta) if not infer.force_fallback else []
    if missing and not infer.shape_inference:
        G_LOGGER.info("Running shape inference to derive shapes and/or data types for `auto` arguments.")
        model = infer.infer_shapes(model, force=True)()
        missing = _missing(_tensors(model), in_meta, out_meta)
    if missing or infer.force_fallback:
        if missing:
            G_LOGGER.warning(f"Tensors with unknown shapes or data types: {missing}; running the model in "
                             "ONNX-Runtime to determine them (dynamic dimensions may become static)")
        fallback = infer.fallback_metadata(model, data_loader, outputs=[*in_meta, *out_meta])
        from poly.onnx import gs_from_onnx

        tensors = gs_from_onnx(model).tensors()

        def choose(user: Any, name: Any, attr: Any, found: Any) -> Any:
            if user is not None:
                return user
            known = getattr(tensors.get(name), attr, None)
            return found if infer.force_fallback or known is None else known

        for metas, set_shapes in ((in_meta, True), (out_meta, infer.force_fallback)):
            for name, (dtype, shape) in metas.items():
                found_dtype, found_shape = fallback.get(name, (None, None))
                metas[name] = (choose(dtype, name, "dtype", found_dtype),
                               choose(shape, name, "shape", found_shape) if set_shapes else shape)

    subgraph = ExtractSubgraph(model, input_metadata=in_meta or None, output_metadata=out_meta or None)
    OnnxSaveArgs.from_kwargs(kwargs).save_onnx(subgraph, output)()
    G_LOGGER.info(f"Saved subgraph to: {output}")
    return EXIT_PASS
