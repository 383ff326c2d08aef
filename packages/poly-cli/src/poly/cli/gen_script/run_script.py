"""
`poly run --gen-script FILE`: a Python script, written with poly's public API (loaders, runners,
``DataLoader``, ``Comparator``, ``CompareFunc``), that does what the `poly run` command line does:
running it gives the same results and the same verdict (exit status 0 when PASSED, 1 when FAILED).

Only the flags in ``TRANSLATED_FLAGS`` are translated; any other flag given on the command line
ends the command with one line naming it (``untranslated_flag``), so that a flag added to
`poly run` later never goes silently missing from the script.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from poly.cli.gen_script.script_source import Code, ScriptSource, call, literal

if TYPE_CHECKING:
    from poly.cli.args.comparison import ComparisonArgs
    from poly.cli.args.data_loader import DataLoaderArgs
    from poly.cli.args.logging import LoggingArgs
    from poly.cli.args.model import ModelArgs
    from poly.cli.args.onnx_load import OnnxLoadArgs
    from poly.cli.args.onnxrt import OnnxrtArgs
    from poly.cli.args.runners import RunnerArgs
    from poly.cli.args.trt_config import TrtConfigArgs
    from poly.cli.args.trt_network import TrtNetworkArgs

TRANSLATED_FLAGS = frozenset({
    # the command itself, the model and the logging options
    "gen_script", "help", "model_file", "example", "model_type",
    "verbose", "quiet", "verbosity", "silent", "log_format", "log_file",
    # runners
    "onnxrt", "onnx_ref", "trt",
    # ONNX loading and ONNX-Runtime
    "onnx_outputs", "onnx_exclude_outputs", "shape_inference", "providers",
    # TensorRT network and builder
    "trt_outputs", "trt_exclude_outputs", "strongly_typed", "trt_min_shapes", "trt_opt_shapes", "trt_max_shapes",
    "tf32", "fp16", "bf16", "fp8", "int8", "precision_constraints", "calibration_cache", "calibration_base_class",
    "load_timing_cache", "save_timing_cache", "pool_limit", "builder_optimization_level", "profiling_verbosity",
    "save_engine", "save_tactics", "load_tactics",
    # data loader
    "input_shapes", "seed", "val_range", "iterations", "data_loader_script", "data_loader_func_name",
    "load_inputs", "save_inputs",
    # comparison
    "save_outputs", "load_outputs", "atol", "rtol", "check_error_stat", "error_quantile", "infinities_compare_equal",
    "no_shape_check", "compare_func", "index_tolerance", "l2_threshold", "cosine_similarity_threshold",
    "psnr_threshold", "snr_threshold", "lpips_threshold", "fail_fast", "check_average", "save_heatmaps",
    "save_error_metrics_plot", "validate",
})
"""The click parameter names of the `poly run` flags the generated script reproduces."""

_GIVEN = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT,
          click.core.ParameterSource.PROMPT)


def gen_script_option():
    """--gen-script / --gen."""
    return click.option(
        "--gen-script", "--gen", "gen_script", type=click.Path(dir_okay=False, allow_dash=True), metavar="FILE",
        help="Write a Python script (poly's API) that does what this command would, and exit without running "
        "anything; `-` prints it to standard output.")


def untranslated_flag(ctx: click.Context) -> str | None:
    """The first flag given in ``ctx``'s command line that the script cannot reproduce, or None."""
    for param in ctx.command.params:
        if param.name in TRANSLATED_FLAGS or ctx.get_parameter_source(param.name) not in _GIVEN:
            continue
        return max(param.opts, key=len) if param.opts else param.name
    return None


def write_script(dest: str, text: str) -> None:
    """Writes the script to ``dest`` (made executable), or prints it for `-`."""
    from poly.core import G_LOGGER
    from poly.core.fileio import atomic_write_text

    if dest == "-":
        click.echo(text, nl=False)
        return
    atomic_write_text(dest, text)
    os.chmod(dest, os.stat(dest).st_mode | 0o111)
    G_LOGGER.info(f"Writing script to: {dest}")


