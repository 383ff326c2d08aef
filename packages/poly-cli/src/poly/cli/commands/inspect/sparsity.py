"""`poly inspect sparsity MODEL`: which weights follow the 2:4 structured sparsity pattern (the
logic is poly.onnx.surgery.sparsity)."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option("--load-external-data", "--ext", "external_data_dir",
              help="Directory of the model's external data (default: next to the model).")
@LoggingArgs.options()
@handle_errors
def inspect_sparsity(external_data_dir: Any, **kwargs: Any) -> Any:
    """[EXPERIMENTAL] Display whether each weight tensor of an ONNX model follows a 2:4 structured
    sparsity pattern.

    The weights checked are the initializers feeding a Conv, MatMul or Gemm (also through Cast,
    Q/DQ and Transpose nodes), along the op's reduction axis: every 4 consecutive values there
    must hold at least 2 zeros.
    """
    import sys
    import time

    from poly.core import G_LOGGER
    from poly.onnx import OnnxFromPath
    from poly.onnx.surgery import check_sparsity

    start = time.time()
    path = ModelArgs.from_kwargs(kwargs).path
    command = " ".join(sys.argv) if sys.argv and sys.argv[0].endswith("poly") else f"poly inspect sparsity {path}"
    G_LOGGER.start(f"RUNNING | Command: {command}")
    check_sparsity(OnnxFromPath(path, external_data_dir=external_data_dir)())
    G_LOGGER.finish(f"PASSED | Runtime: {time.time() - start:.3f}s | Command: {command}")
    return EXIT_PASS
