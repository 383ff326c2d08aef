"""
The TensorRT part of a `poly run --gen-script` script: source that creates the network
(``TrtNetworkArgs.load_network``: a network script or the ONNX parser, plugins, postprocessing
scripts, outputs, layer and tensor settings), the builder configuration
(``TrtConfigArgs.create_config``: ``CreateConfig`` with every builder flag, or the config script,
then the config postprocessing script), the engine (built and saved, or read) and the
``TrtRunner`` (``TrtRuntimeArgs.create_runner``). Each piece calls the loader the command calls,
with the arguments the command's option group passes it (its ``create_config_kwargs``,
``parser_kwargs``... helpers, shared with the command).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from poly.cli.gen_script.onnx_script import outputs_argument, parser_model_lines
from poly.cli.gen_script.script_source import Code, ScriptSource, call, literal

if TYPE_CHECKING:
    from poly.cli.args.model import ModelArgs
    from poly.cli.args.onnx_load import OnnxLoadArgs
    from poly.cli.args.trt_config import TrtConfigArgs
    from poly.cli.args.trt_network import TrtNetworkArgs
    from poly.cli.args.trt_runtime import TrtRuntimeArgs


class TrtScript:
    """Source of the TrtRunner of one `poly run` command line."""

    def __init__(self, src: ScriptSource, model: ModelArgs, onnx: OnnxLoadArgs, network: TrtNetworkArgs,
                 config: TrtConfigArgs, runtime: TrtRuntimeArgs):
        self.src, self.model, self.onnx = src, model, onnx
        self.network, self.config, self.runtime = network, config, runtime

    def runner_lines(self, lines: list) -> str:
        """Appends the lines that set ``engine_bytes`` to ``lines``; returns the runner's source."""
        src, runtime = self.src, self.runtime
        lines += self._engine_lines()
        src.use("poly.trt", "EngineFromBytes", "TrtRunner")
        load_runtime = None
        if runtime.load_runtime:
            src.use("poly.trt", "LoadRuntime")
            load_runtime = Code(f"LoadRuntime({literal(runtime.load_runtime)})")
        engine = call("EngineFromBytes", "engine_bytes", runtime=load_runtime)
        return call("TrtRunner", engine, optimization_profile=runtime.optimization_profile,
                    allocation_strategy=runtime.allocation_strategy,
                    weight_streaming_budget=runtime.weight_streaming_budget,
                    weight_streaming_percent=runtime.weight_streaming_percent)

    def _load_plugins(self, expr: str) -> str:
        plugins = self.network.edits.plugins
        if not plugins:
            return expr
        self.src.use("poly.trt", "LoadPlugins")
        return f"LoadPlugins({literal(list(plugins))}, {expr})"

    def _engine_lines(self) -> list:
        src, config = self.src, self.config
        if self.model.is_engine:
            src.use("poly.trt", "BytesFromPath")
            read = f"BytesFromPath({literal(self.model.path)}, what='engine')"
            return [f"engine_bytes = {self._load_plugins(read)}"]
        lines = self._network_lines()
        lines += self._config_lines()
        src.use("poly.trt", "EngineBytesFromNetwork")
        expr = call("EngineBytesFromNetwork", "network", config=Code("config"),
                    save_timing_cache=config.save_timing_cache)
        if config.save_engine:
            src.use("poly.trt", "SaveEngine")
            expr = f"SaveEngine({expr}, {literal(config.save_engine)})"
        return lines + [f"engine_bytes = {expr}"]

    def _network_lines(self) -> list:
        """Mirrors TrtNetworkArgs.load_network."""
        src, network, edits = self.src, self.network, self.network.edits
        lines = []
        if self.model.is_network_script:
            src.use("poly.core.scripts", "InvokeFromScript")
            expr = f"InvokeFromScript({literal(self.model.path)}, {literal(network.scripts.network_func(self.model))})"
        else:
            parser_lines, path = parser_model_lines(src, self.model.path, self.onnx)
            lines += parser_lines
            src.use("poly.trt", "NetworkFromOnnxPath")
            expr = call("NetworkFromOnnxPath", path, strongly_typed=network.strongly_typed or None,
                        **edits.parser_kwargs())
        expr = self._load_plugins(expr)
        for path, func in network.scripts.postprocess:
            src.use("poly.core.scripts", "InvokeFromScript")
            src.use("poly.trt", "PostprocessNetwork")
            expr = call("PostprocessNetwork", expr, func=Code(f"InvokeFromScript({literal(path)}, {literal(func)})"),
                        name=f"{path}:{func}")
        if network.outputs is not None or network.exclude_outputs is not None:
            src.use("poly.trt", "ModifyNetworkOutputs")
            expr = call("ModifyNetworkOutputs", expr, outputs=outputs_argument(src, network.outputs),
                        exclude_outputs=list(network.exclude_outputs) if network.exclude_outputs is not None else None)
        for loader, dtypes in (("SetLayerPrecisions", edits.layer_precisions),
                               ("SetTensorDatatypes", edits.tensor_datatypes)):
            if dtypes:
                src.use("poly.trt", loader)
                src.use("poly.trt.tensorrt_module", "trt")
                mapping = "{" + ", ".join(f"{literal(name)}: trt.{dtype}" for name, dtype in dtypes.items()) + "}"
                expr = f"{loader}({expr}, {mapping})"
        if edits.tensor_formats:
            src.use("poly.trt", "SetTensorFormats")
            formats = {name: list(values) for name, values in edits.tensor_formats.items()}
            expr = f"SetTensorFormats({expr}, {literal(formats)})"
        if edits.mark_debug:
            src.use("poly.trt", "MarkDebug")
            expr = f"MarkDebug({expr}, {literal(list(edits.mark_debug))})"
        return lines + [f"network = {expr}"]

    def _config_lines(self) -> list:
        """Mirrors TrtConfigArgs.create_config (and TrtConfigScriptArgs.wrap_config)."""
        src, scripts = self.src, self.config.scripts
        lines = []
        if scripts.script:
            src.use("poly.core.scripts", "InvokeFromScript")
            lines.append(f"config = InvokeFromScript({literal(scripts.script[0])}, {literal(scripts.script[1])})")
        else:
            lines += self._create_config_lines()
        if scripts.postprocess:
            src.use("poly.core.scripts", "InvokeFromScript")
            src.use("poly.trt", "PostprocessConfig")
            path, func = scripts.postprocess
            lines.append(f"config = PostprocessConfig(config, func=InvokeFromScript({literal(path)}, {literal(func)}))")
        return lines

    def _create_config_lines(self) -> list:
        src, config, lines = self.src, self.config, []
        if config.profiles:
            src.use("poly.trt", "Profile")
            lines.append("profiles = [")
            for profile in config.profiles:
                adds = "".join(f".add({literal(name)}, min={literal(list(shapes.min))}, opt={literal(list(shapes.opt))}, "
                               f"max={literal(list(shapes.max))})" for name, shapes in profile.items())
                lines.append(f"    Profile(){adds},")
            lines.append("]")
        calibrator = None
        if config.int8:
            src.use("poly.trt", "Calibrator")
            calibrator = Code(call("Calibrator", "data_loader", cache=config.calibration_cache,
                                   algo=config.calibration_algo))
        src.use("poly.trt", "CreateConfig")
        lines.append("config = " + call(
            "CreateConfig", tf32=config.tf32 or None, fp16=config.fp16 or None, bf16=config.bf16 or None,
            fp8=config.fp8 or None, int8=config.int8 or None,
            profiles=Code("profiles") if config.profiles else None, calibrator=calibrator,
            precision_constraints=config.precision_constraints, load_timing_cache=config.load_timing_cache,
            memory_pool_limits=dict(config.pool_limits) or None,
            builder_optimization_level=config.builder_optimization_level,
            profiling_verbosity=config.profiling_verbosity, algorithm_selector=self._algorithm_selector(),
            **config.builder_flags.create_config_kwargs()))
        return lines

    def _algorithm_selector(self):
        config = self.config
        if config.save_tactics and config.load_tactics:
            raise click.UsageError("--save-tactics and --load-tactics cannot be used together")
        if config.save_tactics:
            self.src.use("poly.trt", "TacticRecorder")
            return Code(f"TacticRecorder({literal(config.save_tactics)})")
        if config.load_tactics:
            self.src.use("poly.trt", "TacticReplayer")
            return Code(f"TacticReplayer({literal(config.load_tactics)})")
        return None
