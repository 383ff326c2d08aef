"""`poly debug reduce MODEL -o OUT --check CMD...`: reduce a failing ONNX model to the
smallest set of nodes that still fails."""

from __future__ import annotations

import dataclasses
from typing import Any

import click

from poly.cli.args.data.data_loader import DataLoaderArgs
from poly.cli.args.debug.debugger import DebugCommand, DebuggerArgs
from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.save import OnnxSaveArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.multi_option import multi_option
from poly.cli.value_parsing import parse_shapes


@click.command(cls=DebugCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), default=None, help="Where to save the reduced model."
)
@click.option(
    "--min-good",
    "--minimal-good",
    "min_good",
    type=click.Path(dir_okay=False),
    default=None,
    help="Where to save a model close in size to the reduced one that does not fail (not always found).",
)
@click.option(
    "--no-reduce-inputs",
    "reduce_inputs",
    flag_value=False,
    default=True,
    help="Keep the model's inputs: only find the earliest failing outputs.",
)
@click.option(
    "--no-reduce-outputs",
    "reduce_outputs",
    flag_value=False,
    default=True,
    help="Keep the model's outputs: only find the latest failing inputs.",
)
@click.option(
    "--mode",
    type=click.Choice(["bisect", "linear"]),
    default="bisect",
    show_default=True,
    help="'bisect' halves the candidate each iteration; 'linear' removes one node at a time (slower, "
    "and minimal in models with branches).",
)
@multi_option(
    "--model-input-shapes",
    "--model-inputs",
    "model_input_shapes",
    help="Shapes of the model's inputs, e.g. image:[1,3,224,224] other:[10].",
)
@click.option(
    "--no-shape-inference",
    "shape_inference",
    flag_value=False,
    default=True,
    help="Do not run ONNX shape inference.",
)
@click.option(
    "--force-fallback-shape-inference",
    is_flag=True,
    help="Take the types and shapes of intermediate tensors from a run in ONNX-Runtime.",
)
@click.option(
    "--no-onnxruntime-shape-inference",
    "onnxruntime_shape_inference",
    flag_value=False,
    default=True,
    help="Do not ask ONNX-Runtime about tensors ONNX shape inference cannot type.",
)
@click.option(
    "--external-data-dir",
    "--load-external-data",
    "--ext",
    "external_data_dir",
    default=None,
    help="Directory of the model's external data (defaults to the model's directory).",
)
@DataLoaderArgs.options(save_inputs=False)
@OnnxSaveArgs.options()
@DebuggerArgs.options(iter_artifact_default="polygraphy_debug.onnx")
@LoggingArgs.options()
@handle_errors
def reduce(
    output: Any,
    min_good: Any,
    reduce_inputs: Any,
    reduce_outputs: Any,
    mode: Any,
    model_input_shapes: Any,
    shape_inference: Any,
    force_fallback_shape_inference: Any,
    onnxruntime_shape_inference: Any,
    external_data_dir: Any,
    **kwargs: Any,
) -> Any:
    """[EXPERIMENTAL] Reduce a failing ONNX model to the minimum set of nodes that cause the failure.

    Each iteration writes a candidate model (polygraphy_debug.onnx by default) and runs the
    --check command on it; failing candidates are reduced further, passing ones grown back.
    A check such as `poly run polygraphy_debug.onnx --onnxrt` is typical.

    When the check compares against saved golden outputs (`--load-outputs golden.json`, e.g.
    saved with `--onnx-outputs mark all`), candidates mark as outputs only the tensors the golden
    file holds, so that no output is compared with a golden one of another name; a candidate
    with none of them (only Constant nodes, say) counts as passing without running the check.

    The data loader flags (--load-inputs, --data-loader-script, --seed, ...) give the inputs of
    the ONNX-Runtime run that fallback shape inference makes: pass the ones the --check command
    uses."""
    from poly.core import G_LOGGER
    from poly.debug import Reduce
    from poly.onnx import OnnxFromPath

    if not output and not min_good:
        raise click.UsageError("Give -o/--output (the reduced model) and/or --min-good (a passing model).")
    if not reduce_inputs and not reduce_outputs:
        raise click.UsageError("--no-reduce-inputs and --no-reduce-outputs cannot be used together.")
    if force_fallback_shape_inference and not shape_inference:
        raise click.UsageError(
            "--no-shape-inference and --force-fallback-shape-inference cannot be used together."
        )
    model = ModelArgs.from_kwargs(kwargs)
    shapes = parse_shapes("--model-input-shapes", model_input_shapes)
    save = OnnxSaveArgs.from_kwargs(kwargs)
    data = DataLoaderArgs.from_kwargs(kwargs)
    # Candidates keep their external data next to themselves, under their own name.
    candidate_save = dataclasses.replace(save, external_data_path=None if save.external_data_path is None else "")

    def save_candidate(candidate: Any, path: Any) -> None:
        # A candidate lives for one iteration: written atomically, not flushed to disk.
        candidate_save.save_onnx(candidate, path, durable=False)()

    debugger = DebuggerArgs.from_kwargs(kwargs).create_debugger()
    reducer = Reduce(
        OnnxFromPath(model.path, external_data_dir=external_data_dir),
        debugger,
        mode=mode,
        reduce_inputs=reduce_inputs,
        reduce_outputs=reduce_outputs,
        input_shapes=shapes,
        shape_inference=shape_inference,
        allow_onnxruntime_shape_inference=onnxruntime_shape_inference,
        force_fallback_shape_inference=force_fallback_shape_inference,
        save_model=save_candidate,
        data_loader=data.create_data_loader(),
        refuse_check_failing_alike=True,
    )
    result = reducer.run()
    if output:
        save.save_onnx(result.model, output)()
        G_LOGGER.info(f"Saved the reduced model ({len(result.nodes)} node(s)) to: {output}")
    if min_good:
        if result.min_good_model is None:
            G_LOGGER.warning(
                "No passing model close in size to the reduced one was found; --min-good is not written"
            )
        else:
            save.save_onnx(result.min_good_model, min_good)()
            G_LOGGER.info(f"Saved a passing model ({len(result.min_good_nodes)} node(s)) to: {min_good}")
    return EXIT_PASS
