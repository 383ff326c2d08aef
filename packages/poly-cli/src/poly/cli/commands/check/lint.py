"""`poly check lint MODEL [-o report.json]`: lint an ONNX model node by node."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from poly.cli.args.data.data_loader import DataLoaderArgs
from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.onnxrt import OnnxrtArgs
from poly.cli.errors import EXIT_FAIL, EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Where to save the JSON report (summary of passing and failing nodes, lint entries).")
@click.option("--external-data-dir", "--load-external-data", "--ext", "external_data_dir", default=None,
              type=click.Path(exists=True, file_okay=False),
              help="Directory of the model's external data (defaults to the model's directory).")
@DataLoaderArgs.options(save_inputs=False)
@OnnxrtArgs.options()
@LoggingArgs.options()
@handle_errors
def lint(output: Any, external_data_dir: Any, **kwargs: Any) -> Any:
    """[EXPERIMENTAL] Topologically lint an ONNX model to find faulty nodes.

    Runs the ONNX checker, then the model in ONNX-Runtime; when that fails, every node on its
    own, in order, on the outputs of the nodes before it (nodes that depend on a faulty node are
    not checked). Reports invalid nodes, duplicate node names, and inputs and nodes that do not
    affect the outputs; exits 1 when the model is invalid.

    The JSON report (-o) holds 'summary' (the 'passing' and 'failing' nodes) and 'lint_entries'
    (each with 'level', 'source', 'message' and, for entries about a node, 'nodes')."""
    from poly.core import G_LOGGER
    from poly.onnx.lint import lint_onnx

    start = time.time()
    model = ModelArgs.from_kwargs(kwargs)
    data = DataLoaderArgs.from_kwargs(kwargs)
    onnxrt = OnnxrtArgs.from_kwargs(kwargs)
    command = " ".join(["poly", *sys.argv[1:]]) if sys.argv and sys.argv[0].endswith("poly") else f"poly check lint {model.path}"
    G_LOGGER.start(f"RUNNING | Command: {command}")

    report = lint_onnx(
        model.path,
        data_loader=data.create_data_loader(),
        providers=list(onnxrt.providers) or None,
        input_shapes=data.input_shapes,
        external_data_dir=external_data_dir,
    )
    if output:
        report.save(output)
    status = "PASSED" if report.is_valid else "FAILED"
    message = f"{status} | Runtime: {time.time() - start:.3f}s | Command: {command}"
    (G_LOGGER.finish if report.is_valid else G_LOGGER.error)(message)
    return EXIT_PASS if report.is_valid else EXIT_FAIL
