"""The runners group: --onnxrt, --onnx-ref and --trt, the backends a command runs the model with
(in the order they are given), and the construction of those runners from the other groups."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from poly.cli.multi_option import stack_options

if TYPE_CHECKING:
    from poly.cli.args.data_loader import DataLoaderArgs
    from poly.cli.args.model import ModelArgs
    from poly.cli.args.onnx_load import OnnxLoadArgs
    from poly.cli.args.onnx_save import OnnxSaveArgs
    from poly.cli.args.onnxrt import OnnxrtArgs
    from poly.cli.args.trt_config import TrtConfigArgs
    from poly.cli.args.trt_network import TrtNetworkArgs
    from poly.cli.args.trt_runtime import TrtRuntimeArgs

_META_KEY = "poly.runners"
ONNXRT_HELP = "Run inference using ONNX-Runtime."
ONNX_REF_HELP = "Run inference using the ONNX reference evaluator (onnx.reference)."


def _record_runner(ctx, param, value):
    """Callback of the runner flags: remembers their command-line order."""
    if value:
        ctx.meta.setdefault(_META_KEY, []).append(param.name)
    return value


@dataclass(frozen=True)
class RunnerArgs:
    """The backends chosen, in command-line order."""

    names: tuple[str, ...] = ()
    """Runner flags by parameter name: "onnxrt", "onnx_ref", "trt"."""

    @classmethod
    def options(cls, onnxrt_help: str = ONNXRT_HELP, onnx_ref_help: str = ONNX_REF_HELP):
        """--onnxrt and --onnx-ref (with the command's own help texts where they differ)."""
        return stack_options([
            click.option("--onnxrt", is_flag=True, callback=_record_runner, help=onnxrt_help),
            click.option("--onnx-ref", "onnx_ref", is_flag=True, callback=_record_runner, help=onnx_ref_help),
        ])

    @classmethod
    def trt_options(cls):
        """--trt, which ``--help`` lists with the TensorRT flags (after the builder flags, before
        --trt-outputs): a command puts it there."""
        return stack_options([
            click.option("--trt", is_flag=True, callback=_record_runner, help="Run inference using TensorRT."),
        ])

    @classmethod
    def from_kwargs(cls, kwargs: Mapping, ctx: click.Context | None = None) -> RunnerArgs:
        """The runner flags of the command being run (their order comes from ``ctx``, the
        current click context by default)."""
        ctx = ctx or click.get_current_context()
        names = tuple(ctx.meta.get(_META_KEY, []))
        return cls(names=tuple(name for name in names if kwargs.get(name)))

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

    def create_runners(self, model: ModelArgs, onnx: OnnxLoadArgs, onnxrt: OnnxrtArgs, trt_network: TrtNetworkArgs,
                       trt_config: TrtConfigArgs | None, data: DataLoaderArgs | None = None,
                       session_options=None, trt_runtime: TrtRuntimeArgs | None = None,
                       onnx_save: OnnxSaveArgs | None = None) -> list:
        """
        The runners, in command-line order: OnnxrtRunner, OnnxRefRunner (sharing one ONNX
        loader) and TrtRunner. With --int8, the TensorRT calibrator is fed by ``data``'s data
        loader (nothing when None). ``trt_config`` may be None when --trt is not chosen;
        ``session_options`` go to the ONNX-Runtime session; ``trt_runtime`` (the --load-runtime,
        --optimization-profile... flags) says how the TrtRunner deserializes and runs the engine;
        ``onnx_save`` saves the ONNX model (--save-onnx) before it is run.
        """
        onnx_model = onnx.load_onnx(model.path) if model.is_onnx else None
        if onnx_save is not None and onnx_model is not None:
            onnx_model = onnx_save.save_if_asked(onnx_model)
        runners = []
        for name in self.names:
            if name == "trt":
                from poly.cli.args.trt_runtime import TrtRuntimeArgs

                calibration_data = data.calibration_data(trt_config.int8) if data is not None else None
                trt_model = model
                if model.is_onnx:  # --external-data-dir, --fp-to-fp16 reach TensorRT's parser too
                    trt_model = dataclasses.replace(model, path=onnx.parser_model_path(model.path))
                engine = trt_config.load_engine_bytes(trt_model, trt_network, data_loader=calibration_data)
                runners.append((trt_runtime or TrtRuntimeArgs()).create_runner(engine))
            elif name == "onnxrt":
                from poly.onnx import OnnxrtRunner

                runners.append(OnnxrtRunner(onnxrt.create_session(onnx_model, session_options=session_options)))
            elif name == "onnx_ref":
                from poly.onnx import OnnxRefRunner

                runners.append(OnnxRefRunner(onnx_model))
        return runners
