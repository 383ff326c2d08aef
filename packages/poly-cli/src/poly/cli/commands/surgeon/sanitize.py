"""`poly surgeon sanitize MODEL --fold-constants --cleanup --override-input-shapes ... -o OUT`."""

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
from poly.cli.value_parsing import cast_literal, parse_byte_count, parse_outputs, parse_shapes

FOLD_ONLY_FLAGS = {"num_passes": "--num-passes", "partitioning": "--partitioning", "fold_shapes": "--no-fold-shapes",
                   "per_pass_shape_inference": "--no-per-pass-shape-inference",
                   "fold_size_threshold": "--fold-size-threshold"}
"""Flags that only mean something with --fold-constants (parameter -> flag)."""


def parse_upper_bounds(values: Any) -> dict | None:
    """`1000 x:4000` -> {"": 1000, "x": 4000} (--set-unbounded-dds-upper-bound)."""
    if not values:
        return None
    bounds = {}
    for arg in values:
        name, _, text = arg.rpartition(":")
        bound = cast_literal(text)
        if not isinstance(bound, int) or bound < 0:
            raise click.BadParameter(f"{arg!r}: the upper bound must be a non-negative integer",
                                     param_hint="'--set-unbounded-dds-upper-bound'")
        bounds[name] = bound
    return bounds


def set_input_shapes(graph: Any, shapes: Any) -> None:
    """Sets the shapes of the graph inputs named in ``shapes`` and forgets the shapes of all
    other tensors, outputs included (stale under the new input shapes; shape inference runs
    again); a name that is no input is a usage error."""
    for name, shape in shapes.items():
        match = [t for t in graph.inputs if t.name == name]
        if not match:
            raise click.BadParameter(f"{name!r} is not an input of the model "
                                     f"(inputs: {[t.name for t in graph.inputs]})",
                                     param_hint="'--override-input-shapes'")
        match[0].shape = shape
    for tensor in graph.tensors().values():
        if tensor not in graph.inputs and not hasattr(tensor, "values"):
            tensor.shape = None


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Path to save the model.")
@click.option("--fold-constants", is_flag=True, help="Fold constants in the graph.")
@click.option("--num-passes", "--num-const-fold-passes", "num_passes", type=click.IntRange(min=1),
              help="Constant-folding passes (default: until a pass folds nothing).")
@click.option("--partitioning", type=click.Choice(["basic", "recursive"]),
              help="Partition the graph while folding so that a failure in one part does not stop the others: "
              "'basic', or 'recursive' (partitions partitions where needed).")
@click.option("--no-fold-shapes", "fold_shapes", flag_value=False, default=None,
              help="Do not fold Shape nodes and the subgraphs computing on shapes.")
@click.option("--no-per-pass-shape-inference", "per_pass_shape_inference", flag_value=False, default=None,
              help="Do not infer shapes between constant-folding passes.")
@click.option("--fold-size-threshold",
              help="Largest tensor, in bytes, that folding may create (K, M, G suffixes: KiB, MiB, GiB; e.g. 16M); "
              "larger ones stay computations.")
@click.option("--cleanup", is_flag=True, help="Remove unused nodes and tensors, and sort the graph.")
@click.option("--toposort", is_flag=True, help="Topologically sort the graph.")
@multi_option("--override-input-shapes", "--override-inputs", "override_input_shapes",
              help="Override input shapes, e.g. x:[1,3,224,224] y:[1,10].")
@multi_option("--outputs", help="Names of tensors to mark as the model's outputs, or `mark all`.")
@multi_option("--exclude-outputs", help="Names of outputs to unmark (after --outputs).")
@click.option("--external-data-dir", "--load-external-data", "--ext", "external_data_dir",
              help="Directory of the model's external data (default: the model's directory).")
