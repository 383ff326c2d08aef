"""`poly plugin replace MODEL --plugin-dir DIR [--config config.yaml] [-o replaced.onnx]`:
replaces the subgraphs the plugin config lists with one plugin node each."""

from __future__ import annotations

import os
from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.load import OnnxLoadArgs
from poly.cli.args.onnx.plugin import PluginArgs
from poly.cli.args.onnx.save import OnnxSaveArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@PluginArgs.options(select=False)
@click.option("--config", type=click.Path(dir_okay=False),
              help="The plugin config written by `poly plugin match` (default: config.yaml in MODEL's directory).")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Where to save the modified model (default: replaced.onnx in MODEL's directory).")
@OnnxLoadArgs.options(shape_inference=True)
@OnnxSaveArgs.options()
@LoggingArgs.options()
@handle_errors
def replace(config: Any, output: Any, **kwargs: Any) -> Any:
    """Replace the subgraphs listed in a plugin config with plugin nodes."""
    from poly.core import G_LOGGER
    from poly.onnx import OnnxFromPath
    from poly.onnx.plugins import load_plugin_config, replace_plugins

    plugins = PluginArgs.from_kwargs(kwargs)
    model = ModelArgs.from_kwargs(kwargs)
    model_dir = os.path.dirname(os.path.abspath(model.path))  # type: ignore[type-var]
    config = config or os.path.join(model_dir, "config.yaml")  # type: ignore[arg-type]
    if not os.path.isfile(config):
        raise click.BadParameter(f"{config!r} does not exist (write it with `poly plugin match`)",
                                 param_hint="'--config'")
    documents = load_plugin_config(config)
    loader = OnnxLoadArgs.from_kwargs(kwargs).load_onnx(model.path)  # type: ignore[arg-type]
    replaced, _ = replace_plugins(OnnxFromPath(loader) if isinstance(loader, str) else loader,
                                  plugins.plugin_dir, documents)
    output = output or os.path.join(model_dir, "replaced.onnx")  # type: ignore[arg-type]
    OnnxSaveArgs.from_kwargs(kwargs).save_onnx(replaced, output)()
    G_LOGGER.info(f"Saved the model with plugins to {output}")
    return EXIT_PASS
