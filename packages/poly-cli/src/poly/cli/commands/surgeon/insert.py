"""`poly surgeon insert MODEL --inputs A --outputs B --op OP [--name N] [--attrs k=v ...] -o OUT`."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.save import OnnxSaveArgs
from poly.cli.args.onnx.shape_inference import OnnxInferShapesArgs
from poly.cli.errors import EXIT_PASS, handle_errors
from poly.cli.help_sections import SectionedCommand
from poly.cli.multi_option import multi_option
from poly.cli.value_parsing import parse_attrs


@click.command(cls=SectionedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Path to save the model.")
@multi_option("--inputs", required=True, help="Names of the tensors the new node reads, in order, e.g. x w.")
@multi_option("--outputs", required=True,
              help="Names of the tensors the new node produces, in order. A name that is also an input gets a new "
              "tensor that replaces the old one for its consumers (and as graph output).")
@click.option("--op", required=True, help="The ONNX operator of the new node, e.g. Relu.")
@click.option("--name", help="The name of the new node.")
@multi_option("--attrs", help="Attributes of the new node as NAME=VALUE: ints, floats (with a decimal point), "
              "'quoted' strings, and [lists] of these, e.g. axis=1 perm=[0,2,1] mode='constant'.")
@click.option("--external-data-dir", "--load-external-data", "--ext", "external_data_dir",
              help="Directory of the model's external data (default: the model's directory).")
@OnnxInferShapesArgs.options(default=False, force_fallback=False)
@OnnxSaveArgs.options()
@LoggingArgs.options()
@handle_errors
def insert(output: Any, inputs: Any, outputs: Any, op: Any, name: Any, attrs: Any, external_data_dir: Any, **kwargs: Any) -> Any:
    """[EXPERIMENTAL] Insert a single node into an ONNX model with the specified inputs and outputs.

    Any existing subgraph between the inputs and outputs is replaced."""
    from poly.core import G_LOGGER
    from poly.onnx import InsertNode, OnnxFromPath

    node_attrs = parse_attrs("--attrs", attrs)
    infer = OnnxInferShapesArgs.from_kwargs(kwargs, default=False)
    path = ModelArgs.from_kwargs(kwargs).path
    model = InsertNode(infer.infer_shapes(OnnxFromPath(path, external_data_dir=external_data_dir)),
                       op=op, inputs=inputs, outputs=outputs, name=name, attrs=node_attrs)
    OnnxSaveArgs.from_kwargs(kwargs).save_onnx(model, output)()
    G_LOGGER.info(f"Saved model to: {output}")
    return EXIT_PASS
