"""`poly run`: run a model with one or more backends, compare their outputs (to each other
and to saved results), and report PASSED or FAILED."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from poly.cli.args.comparison import ComparisonArgs
from poly.cli.args.data.data_loader import DataLoaderArgs
from poly.cli.args.data.inference_runs import InferenceRunArgs
from poly.cli.args.logging import LoggingArgs
from poly.cli.args.model import ModelArgs
from poly.cli.args.onnx.load import OnnxLoadArgs
from poly.cli.args.onnx.onnxrt import OnnxrtArgs
from poly.cli.args.onnx.save import OnnxSaveArgs
from poly.cli.args.onnx.shape_inference import OnnxInferShapesArgs
from poly.cli.args.output.postprocess import PostprocessArgs
from poly.cli.args.runners import RunnerArgs
from poly.cli.args.trt.config import TrtConfigArgs
from poly.cli.args.trt.network import TrtNetworkArgs
from poly.cli.args.trt.runtime import TrtRuntimeArgs
from poly.cli.errors import EXIT_FAIL, EXIT_PASS, handle_errors
from poly.cli.gen_script.run_script import RunScript, gen_script_option, write_run_script
from poly.cli.help_sections import SectionedCommand


class _RunCommand(SectionedCommand):
    """`poly run` with the options of the installed extensions (``poly.cli.args.run_extensions``)."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        from poly.cli.args.run_extensions import RunExtensions

        params = super().get_params(ctx)
        help_option = self.get_help_option(ctx)
        # one set of option objects per command line: click matches them by identity when it
        # processes them in command-line order (which orders the runners)
        if _EXTENSIONS_KEY not in ctx.meta:
            ctx.meta[_EXTENSIONS_KEY] = RunExtensions()
        extensions = ctx.meta[_EXTENSIONS_KEY]
        own = [param for param in params if param is not help_option]
        return [*own, *extensions.click_params(), *([help_option] if help_option is not None else [])]


_EXTENSIONS_KEY = "poly.run.extensions"


@click.command(cls=_RunCommand, context_settings={"help_option_names": ["-h", "--help"]})
@ModelArgs.options(required=False, example=True, model_type=True)
@RunnerArgs.options(pluginref=True)
@TrtConfigArgs.options()
@RunnerArgs.trt_options()
@TrtNetworkArgs.options()
@TrtRuntimeArgs.options()
@OnnxLoadArgs.options(run_flags=True)
@OnnxInferShapesArgs.options(default=False, force_fallback=False)
@OnnxSaveArgs.options(save_onnx=True)
@OnnxrtArgs.options()
@DataLoaderArgs.options()
@InferenceRunArgs.options()
@PostprocessArgs.options()
@ComparisonArgs.options()
@gen_script_option()
@LoggingArgs.options()
@handle_errors
def run(**kwargs: Any) -> Any:
    """Run inference and compare results across backends.

    Backends run in the order given; every one is compared to the first, and to --load-outputs.
    With no backend, `poly run --load-outputs a.json b.json` compares saved results (the first
    against the others) and needs no MODEL.
    """
    start = time.time()
    from poly.core import G_LOGGER

    model_file = kwargs["model_file"]
    command = " ".join(sys.argv) if sys.argv and sys.argv[0].endswith("poly") else f"poly run {model_file or ''}".strip()

    # Parsed in this order, so that of several bad flags the first reported stays the same.
    extensions = click.get_current_context().meta.get(_EXTENSIONS_KEY)
    runners = RunnerArgs.from_kwargs(kwargs, extensions=extensions)
    model = ModelArgs.from_kwargs(kwargs, required=bool(runners.names) or (
        ComparisonArgs.reads_results(kwargs) and not kwargs.get("load_outputs")))
    data = DataLoaderArgs.from_kwargs(kwargs)
    inference = InferenceRunArgs.from_kwargs(kwargs)
    postprocess = PostprocessArgs.from_kwargs(kwargs)
    comparison = ComparisonArgs.from_kwargs(kwargs)
    trt_config = TrtConfigArgs.from_kwargs(kwargs)
    trt_network = TrtNetworkArgs.from_kwargs(kwargs)
    trt_runtime = TrtRuntimeArgs.from_kwargs(kwargs)
    OnnxInferShapesArgs.from_kwargs(kwargs, default=False)  # read by OnnxLoadArgs; parsed for its errors
    onnx = OnnxLoadArgs.from_kwargs(kwargs)
    onnxrt = OnnxrtArgs.from_kwargs(kwargs)
    onnx_save = OnnxSaveArgs.from_kwargs(kwargs)
    if extensions is not None and extensions.groups:
        extensions.parse(kwargs)
    program = RunScript(command, model=model, runners=runners, onnx=onnx, onnxrt=onnxrt, trt_network=trt_network,
                        trt_config=trt_config, trt_runtime=trt_runtime, onnx_save=onnx_save, data=data,
                        inference=inference, postprocess=postprocess, comparison=comparison)
    if kwargs["gen_script"]:
        return write_run_script(kwargs["gen_script"], program)
    G_LOGGER.start(f"RUNNING | Command: {command}")

    # The same statements the script holds, evaluated: loaders, runners, Comparator.run, then the
    # --load-outputs extend, the post-processing, --validate and the comparison, which set `success`.
    passed = program.check(program.run())
    status = "PASSED" if passed else "FAILED"
    message = f"{status} | Runtime: {time.time() - start:.3f}s | Command: {command}"
    (G_LOGGER.finish if passed else G_LOGGER.error)(message)
    return EXIT_PASS if passed else EXIT_FAIL