@click.option("--fp-to-fp16", is_flag=True, help="Convert the model's float32 tensors and ops to float16.")
@multi_option("--set-unbounded-dds-upper-bound", "upper_bounds",
              help="Cap the values deciding unbounded data-dependent shapes: a bound for all, and/or per tensor, "
              "e.g. 1000 x:4000. Fold constants and infer shapes first.")
@OnnxInferShapesArgs.options()
@DataLoaderArgs.options(input_shapes=False)
@OnnxSaveArgs.options()
@LoggingArgs.options()
@handle_errors
def sanitize(output: Any, fold_constants: Any, num_passes: Any, partitioning: Any, fold_shapes: Any, per_pass_shape_inference: Any,
             fold_size_threshold: Any, cleanup: Any, toposort: Any, override_input_shapes: Any, outputs: Any, exclude_outputs: Any,
             external_data_dir: Any, fp_to_fp16: Any, upper_bounds: Any, **kwargs: Any) -> Any:
    """Clean up, optimize, and/or change input shapes in an ONNX model."""
    from poly.core import G_LOGGER
    from poly.core.func import invoke_if_callable
    from poly.onnx import (
        ConvertToFp16,
        FoldConstants,
        ModifyOutputs,
        OnnxFromPath,
        SetUpperBound,
        gs_from_onnx,
        onnx_from_gs,
    )

    shapes = parse_shapes("--override-input-shapes", override_input_shapes)
    size_threshold = parse_byte_count("--fold-size-threshold", fold_size_threshold)
    bounds = parse_upper_bounds(upper_bounds)
    mark = parse_outputs(outputs)
    infer = OnnxInferShapesArgs.from_kwargs(kwargs)
    data_loader = dataclasses.replace(DataLoaderArgs.from_kwargs(kwargs), input_shapes=shapes)
    if not fold_constants:
        given = {"num_passes": num_passes, "partitioning": partitioning, "fold_shapes": fold_shapes,
                 "per_pass_shape_inference": per_pass_shape_inference, "fold_size_threshold": fold_size_threshold}
        for name, value in given.items():
            if value is not None:
                G_LOGGER.warning(f"Argument: '{FOLD_ONLY_FLAGS[name]}' will be ignored since constant folding is "
                                 "not enabled; it is only valid with --fold-constants.")

    path = ModelArgs.from_kwargs(kwargs).path
    loader = infer.infer_shapes(OnnxFromPath(path, external_data_dir=external_data_dir))
    if mark is not None or exclude_outputs:
        loader = ModifyOutputs(loader, outputs=mark, exclude_outputs=list(exclude_outputs) or None)
    if fp_to_fp16:
        loader = ConvertToFp16(loader)
    if bounds is not None:
        loader = SetUpperBound(loader, upper_bounds=bounds)
    model = loader()

    if shapes or infer.force_fallback or cleanup or toposort:
        graph = gs_from_onnx(model)
        if shapes:
            set_input_shapes(graph, shapes)
        if infer.force_fallback:
            metadata = infer.fallback_metadata(onnx_from_gs(graph), data_loader)
            for name, tensor in graph.tensors().items():
                if name in metadata and not hasattr(tensor, "values"):
                    tensor.dtype, tensor.shape = metadata[name][0].onnx(), list(metadata[name][1])
        if cleanup:
            graph.cleanup()
        if toposort or cleanup:
            graph.toposort()
        model = onnx_from_gs(graph)
        if shapes:
            model = invoke_if_callable(infer.infer_shapes(model))
    if fold_constants:
        model = FoldConstants(
            model, num_passes=num_passes, partitioning=partitioning, fold_shapes=fold_shapes,
            do_shape_inference=infer.shape_inference if per_pass_shape_inference is not False else False,
            size_threshold=size_threshold, allow_onnxruntime_shape_inference=infer.allow_onnxruntime)()
    OnnxSaveArgs.from_kwargs(kwargs).save_onnx(model, output)()
    G_LOGGER.info(f"Saved model to: {output}")
    return EXIT_PASS
