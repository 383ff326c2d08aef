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
from typing import TYPE_CHECKING, Any

import click

from poly.cli.gen_script.call_tree import Assign, Ref, Var, run_statements, statement_lines
from poly.cli.gen_script.script_source import ScriptSource, literal

if TYPE_CHECKING:
    from poly.cli.args.comparison import ComparisonArgs
    from poly.cli.args.data.data_loader import DataLoaderArgs
    from poly.cli.args.data.inference_runs import InferenceRunArgs
    from poly.cli.args.logging import LoggingArgs
    from poly.cli.args.model import ModelArgs
    from poly.cli.args.onnx.load import OnnxLoadArgs
    from poly.cli.args.onnx.onnxrt import OnnxrtArgs
    from poly.cli.args.onnx.save import OnnxSaveArgs
    from poly.cli.args.output.postprocess import PostprocessArgs
    from poly.cli.args.runners import RunnerArgs
    from poly.cli.args.trt.config import TrtConfigArgs
    from poly.cli.args.trt.network import TrtNetworkArgs
    from poly.cli.args.trt.runtime import TrtRuntimeArgs

TRANSLATED_FLAGS = frozenset({
    # the command itself, the model and the logging options
    "gen_script", "help", "model_file", "example", "model_type",
    "verbose", "quiet", "verbosity", "silent", "log_format", "log_file",
    # runners
    "onnxrt", "onnx_ref", "pluginref", "trt",
    # ONNX loading and saving, shape inference, ONNX-Runtime
    "onnx_outputs", "onnx_exclude_outputs", "shape_inference", "allow_onnxruntime", "providers",
    "ort_custom_op_libs",
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


def gen_script_option() -> Any:
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
    from poly.core import G_LOGGER, atomic_write_text

    if dest == "-":
        click.echo(text, nl=False)
        return
    atomic_write_text(dest, text)
    os.chmod(dest, os.stat(dest).st_mode | 0o111)
    G_LOGGER.info(f"Writing script to: {dest}")


class RunScript:
    """The program of one `poly run` command line, from its parsed option groups: the data
    loader, the runners and their run (``run``), then the checks, the comparison and the verdict
    (``check``) are the groups' call trees, which the command evaluates and ``text`` writes as a
    script."""

    def __init__(self, command: str, *, model: ModelArgs, runners: RunnerArgs, onnx: OnnxLoadArgs,
                 onnxrt: OnnxrtArgs, trt_network: TrtNetworkArgs, trt_config: TrtConfigArgs,
                 trt_runtime: TrtRuntimeArgs, onnx_save: OnnxSaveArgs, data: DataLoaderArgs,
                 inference: InferenceRunArgs, postprocess: PostprocessArgs, comparison: ComparisonArgs,
                 logging: LoggingArgs | None = None) -> None:
        self.command, self.model, self.runners, self.onnx, self.onnxrt = command, model, runners, onnx, onnxrt
        self.trt_network, self.trt_config, self.trt_runtime = trt_network, trt_config, trt_runtime
        self.onnx_save, self.data, self.inference = onnx_save, data, inference
        self.postprocess, self.comparison, self.logging = postprocess, comparison, logging

    # ---- the statements `poly run` runs and the script holds ----------------------------------

    def runner_statements(self) -> list:
        """The statements that set ``runners`` (``RunnerArgs.runner_statements``)."""
        return self.runners.runner_statements(self.model, self.onnx, self.onnxrt, self.trt_network, self.trt_config,
                                              trt_runtime=self.trt_runtime, onnx_save=self.onnx_save)

    def execution_statements(self) -> list:
        """The statement that sets ``results``: ``Comparator.run`` over the runners and the data
        loader, or, for --load-outputs without a backend, an empty ``RunResults``."""
        if self.runners.names or not self.comparison.load_outputs:
            return [Assign("results", Ref("poly.compare", "Comparator.run")(
                Var("runners"), data_loader=Var("data_loader"), save_inputs_path=self.data.save_inputs,
                save_outputs_path=self.comparison.save_outputs, **self.inference.run_kwargs()))]
        return [Assign("results", Ref("poly.compare", "RunResults")())]  # only saved results: no inference

    def check_statements(self) -> list:
        """The statements that read ``results`` and set ``success``: the comparison group's
        (``ComparisonArgs.check_statements``), with ``PostprocessArgs``' statements after loading
        the --load-outputs files."""
        return self.comparison.check_statements(self.postprocess.statements())

    def run(self) -> Any:
        """Runs the data loader, runner and execution statements; returns the ``RunResults``."""
        statements = [*self.data.data_loader_statements(), *self.runner_statements(), *self.execution_statements()]
        return run_statements(statements)["results"]

    def check(self, results: Any) -> bool:
        """Runs the check statements on ``results`` (extended with --load-outputs and
        post-processed in place); whether every check passed (``success``)."""
        return bool(run_statements(self.check_statements(), {"results": results})["success"])

    # ---- the script ---------------------------------------------------------------------------

    def text(self) -> str:
        """The script's source."""
        src = self._source()
        src.use("sys")
        src.use("time")
        src.use("poly.core", "G_LOGGER")
        src.section("Start", ["start = time.time()"] + self._logging_lines())
        src.section("Data loader", statement_lines(self.data.data_loader_statements(), src))
        src.section("Runners", statement_lines(self.runner_statements(), src))
        src.use("poly.compare", "Comparator")
        src.section("Runner execution", statement_lines(self.execution_statements(), src))
        src.section("Checks and comparisons", statement_lines(self.check_statements(), src))
        src.section("Report results", [
            "status = 'PASSED' if success else 'FAILED'",
            "message = f\"{status} | Runtime: {time.time() - start:.3f}s | Command: {' '.join(sys.argv)}\"",
            "(G_LOGGER.finish if success else G_LOGGER.error)(message)",
            "sys.exit(0 if success else 1)",
        ])
        return src.text()

    def _source(self) -> ScriptSource:
        program, _, rest = self.command.partition(" ")
        command = f"poly {rest}" if os.path.basename(program) == "poly" else self.command
        names = {"onnxrt": "ONNX-Runtime", "onnx_ref": "the ONNX reference evaluator",
                 "pluginref": "the plugin CPU reference", "trt": "TensorRT"}
        extensions = self.runners.extensions.runner_groups() if self.runners.extensions is not None else {}
        for name, group in extensions.items():
            names.setdefault(name, f"the {group.get_name_opt()[0]} runner")
        what = " and ".join(names[name] for name in self.runners.names) or "no backend"
        compares = len(self.runners.names) + len(self.comparison.load_outputs) > 1
        return ScriptSource([
            "#!/usr/bin/env python3",
            f"# Generated by `poly run --gen-script` from: {command}",
            f"# It runs {self.model.path or 'no model'} with {what}"
            + (", compares the outputs" if compares else "")
            + " and reports PASSED or FAILED (exit status 0 or 1), as that command does.",
        ])

    def _logging_lines(self) -> list:
        logging, lines = self.logging, []  # type: ignore[var-annotated]
        if logging is None:
            return lines
        if logging.severity is not None:
            lines.append(f"G_LOGGER.module_severity = {literal(logging.severity)}")
        if logging.log_format is not None:
            lines.append(f"G_LOGGER.log_format = {literal(list(logging.log_format))}")
        if logging.log_file is not None:
            lines.append(f"G_LOGGER.log_file = {literal(logging.log_file)}")
        return lines


def write_run_script(dest: str, program: RunScript) -> int:
    """
    `poly run --gen-script DEST`: writes the script of the current command line (``program``,
    built from its parsed option groups) and returns the exit status 0. A flag the script cannot
    reproduce is a PolyException naming it.
    """
    from poly.cli.args.logging import LoggingArgs
    from poly.core import PolyException

    flag = untranslated_flag(click.get_current_context())
    if flag is not None:
        raise PolyException(f"--gen-script cannot translate {flag} into a script; run the command without "
                            "--gen-script, or leave that flag out")
    program.logging = LoggingArgs.current()
    write_script(dest, program.text())
    return 0
