"""Loading the ONNX model named on the command line, with Polygraphy's ONNX options."""

from __future__ import annotations

import os

from poly.cli.examples import example_model_path

MARK_ALL_WORDS = ("mark", "all")


def resolve_model(path, example=False):
    """The model path: the bundled example for `--example` (or the word `example` when no such
    file exists)."""
    if example or (path == "example" and not os.path.exists(path)):
        return example_model_path()
    if path is None:
        import click

        raise click.UsageError("Missing argument 'MODEL' (or pass --example for the bundled model).")
    if not os.path.exists(path):
        import click

        raise click.BadParameter(f"Path {path!r} does not exist.", param_hint="'MODEL'")
    return path


def parse_outputs(values):
    """`mark all` -> MARK_ALL; names otherwise; () -> None."""
    from poly.core.constants import MARK_ALL

    values = list(values or ())
    if not values:
        return None
    if values == list(MARK_ALL_WORDS) or values == [MARK_ALL]:
        return MARK_ALL
    return values


def onnx_loader(path, outputs=(), exclude_outputs=(), shape_inference=False):
    """A lazy ONNX loader for `path` with outputs modified as asked; the path itself when
    nothing is modified (runners then load it directly)."""
    from poly.onnx import InferShapes, ModifyOutputs, OnnxFromPath

    marked = parse_outputs(outputs)
    excluded = list(exclude_outputs or ()) or None
    if marked is None and excluded is None and not shape_inference:
        return path
    loader = OnnxFromPath(path)
    if shape_inference:
        loader = InferShapes(loader)
    if marked is not None or excluded is not None:
        loader = ModifyOutputs(loader, outputs=marked, exclude_outputs=excluded)
    return loader


def save_options(func):
    """Adds Polygraphy's ONNX save options (-o is added by each command)."""
    import click

    opts = [
        click.option("--save-external-data", "--external-data-path", "external_data_path", is_flag=False,
                     flag_value="", default=None,
                     help="Save weights as external data at this path (relative to the model); "
                     "no value: <model>.data."),
        click.option("--external-data-size-threshold", type=int, default=None,
                     help="Tensors of at least this many bytes go to the external data file (default 1024)."),
        click.option("--no-save-all-tensors-to-one-file", "all_tensors_to_one_file", flag_value=False, default=None,
                     help="Write each external tensor to its own file."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def save_model(model, path, external_data_path=None, external_data_size_threshold=None,
               all_tensors_to_one_file=None):
    """Saves with SaveOnnx (atomic; external data as asked)."""
    from poly.onnx import SaveOnnx

    SaveOnnx(model, path, external_data_path=external_data_path, size_threshold=external_data_size_threshold,
             all_tensors_to_one_file=all_tensors_to_one_file)()