class RunScript:
    """Builds the script of one `poly run` command line from its parsed option groups."""

    def __init__(self, command: str, model: ModelArgs, runners: RunnerArgs, onnx: OnnxLoadArgs, onnxrt: OnnxrtArgs,
                 trt_network: TrtNetworkArgs, trt_config: TrtConfigArgs, data: DataLoaderArgs,
                 comparison: ComparisonArgs, logging: LoggingArgs):
        self.model, self.runners, self.onnx, self.onnxrt = model, runners, onnx, onnxrt
        self.trt_network, self.trt_config, self.data, self.comparison = trt_network, trt_config, data, comparison
        self.logging = logging
        program, _, rest = command.partition(" ")
        command = f"poly {rest}" if os.path.basename(program) == "poly" else command
        names = {"onnxrt": "ONNX-Runtime", "onnx_ref": "the ONNX reference evaluator", "trt": "TensorRT"}
        what = " and ".join(names[name] for name in runners.names) or "no backend"
        self.source = ScriptSource([
            "#!/usr/bin/env python3",
            f"# Generated by `poly run --gen-script` from: {command}",
            f"# It runs {model.path or 'no model'} with {what}"
            + (", compares the outputs" if len(runners.names) + len(comparison.load_outputs) > 1 else "")
            + " and reports PASSED or FAILED (exit status 0 or 1), as that command does.",
        ])

    def text(self) -> str:
        src = self.source
        src.use("sys")
        src.use("time")
        src.use("poly.core", "G_LOGGER")
        src.section("Start", ["start = time.time()"] + self._logging_lines())
        src.section("Data loader", self._data_loader_lines())
        src.section("Runners", self._runner_lines())
        src.use("poly.compare", "Comparator")
        src.section("Runner execution", [
            "results = " + call("Comparator.run", "runners", data_loader=Code("data_loader"),
                                save_inputs_path=self.data.save_inputs, save_outputs_path=self.comparison.save_outputs),
        ])
        src.section("Checks and comparisons", ["success = True"] + self._check_lines())
        src.section("Report results", [
            "status = 'PASSED' if success else 'FAILED'",
            "message = f\"{status} | Runtime: {time.time() - start:.3f}s | Command: {' '.join(sys.argv)}\"",
            "(G_LOGGER.finish if success else G_LOGGER.error)(message)",
            "sys.exit(0 if success else 1)",
        ])
        return src.text()

    # ---- sections ---------------------------------------------------------------------------

    def _logging_lines(self) -> list:
        lines = []
        if self.logging.severity is not None:
            lines.append(f"G_LOGGER.module_severity = {literal(self.logging.severity)}")
        if self.logging.log_format is not None:
            lines.append(f"G_LOGGER.log_format = {literal(list(self.logging.log_format))}")
        if self.logging.log_file is not None:
            lines.append(f"G_LOGGER.log_file = {literal(self.logging.log_file)}")
        return lines

    def _data_loader_lines(self) -> list:
        data, src = self.data, self.source
        if data.load_inputs:
            src.use("poly.compare", "load_inputs")
            return [f"data_loader = load_inputs({literal(list(data.load_inputs))})"]
        if data.script:
            src.use("poly.compare", "DataLoaderFromScript")
            return [f"data_loader = DataLoaderFromScript({literal(data.script)})"]
        src.use("poly.compare", "DataLoader")
        lines, metadata = [], None
        if data.input_shapes:
            src.use("poly.core", "TensorMetadata")
            lines.append("input_metadata = TensorMetadata()")
            for name, shape in data.input_shapes.items():
                lines.append(f"input_metadata.add({literal(name)}, dtype=None, shape={literal(list(shape))})")
            metadata = Code("input_metadata")
        lines.append("data_loader = " + call("DataLoader", seed=data.seed, iterations=data.iterations,
                                             input_metadata=metadata, val_range=data.val_range))
        return lines

    def _runner_lines(self) -> list:
        src, lines, runners = self.source, [], []
        onnx_model = None
        if any(name != "trt" for name in self.runners.names) and not self.model.is_engine:
            onnx_model = self._onnx_model_lines(lines)
        for name in self.runners.names:
            if name == "onnxrt":
                src.use("poly.onnx", "OnnxrtRunner", "SessionFromOnnx")
                providers = list(self.onnxrt.providers) or None
                lines.append("session = " + call("SessionFromOnnx", onnx_model, providers=providers))
                runners.append("OnnxrtRunner(session)")
            elif name == "onnx_ref":
                src.use("poly.onnx", "OnnxRefRunner")
                runners.append(f"OnnxRefRunner({onnx_model})")
            elif name == "trt":
                src.use("poly.trt", "EngineFromBytes", "TrtRunner")
                self._engine_lines(lines)
                runners.append("TrtRunner(EngineFromBytes(engine_bytes))")
        return lines + ["runners = [" + "".join(f"\n    {runner}," for runner in runners) + ("\n" if runners else "") + "]"]

    def _onnx_model_lines(self, lines: list) -> str:
        """Mirrors OnnxLoadArgs.load_onnx: the path itself when nothing changes the model."""
        onnx, src = self.onnx, self.source
        if onnx.outputs is None and onnx.exclude_outputs is None and not onnx.shape_inference:
            lines.append(f"onnx_model = {literal(self.model.path)}")
            return "onnx_model"
        src.use("poly.onnx", "OnnxFromPath")
        expr = f"OnnxFromPath({literal(self.model.path)})"
        if onnx.shape_inference:
            src.use("poly.onnx", "InferShapes")
            expr = f"InferShapes({expr})"
        if onnx.outputs is not None or onnx.exclude_outputs is not None:
            src.use("poly.onnx", "ModifyOutputs")
            expr = call("ModifyOutputs", expr, outputs=self._outputs(onnx.outputs),
                        exclude_outputs=list(onnx.exclude_outputs) if onnx.exclude_outputs is not None else None)
        lines.append(f"onnx_model = {expr}")
        return "onnx_model"

    def _outputs(self, outputs):
        """--onnx-outputs / --trt-outputs as an argument: a list of names, or MARK_ALL."""
        from poly.core import MARK_ALL

        if outputs is None:
            return None
        if outputs == MARK_ALL:
            self.source.use("poly.core", "MARK_ALL")
            return Code("MARK_ALL")
        return list(outputs)

    def _engine_lines(self, lines: list) -> None:
        """Mirrors TrtConfigArgs.load_engine_bytes: ``engine_bytes``, read or built (and saved)."""
        src, config, network = self.source, self.trt_config, self.trt_network
        if self.model.is_engine:
            src.use("poly.trt", "BytesFromPath")
            lines.append(f"engine_bytes = BytesFromPath({literal(self.model.path)}, what='engine')")
            return
        src.use("poly.trt", "NetworkFromOnnxPath")
        expr = call("NetworkFromOnnxPath", literal(self.model.path), strongly_typed=network.strongly_typed or None)
        if network.outputs is not None or network.exclude_outputs is not None:
            src.use("poly.trt", "ModifyNetworkOutputs")
            expr = call("ModifyNetworkOutputs", expr, outputs=self._outputs(network.outputs),
                        exclude_outputs=list(network.exclude_outputs) if network.exclude_outputs is not None else None)
        lines.append(f"network = {expr}")
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
            profiling_verbosity=config.profiling_verbosity, algorithm_selector=self._algorithm_selector()))
        src.use("poly.trt", "EngineBytesFromNetwork")
        expr = call("EngineBytesFromNetwork", "network", config=Code("config"),
                    save_timing_cache=config.save_timing_cache)
        if config.save_engine:
            src.use("poly.trt", "SaveEngine")
            expr = f"SaveEngine({expr}, {literal(config.save_engine)})"
        lines.append(f"engine_bytes = {expr}")

    def _algorithm_selector(self):
        config = self.trt_config
        if config.save_tactics and config.load_tactics:
            raise click.UsageError("--save-tactics and --load-tactics cannot be used together")
        if config.save_tactics:
            self.source.use("poly.trt", "TacticRecorder")
            return Code(f"TacticRecorder({literal(config.save_tactics)})")
        if config.load_tactics:
            self.source.use("poly.trt", "TacticReplayer")
            return Code(f"TacticReplayer({literal(config.load_tactics)})")
        return None

    def _check_lines(self) -> list:
        """Mirrors ComparisonArgs.add_loaded_outputs and check_results."""
        comparison, src, lines = self.comparison, self.source, []
        if comparison.load_outputs:
            src.use("poly.compare", "RunResults")
            lines += [f"for path in {literal(list(comparison.load_outputs))}:",
                      "    G_LOGGER.info(f'Loading inference results from {path}')",
                      "    results.extend(RunResults.load(path))"]
        if comparison.validate:
            lines.append("success = bool(Comparator.validate(results, check_inf=True, check_nan=True)) and success")
        src.use("poly.compare", "CompareFunc")
        funcs = self._compare_funcs()
        lines += ["if len(results) > 1:",
                  "    compare_func = " + (funcs[0] if len(funcs) == 1 else "[" + ", ".join(funcs) + "]"),
                  "    accuracy = " + call("Comparator.compare_accuracy", "results", fail_fast=comparison.fail_fast,
                                           compare_func=Code("compare_func"), check_average=comparison.check_average),
                  "    success = bool(accuracy) and success"]
        return lines

    def _compare_funcs(self) -> list:
        """Mirrors ComparisonArgs.create_compare_func: source of each comparison function."""
        c = self.comparison
        shapes = None if c.check_shapes else False
        fail_fast = c.fail_fast or None
        funcs = []
        for name in c.compare_funcs or ("simple",):
            if name == "simple":
                funcs.append(call("CompareFunc.simple", check_shapes=shapes, rtol=c.rtol, atol=c.atol,
                                  fail_fast=fail_fast, check_error_stat=c.check_error_stat,
                                  error_quantile=c.error_quantile,
                                  infinities_compare_equal=c.infinities_compare_equal or None,
                                  save_heatmaps=c.save_heatmaps, save_error_metrics_plot=c.save_error_metrics_plot))
            elif name == "indices":
                funcs.append(call("CompareFunc.indices", index_tolerance=c.index_tolerance, fail_fast=fail_fast))
            elif name == "distance_metrics":
                funcs.append(call("CompareFunc.distance_metrics", l2_tolerance=c.l2_threshold,
                                  cosine_similarity_threshold=c.cosine_similarity_threshold, check_shapes=shapes,
                                  fail_fast=fail_fast))
            elif name == "quality_metrics":
                funcs.append(call("CompareFunc.quality_metrics", psnr_tolerance=c.psnr_threshold,
                                  snr_tolerance=c.snr_threshold, check_shapes=shapes, fail_fast=fail_fast))
            else:  # l2, cosine_similarity, psnr, snr, perceptual_metrics: one threshold each
                threshold = {"l2": c.l2_threshold, "cosine_similarity": c.cosine_similarity_threshold,
                             "psnr": c.psnr_threshold, "snr": c.snr_threshold,
                             "perceptual_metrics": c.lpips_threshold}[name]
                keyword = "lpips_threshold" if name == "perceptual_metrics" else f"{name}_threshold"
                funcs.append(call(f"CompareFunc.{name}", check_shapes=shapes, fail_fast=fail_fast,
                                  **{keyword: threshold}))
        return funcs


def write_run_script(dest: str, command: str, *groups) -> int:
    """
    `poly run --gen-script DEST`: writes the script of the current command line (``groups``:
    its parsed ModelArgs, RunnerArgs, OnnxLoadArgs, OnnxrtArgs, TrtNetworkArgs, TrtConfigArgs,
    DataLoaderArgs and ComparisonArgs, in that order) and returns the exit status 0. A flag the
    script cannot reproduce is a PolyException naming it.
    """
    from poly.cli.args.logging import LoggingArgs
    from poly.core import PolyException

    flag = untranslated_flag(click.get_current_context())
    if flag is not None:
        raise PolyException(f"--gen-script cannot translate {flag} into a script; run the command without "
                            "--gen-script, or leave that flag out")
    write_script(dest, RunScript(command, *groups, logging=LoggingArgs.current()).text())
    return 0
