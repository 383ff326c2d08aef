"""`poly plugin match MODEL --plugin-dir DIR [-o config.yaml]` and `poly plugin list MODEL
--plugin-dir DIR`: the subgraphs of MODEL that each plugin's pattern matches; `match` saves
them to the plugin config, `list` only reports them."""

from __future__ import annotations

import os
from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.load import OnnxLoadArgs
from poly.cli.args.onnx.plugin import PluginArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand


def _matches(kwargs: Any) -> list:
    """The config documents of MODEL for the selected plugins, and the counts logged."""
    from poly.core import G_LOGGER
    from poly.onnx import OnnxFromPath
    from poly.onnx.plugins import match_counts

    plugins = PluginArgs.from_kwargs(kwargs)
    model = ModelArgs.from_kwargs(kwargs)
    loader = OnnxLoadArgs.from_kwargs(kwargs).load_onnx(model.path)  # type: ignore[arg-type]
    documents = plugins.match(OnnxFromPath(loader) if isinstance(loader, str) else loader)
    G_LOGGER.info("the following plugins matched:")
    G_LOGGER.info(str(match_counts(documents, plugins.plugin_names())))
    return documents


def _common_options(func: Any) -> Any:
    for decorator in reversed([ModelArgs.options(), PluginArgs.options(), OnnxLoadArgs.options(shape_inference=True)]):
        func = decorator(func)
    return func


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@_common_options
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Path of the plugin config to write (default: config.yaml in MODEL's directory).")
@LoggingArgs.options()
@handle_errors
def match(output: Any, **kwargs: Any) -> Any:
    """Find subgraphs that plugins can replace and save them to a config file.

    Review and edit the config (remove the instances that should stay), then pass it to
    `poly plugin replace --config`.
    """
    from poly.core import G_LOGGER
    from poly.onnx.plugins import save_plugin_config

    documents = _matches(kwargs)
    path = output or os.path.join(os.path.dirname(os.path.abspath(kwargs["model_file"])), "config.yaml")
    save_plugin_config(documents, path)
    G_LOGGER.info(f"Matching subgraphs saved to {path}")
    return EXIT_PASS


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@_common_options
@LoggingArgs.options()
@handle_errors
def list_matches(**kwargs: Any) -> Any:
    """Find subgraphs that plugins can replace and print how many per plugin (no file written)."""
    from poly.core import G_LOGGER

    for document in _matches(kwargs):
        for instance in document["instances"]:
            G_LOGGER.info(f"{document['name']} ({document['op']}): inputs {instance['inputs']} -> "
                          f"outputs {instance['outputs']}, attributes {instance.get('attributes') or {}}")
    return EXIT_PASS
