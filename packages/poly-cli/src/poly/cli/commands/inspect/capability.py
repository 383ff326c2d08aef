"""`poly inspect capability [--with-partitioning] MODEL [-o DIR]`: what TensorRT's ONNX parser
supports of a model (the logic is poly.trt.inspection.onnx_capability)."""

from __future__ import annotations

import os
from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand

DEFAULT_OUTPUT_DIR = "polygraphy_capability_dumps"


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option("--with-partitioning", is_flag=True,
              help="Partition the model on the nodes the parser rejects, saving each supported and unsupported "
              "node range as an ONNX model; without it, parse once and report every error (nodes inside "
              "local functions included).")
@click.option("-o", "--output", "output_dir", default=DEFAULT_OUTPUT_DIR, show_default=True,
              type=click.Path(file_okay=False),
              help="Directory for results.txt and, with --with-partitioning, the subgraph models.")
@LoggingArgs.options()
@handle_errors
def inspect_capability(with_partitioning: Any, output_dir: Any, **kwargs: Any) -> Any:
    """Determine which parts of an ONNX model TensorRT's ONNX parser supports.

    With --with-partitioning the model is split into supported and unsupported node ranges,
    saved as supported_subgraph-nodes-A-B.onnx / unsupported_subgraph-nodes-A-B.onnx (node
    indices inclusive), and the summary table names each unsupported operator, the parser's
    reason and the node ranges ([start, end), end exclusive). Without it, the table lists each
    parser error with its operator, node and stack of local functions.
    """
    from poly.core import G_LOGGER, save_file
    from poly.onnx import OnnxFromPath
    from poly.trt.inspection import onnx_capability

    path = ModelArgs.from_kwargs(kwargs).path
    OnnxFromPath(path, ignore_external_data=True)()  # a file that is not an ONNX model: one clear line
    if with_partitioning:
        os.makedirs(output_dir, exist_ok=True)
        result = onnx_capability.partition_capability(path, output_dir)
        if result.fully_supported:
            G_LOGGER.info("Graph is fully supported by TensorRT; Will not generate subgraphs.")
            return EXIT_PASS
        summary = onnx_capability.capability_summary(result.unsupported)
    else:
        errors = onnx_capability.static_capability(path)
        if not errors:
            G_LOGGER.info("Graph is fully supported by TensorRT; Will not report errors.")
            return EXIT_PASS
        summary = onnx_capability.static_capability_summary(errors)
        os.makedirs(output_dir, exist_ok=True)
    G_LOGGER.info(summary)
    save_file(summary, os.path.join(output_dir, "results.txt"), "w", description="results")
    return EXIT_PASS
