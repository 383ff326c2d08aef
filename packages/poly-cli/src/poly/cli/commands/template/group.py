"""`poly template`: a group of lazily loaded commands that write starting-point files (editable
Python scripts, sharding hints)."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.lazy_group import LazyGroup

SUBCOMMANDS = {
    "trt-network": ("poly.cli.commands.template.trt_network:trt_network",
                    "Write a script that creates a TensorRT network, optionally from a model."),
    "trt-config": ("poly.cli.commands.template.trt_config:trt_config",
                   "Write a script that creates a TensorRT builder configuration."),
    "onnx-gs": ("poly.cli.commands.template.onnx_gs:onnx_gs",
                "[EXPERIMENTAL] Write a script that edits an ONNX model with ONNX-GraphSurgeon."),
    "shard-hints": ("poly.cli.commands.template.shard_hints:shard_hints",
                    "Write a sharding hints file for `poly multi-device shard`."),
}


@click.group(cls=LazyGroup, lazy_subcommands=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
def template() -> Any:
    """Write template files to edit: TensorRT networks and configs, ONNX-GraphSurgeon edits, sharding hints."""
