"""The runners group: --onnxrt, --onnx-ref, --pluginref and --trt, the backends a command runs the model with
(in the order they are given), and the construction of those runners from the other groups."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from poly.cli.args.onnx.save import OnnxSaveArgs
from poly.cli.args.trt.runtime import TrtRuntimeArgs
from poly.cli.gen_script.call_tree import Assign, BinOp, ListOf, Ref, Var, run_statements
from poly.cli.multi_option import stack_options

if TYPE_CHECKING:
    from poly.cli.args.data.data_loader import DataLoaderArgs
    from poly.cli.args.model import ModelArgs
    from poly.cli.args.onnx.load import OnnxLoadArgs
    from poly.cli.args.onnx.onnxrt import OnnxrtArgs
    from poly.cli.args.trt.config import TrtConfigArgs
    from poly.cli.args.trt.network import TrtNetworkArgs

_META_KEY = "poly.runners"
ONNXRT_HELP = "Run inference using ONNX-Runtime."
ONNX_REF_HELP = "Run inference using the ONNX reference evaluator (onnx.reference)."
PLUGINREF_HELP = ("Run inference using the plugin CPU reference: NumPy implementations of the operators TensorRT "
                  "runs as plugins (InstanceNormalization, MeanVarianceNormalization; Identity), to check a plugin's "
                  "results. An operator without a reference is an error naming it.")


def record_runner(ctx: Any, param: Any, value: Any) -> Any:
    """Callback of the runner flags: remembers their command-line order."""
    if value:
        ctx.meta.setdefault(_META_KEY, []).append(param.name)
    return value


@dataclass(frozen=True)
class RunnerArgs:
    """The backends chosen, in command-line order."""

    names: tuple[str, ...] = ()
    """Runner flags by parameter name: "onnxrt", "onnx_ref", "pluginref", "trt", or an installed
    extension's runner flag (``extensions``)."""
    extensions: Any = None
    """The installed `poly run` extensions (``poly.cli.args.run_extensions.RunExtensions``), parsed."""

    @classmethod
    def options(cls, onnxrt_help: str = ONNXRT_HELP, onnx_ref_help: str = ONNX_REF_HELP,
                pluginref: bool = False) -> Any:
        """--onnxrt and --onnx-ref (with the command's own help texts where they differ), and
        --pluginref with ``pluginref`` (Polygraphy has it on `run` only)."""
        options = [
            click.option("--onnxrt", is_flag=True, callback=record_runner, help=onnxrt_help),
            click.option("--onnx-ref", "onnx_ref", is_flag=True, callback=record_runner, help=onnx_ref_help),
        ]
        if pluginref:
            options.append(click.option("--pluginref", is_flag=True, callback=record_runner, help=PLUGINREF_HELP))
        return stack_options(options, section="Runners")

    @classmethod
    def trt_options(cls) -> Any:
        """--trt (a decorator of its own: commands declare it among their TensorRT flags; ``--help``
        lists it in the "Runners" section with the others)."""
        return stack_options([
            click.option("--trt", is_flag=True, callback=record_runner, help="Run inference using TensorRT."),
        ], section="Runners")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping, ctx: click.Context | None = None, extensions: Any = None) -> RunnerArgs:
        """The runner flags of the command being run (their order comes from ``ctx``, the
        current click context by default), with the installed ``extensions`` whose runner flags
        may be among them."""
        ctx = ctx or click.get_current_context()
        names = tuple(ctx.meta.get(_META_KEY, []))
        return cls(names=tuple(name for name in names if kwargs.get(name)), extensions=extensions)

    @property
    def uses_trt(self) -> bool:
        return "trt" in self.names

    def check_engine_model(self, model: ModelArgs, name_other: bool = True) -> None:
        """A usage error when MODEL is a TensorRT engine and a runner other than --trt is chosen
        (``name_other``: the message names the first such runner)."""
        others = [name for name in self.names if name != "trt"]
        if (model.is_engine or model.is_network_script) and others:
            detail = f" (not --{others[0]})" if name_other else ""
            what = "a TensorRT engine" if model.is_engine else "a TensorRT network script"
            raise click.UsageError(f"MODEL {model.path!r} is {what}; only --trt can run it{detail}")

    def runner_statements(self, model: ModelArgs, onnx: OnnxLoadArgs, onnxrt: OnnxrtArgs,
                          trt_network: TrtNetworkArgs, trt_config: TrtConfigArgs | None,
                          trt_runtime: TrtRuntimeArgs | None = None, onnx_save: OnnxSaveArgs | None = None,
                          session_options: Any = None) -> list:
        """
        The statements that set ``runners``, in command-line order: OnnxrtRunner, OnnxRefRunner and
        PluginRefRunner (on an onnx-graphsurgeon graph ``pluginref_graph``) sharing one ONNX loader
        ``onnx_model`` (saved first with --save-onnx), and the TrtRunner of
        ``engine_bytes`` (``TrtConfigArgs.engine_statements``; with --int8 its calibrator reads the
        variable ``data_loader``). ``trt_config`` may be None when --trt is not chosen;
        ``session_options`` go to the ONNX-Runtime session; ``trt_runtime`` (the --load-runtime,
        --optimization-profile... flags) says how the TrtRunner deserializes and runs the engine.
        """
        if model.path is None:
            return [Assign("runners", ListOf([]))]
        self.check_engine_model(model)
        statements: list = []
        runners: list = []  # poly's runners since the last extension's list
        parts: list = []  # the lists `runners` is the sum of, in command-line order
        onnx_save = onnx_save or OnnxSaveArgs()
        if model.is_onnx and (any(name in ("onnxrt", "onnx_ref", "pluginref") for name in self.names)
                              or onnx_save.path):
            loader = onnx.loader_expr(model.path)
            statements.append(Assign("onnx_model", loader))
            statements += onnx_save.save_if_asked_statements(model.path, loader)
        for name in self.names:
            if name == "onnxrt":
                statements.append(Assign("session", onnxrt.session_expr(Var("onnx_model"), session_options)))
                runners.append(Ref("poly.onnx", "OnnxrtRunner")(Var("session")))
            elif name == "onnx_ref":
                runners.append(Ref("poly.onnx", "OnnxRefRunner")(Var("onnx_model")))
            elif name == "pluginref":
                # onnx_model is MODEL's path when nothing changes the model: GsFromOnnx needs a model
                source = Var("onnx_model") if onnx.changes_model else Ref("poly.onnx", "OnnxFromPath")(Var("onnx_model"))
                statements.append(Assign("pluginref_graph", Ref("poly.onnx", "GsFromOnnx")(source)))
                runners.append(Ref("poly.onnx", "PluginRefRunner")(Var("pluginref_graph")))
            elif name == "trt":
                parser_path = None
                if model.is_onnx:  # --external-data-dir, --fp-to-fp16 reach TensorRT's parser too
                    parser, parser_path = onnx.parser_model_statements(model.path)
                    statements += parser
                statements += trt_config.engine_statements(model, trt_network, parser_path)  # type: ignore[union-attr]
                runners.append((trt_runtime or TrtRuntimeArgs()).runner_expr(Var("engine_bytes")))
            elif self.extensions is not None and name in self.extensions.runner_groups():
                code, variable = self.extensions.runner_statements(name)
                statements += code
                parts += [ListOf(runners)] if runners else []
                parts.append(Var(variable))
                runners = []
        if runners or not parts:
            parts.append(ListOf(runners))
        return [*statements, Assign("runners", functools.reduce(lambda a, b: BinOp(a, "+", b), parts))]

    def create_runners(self, model: ModelArgs, onnx: OnnxLoadArgs, onnxrt: OnnxrtArgs, trt_network: TrtNetworkArgs,
                       trt_config: TrtConfigArgs | None, data: DataLoaderArgs | None = None,
                       session_options: Any = None, trt_runtime: TrtRuntimeArgs | None = None,
                       onnx_save: OnnxSaveArgs | None = None) -> list:
        """
        The runners of ``runner_statements``, evaluated. With --int8, the TensorRT calibrator is
        fed by ``data``'s data loader (nothing when None).
        """
        calibration = None
        if data is not None and trt_config is not None and "trt" in self.names:
            calibration = data.calibration_data(trt_config.int8)
        env = {"data_loader": calibration if calibration is not None else []}
        statements = self.runner_statements(model, onnx, onnxrt, trt_network, trt_config, trt_runtime=trt_runtime,
                                            onnx_save=onnx_save, session_options=session_options)
        return run_statements(statements, env)["runners"]
