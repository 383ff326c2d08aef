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

from poly.cli.gen_script.compare_script import compare_func_lines
from poly.cli.gen_script.onnx_script import onnx_model_lines
from poly.cli.gen_script.script_source import Code, ScriptSource, call, literal
from poly.cli.gen_script.trt_script import TrtScript

if TYPE_CHECKING:
    from poly.cli.args.comparison import ComparisonArgs
    from poly.cli.args.data_loader import DataLoaderArgs
    from poly.cli.args.inference_runs import InferenceRunArgs
    from poly.cli.args.logging import LoggingArgs
    from poly.cli.args.model import ModelArgs
    from poly.cli.args.onnx_load import OnnxLoadArgs
    from poly.cli.args.onnx_save import OnnxSaveArgs
    from poly.cli.args.onnxrt import OnnxrtArgs
    from poly.cli.args.postprocess import PostprocessArgs
    from poly.cli.args.runners import RunnerArgs
    from poly.cli.args.trt_config import TrtConfigArgs
    from poly.cli.args.trt_network import TrtNetworkArgs
    from poly.cli.args.trt_runtime import TrtRuntimeArgs

TRANSLATED_FLAGS = frozenset({
    # the command itself, the model and the logging options
    "gen_script", "help", "model_file", "example", "model_type",
    "verbose", "quiet", "verbosity", "silent", "log_format", "log_file",
    # runners
    "onnxrt", "onnx_ref", "trt",
    # ONNX loading and saving, shape inference, ONNX-Runtime
    "onnx_outputs", "onnx_exclude_outputs", "shape_inference", "allow_onnxruntime", "providers",
    "external_data_dir", "ignore_external_data", "fp_to_fp16",
    "save_onnx", "external_data_path", "external_data_size_threshold", "all_tensors_to_one_file",
    # TensorRT network: parser, plugins, outputs, layer and tensor settings, network scripts
    "plugins", "onnx_flags", "plugin_instancenorm", "trt_outputs", "trt_exclude_outputs", "strongly_typed",
    "layer_precisions", "tensor_dtypes", "mark_debug", "mark_unfused_tensors_as_debug_tensors",
    "trt_network_func_name", "trt_network_postprocess_script",
    # TensorRT builder configuration and engine
    "trt_min_shapes", "trt_opt_shapes", "trt_max_shapes",
    "tf32", "fp16", "bf16", "fp8", "int8", "precision_constraints", "calibration_cache", "calibration_base_class",
    "load_timing_cache", "save_timing_cache", "pool_limit", "builder_optimization_level", "profiling_verbosity",
    "save_engine", "save_tactics", "load_tactics",
    "sparse_weights", "version_compatible", "exclude_lean_runtime", "error_on_timing_cache_miss",
    "disable_compilation_cache", "tactic_sources", "refittable", "strip_plan", "use_dla", "allow_gpu_fallback",
    "preview_features", "hardware_compatibility_level", "max_aux_streams", "quantization_flags",
    "weight_streaming", "runtime_platform", "tiling_optimization_level",
    "trt_config_script", "trt_config_func_name", "trt_config_postprocess_script",
    # TensorRT runtime
    "load_runtime", "optimization_profile", "allocation_strategy", "weight_streaming_budget",
    # data loader and inference runs
    "input_shapes", "seed", "val_range", "iterations", "data_loader_script", "data_loader_func_name",
    "load_inputs", "save_inputs", "warm_up", "use_subprocess",
    # post-processing and comparison
    "postprocess",
    "save_outputs", "load_outputs", "atol", "rtol", "check_error_stat", "error_quantile", "infinities_compare_equal",
    "no_shape_check", "compare_func", "index_tolerance", "l2_threshold", "cosine_similarity_threshold",
    "psnr_threshold", "snr_threshold", "lpips_threshold", "fail_fast", "check_average", "save_heatmaps",
    "save_error_metrics_plot", "show_heatmaps", "show_error_metrics_plot", "compare_func_script", "validate",
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

    def __init__(self, command: str, *, model: ModelArgs, runners: RunnerArgs, onnx: OnnxLoadArgs,
                 onnxrt: OnnxrtArgs, trt_network: TrtNetworkArgs, trt_config: TrtConfigArgs,
                 trt_runtime: TrtRuntimeArgs, onnx_save: OnnxSaveArgs, data: DataLoaderArgs,
                 inference: InferenceRunArgs, postprocess: PostprocessArgs, comparison: ComparisonArgs,
                 logging: LoggingArgs):
        self.model, self.runners, self.onnx, self.onnxrt = model, runners, onnx, onnxrt
        self.trt_network, self.trt_config, self.trt_runtime = trt_network, trt_config, trt_runtime
        self.onnx_save, self.data, self.inference = onnx_save, data, inference
        self.postprocess, self.comparison, self.logging = postprocess, comparison, logging
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
        if self.runners.names or not self.comparison.load_outputs:
            run = ["results = " + call("Comparator.run", "runners", data_loader=Code("data_loader"),
                                       save_inputs_path=self.data.save_inputs,
                                       save_outputs_path=self.comparison.save_outputs, **self.inference.run_kwargs())]
        else:  # only saved results to compare: no inference
            src.use("poly.compare", "RunResults")
            run = ["results = RunResults()"]
        src.section("Runner execution", run)
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
        """Mirrors RunnerArgs.create_runners: one ONNX loader shared by the ONNX runners (saved
        first with --save-onnx), the TensorRT runner built by ``TrtScript``."""
        src, model, lines, runners = self.source, self.model, [], []
        if model.path is None:
            return ["runners = []"]
        self.runners.check_engine_model(model)
        if model.is_onnx and (any(name != "trt" for name in self.runners.names) or self.onnx_save.path):
            lines += onnx_model_lines(src, model.path, self.onnx, self.onnx_save)
        for name in self.runners.names:
            if name == "onnxrt":
                src.use("poly.onnx", "OnnxrtRunner", "SessionFromOnnx")
                providers = list(self.onnxrt.providers) or None
                lines.append("session = " + call("SessionFromOnnx", "onnx_model", providers=providers))
                runners.append("OnnxrtRunner(session)")
            elif name == "onnx_ref":
                src.use("poly.onnx", "OnnxRefRunner")
                runners.append("OnnxRefRunner(onnx_model)")
            elif name == "trt":
                runners.append(TrtScript(src, model, self.onnx, self.trt_network, self.trt_config,
                                         self.trt_runtime).runner_lines(lines))
        return lines + ["runners = [" + "".join(f"\n    {runner}," for runner in runners) + ("\n" if runners else "") + "]"]

    def _check_lines(self) -> list:
        """Mirrors ComparisonArgs.add_loaded_outputs, PostprocessArgs.apply and check_results."""
        comparison, src, lines = self.comparison, self.source, []
        if comparison.load_outputs:
            src.use("poly.compare", "RunResults")
            lines += [f"for path in {literal(list(comparison.load_outputs))}:",
                      "    results.extend(RunResults.load(path))"]
        if self.postprocess.top_k is not None:
            src.use("poly.compare", "PostprocessFunc")
            lines.append(f"Comparator.postprocess(results, PostprocessFunc.top_k({literal(self.postprocess.top_k)}))")
        if comparison.validate:
            lines.append("success = bool(Comparator.validate(results, check_inf=True, check_nan=True)) and success")
        compare_lines, compare_func = compare_func_lines(src, comparison)
        lines += ["if len(results) > 1:", *("    " + line for line in compare_lines),
                  "    accuracy = " + call("Comparator.compare_accuracy", "results", fail_fast=comparison.fail_fast,
                                           compare_func=Code(compare_func), check_average=comparison.check_average),
                  "    success = bool(accuracy) and success"]
        return lines


def write_run_script(dest: str, command: str, **groups) -> int:
    """
    `poly run --gen-script DEST`: writes the script of the current command line (``groups``:
    its parsed option groups, by ``RunScript``'s argument names) and returns the exit status 0.
    A flag the script cannot reproduce is a PolyException naming it.
    """
    from poly.cli.args.logging import LoggingArgs
    from poly.core import PolyException

    flag = untranslated_flag(click.get_current_context())
    if flag is not None:
        raise PolyException(f"--gen-script cannot translate {flag} into a script; run the command without "
                            "--gen-script, or leave that flag out")
    write_script(dest, RunScript(command, **groups, logging=LoggingArgs.current()).text())
    return 0
