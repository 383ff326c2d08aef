"""The TensorRT network group: --trt-outputs / --trt-exclude-outputs (the network's outputs),
--strongly-typed (how the network is created) and the plugin, parser, layer and tensor settings
of ``TrtNetworkEdits``, applied when the ONNX model is parsed into a TensorRT network."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from poly.cli.args.onnx.load import outputs_argument
from poly.cli.args.trt.network_edits import TrtNetworkEdits
from poly.cli.args.trt.scripts import TrtNetworkScriptArgs
from poly.cli.gen_script.call_tree import Ref, evaluate
from poly.cli.multi_option import multi_option, stack_options
from poly.cli.value_parsing import parse_outputs

if TYPE_CHECKING:
    from poly.cli.args.model import ModelArgs


def strongly_typed_option() -> Any:
    """--strongly-typed. ``--help`` lists it with the precision flags of the TensorRT config
    group (``TrtConfigArgs.options`` places it there); ``TrtNetworkArgs`` reads it."""
    return click.option("--strongly-typed", is_flag=True,
                        help="Build a strongly typed network: precisions come from the model's types.")


@dataclass(frozen=True)
class TrtNetworkArgs:
    """How the TensorRT network is created from the ONNX model."""

    outputs: tuple[str, ...] | str | None = None
    """--trt-outputs: names to mark as outputs, ``poly.core.MARK_ALL`` for `mark all`, None: as parsed."""
    exclude_outputs: tuple[str, ...] | None = None
    strongly_typed: bool = False
    edits: TrtNetworkEdits = field(default_factory=TrtNetworkEdits)
    """Plugins, parser flags, layer precisions, I/O types and formats, debug tensors."""
    scripts: TrtNetworkScriptArgs = field(default_factory=TrtNetworkScriptArgs)
    """The network script options (--trt-network-func-name, --trt-network-postprocess-script)."""

    @classmethod
    def options(cls, tensor_formats: bool = False) -> Any:
        """--trt-outputs, --trt-exclude-outputs (--strongly-typed: see ``strongly_typed_option``),
        between the plugin and parser flags and the layer and tensor settings of
        ``TrtNetworkEdits`` (``tensor_formats`` adds --tensor-formats)."""
        return stack_options([
            TrtNetworkEdits.parser_options(),
            multi_option("--trt-outputs", help="Names of TensorRT network outputs to mark, or `mark all`."),
            multi_option("--trt-exclude-outputs", help="Names of TensorRT network outputs to unmark."),
            TrtNetworkEdits.network_options(tensor_formats=tensor_formats),
            TrtNetworkScriptArgs.options(),
        ], section="TensorRT Network Loading")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> TrtNetworkArgs:
        outputs = parse_outputs(kwargs["trt_outputs"])
        return cls(
            outputs=tuple(outputs) if isinstance(outputs, list) else outputs,
            exclude_outputs=tuple(kwargs["trt_exclude_outputs"] or ()) or None,
            strongly_typed=bool(kwargs["strongly_typed"]),
            edits=TrtNetworkEdits.from_kwargs(kwargs),
            scripts=TrtNetworkScriptArgs.from_kwargs(kwargs),
        )

    def network_expr(self, model: str | ModelArgs, parser_path: Any = None) -> Any:
        """The call tree of the network loader of MODEL (a path, or ``ModelArgs``): the network
        script's function for a network-script MODEL, else NetworkFromOnnxPath of ``parser_path``
        (default: MODEL's path); then LoadPlugins for --plugins, the
        --trt-network-postprocess-script steps, ModifyNetworkOutputs when outputs are marked or
        excluded, and the loaders of the layer and tensor settings (``TrtNetworkEdits``)."""
        if not isinstance(model, str) and model.is_network_script:
            expr = self.scripts.script_network_expr(model)
        else:
            path = parser_path if parser_path is not None else model if isinstance(model, str) else model.path
            expr = Ref("poly.trt", "NetworkFromOnnxPath")(path, strongly_typed=self.strongly_typed or None,
                                                          **self.edits.parser_kwargs())
        expr = self.edits.plugins_expr(expr)
        expr = self.scripts.postprocess_expr(expr)
        if self.outputs is not None or self.exclude_outputs is not None:
            excluded = list(self.exclude_outputs) if self.exclude_outputs is not None else None
            expr = Ref("poly.trt", "ModifyNetworkOutputs")(expr, outputs=outputs_argument(self.outputs),
                                                           exclude_outputs=excluded)
        return self.edits.postprocess_expr(expr)

    def load_network(self, model: str | ModelArgs) -> Any:
        """The network loader of MODEL (``network_expr`` evaluated)."""
        return evaluate(self.network_expr(model))
