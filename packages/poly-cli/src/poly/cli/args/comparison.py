"""The comparison group: the inference results (--save-outputs, and saved --load-outputs to
compare with), how they are compared (--atol, --rtol, --check-error-stat, --compare and the
thresholds of each comparison function, --fail-fast, --check-average, heatmaps and plots) and
--validate (checking them for NaNs and Infs)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import click

from poly.cli.args.plot_display import display_options, resolve_display
from poly.cli.multi_option import multi_option, stack_options
from poly.cli.value_parsing import parse_per_output

COMPARE_FUNCS = ["simple", "indices", "l2", "cosine_similarity", "distance_metrics", "psnr", "snr",
                 "quality_metrics", "perceptual_metrics"]
ERROR_STATS = ("elemwise", "max", "mean", "median", "quantile")
CHECK_ERROR_STAT_HELP = ("Error statistic to check (elemwise, max, mean, median, quantile), optionally "
                         "per output: `--check-error-stat max out0:mean`.")

_PER_OUTPUT_NUMBERS = ("atol", "rtol", "error_quantile", "index_tolerance", "l2_threshold",
                       "cosine_similarity_threshold", "psnr_threshold", "snr_threshold", "lpips_threshold")
"""The flags whose value is a number, optionally per output, in the order they are parsed."""


def _tolerance_options(check_error_stat_help: str) -> list:
    return [
        multi_option("--atol", help="Absolute tolerance, optionally per output: `--atol 1e-5 out0:1e-3`."),
        multi_option("--rtol", help="Relative tolerance, optionally per output: `--rtol 1e-5 out0:1e-3`."),
        multi_option("--check-error-stat", help=check_error_stat_help),
        multi_option("--error-quantile", help="Error quantile to compare (0 to 1), optionally per output."),
        click.option("--infinities-compare-equal", is_flag=True,
                     help="Matching +-inf values in outputs have an absolute difference of 0."),
        click.option("--no-shape-check", is_flag=True, help="Disable checking that output shapes match exactly."),
    ]


def _script(spec: str | None) -> str | None:
    """--compare-func-script checked: its FILE must exist (a usage error naming the flag otherwise)."""
    if spec is None:
        return None
    from poly.compare import parse_script_and_func_name

    path, _ = parse_script_and_func_name(spec)
    if not os.path.isfile(path):
        raise click.BadParameter(f"no such file: {path!r}", param_hint="'--compare-func-script'")
    return spec


def _error_stat(arg: str, text: str) -> str:
    if text not in ERROR_STATS:
        raise click.BadParameter(f"{arg!r}: choose from {', '.join(ERROR_STATS)}", param_hint="'--check-error-stat'")
    return text


@dataclass(frozen=True)
class ComparisonArgs:
    """How inference results are saved, loaded, checked and compared. Per-output values are a
    plain value, or a dict of output name ("" for the default) -> value."""

    save_outputs: str | None = None
    load_outputs: tuple[str, ...] = ()
    atol: float | dict | None = None
    rtol: float | dict | None = None
    check_error_stat: str | dict | None = None
    error_quantile: float | dict | None = None
    infinities_compare_equal: bool = False
    check_shapes: bool = True
    compare_funcs: tuple[str, ...] = ()
    """--compare: names from COMPARE_FUNCS; (): simple."""
    index_tolerance: int | dict | None = None
    l2_threshold: float | dict | None = None
    cosine_similarity_threshold: float | dict | None = None
    psnr_threshold: float | dict | None = None
    snr_threshold: float | dict | None = None
    lpips_threshold: float | dict | None = None
    fail_fast: bool = False
    check_average: bool = False
    save_heatmaps: str | None = None
    save_error_metrics_plot: str | None = None
    show_heatmaps: bool = False
    show_error_metrics_plot: bool = False
    compare_func_script: str | None = None
    """--compare-func-script as FILE[:FUNC]; None: the --compare functions."""
    validate: bool = False

    @classmethod
    def options(cls):
        """Every flag of the group, as `poly run` has them."""
        return stack_options([
            click.option("--save-outputs", "--save-results", "save_outputs", type=click.Path(),
                         help="Path to save the inference results (JSON, .npz, or a directory)."),
            multi_option("--load-outputs", "--load-results", "load_outputs", type=click.Path(exists=True),
                         help="Saved results to compare against (e.g. from --save-outputs)."),
            *_tolerance_options(CHECK_ERROR_STAT_HELP),
            multi_option("--compare", "--compare-func", "compare_func", type=click.Choice(COMPARE_FUNCS),
                         help="Comparison function(s): simple (default), indices, l2, cosine_similarity, "
                         "distance_metrics, psnr, snr, quality_metrics, perceptual_metrics."),
            multi_option("--index-tolerance", help="Index tolerance for `--compare indices`, optionally per output."),
            multi_option("--l2-threshold", "--l2-tolerance", "l2_threshold", help="L2 norm threshold."),
            multi_option("--cosine-similarity-threshold", help="Cosine similarity threshold."),
            multi_option("--psnr-threshold", "--psnr-tolerance", "psnr_threshold", help="PSNR threshold (dB)."),
            multi_option("--snr-threshold", "--snr-tolerance", "snr_threshold", help="SNR threshold (dB)."),
            multi_option("--lpips-threshold", help="LPIPS threshold (needs torch and lpips)."),
            click.option("--fail-fast", is_flag=True, help="Stop comparing after the first failure."),
            click.option("--check-average", is_flag=True,
                         help="Check each metric averaged over all iterations instead of per iteration."),
            click.option("--save-heatmaps", type=click.Path(file_okay=False),
                         help="Directory in which to save heatmaps of the absolute and relative error."),
            click.option("--save-error-metrics-plot", type=click.Path(file_okay=False),
                         help="Directory in which to save error metrics plots."),
            *display_options(),
            click.option("--compare-func-script", metavar="FILE[:FUNC]",
                         help="Python script defining the comparison function `(IterationResult, IterationResult) "
                         "-> dict of output name -> bool` (function `compare_outputs` by default); it replaces "
                         "--compare and its thresholds."),
            click.option("--validate", is_flag=True, help="Check outputs for NaNs and Infs."),
        ])

    @classmethod
    def tolerance_options(cls, check_error_stat_help: str = CHECK_ERROR_STAT_HELP):
        """Only the tolerances of the simple comparison: --atol, --rtol, --check-error-stat,
        --error-quantile, --infinities-compare-equal, --no-shape-check (for `poly validate`)."""
        return stack_options(_tolerance_options(check_error_stat_help))

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> ComparisonArgs:
        """Parses the per-output numbers, then --check-error-stat; a bad value is a usage error
        naming the flag. Flags the command does not have keep their defaults."""
        numbers = {name: parse_per_output("--" + name.replace("_", "-"), kwargs.get(name))
                   for name in _PER_OUTPUT_NUMBERS}
        return cls(
            save_outputs=kwargs.get("save_outputs"),
            load_outputs=tuple(kwargs.get("load_outputs") or ()),
            check_error_stat=parse_per_output("--check-error-stat", kwargs.get("check_error_stat"), _error_stat),
            infinities_compare_equal=bool(kwargs.get("infinities_compare_equal")),
            check_shapes=not kwargs.get("no_shape_check"),
            compare_funcs=tuple(kwargs.get("compare_func") or ()),
            fail_fast=bool(kwargs.get("fail_fast")),
            check_average=bool(kwargs.get("check_average")),
            save_heatmaps=kwargs.get("save_heatmaps"),
            save_error_metrics_plot=kwargs.get("save_error_metrics_plot"),
            show_heatmaps=bool(kwargs.get("show_heatmaps")),
            show_error_metrics_plot=bool(kwargs.get("show_error_metrics_plot")),
            compare_func_script=_script(kwargs.get("compare_func_script")),
            validate=bool(kwargs.get("validate")),
            **numbers,
        )

    @staticmethod
    def reads_results(kwargs: Mapping) -> bool:
        """Whether --load-outputs or --validate is given: then `poly run` needs a MODEL even
        without a runner, as it does with one."""
        return bool(kwargs.get("load_outputs") or kwargs.get("validate"))

    def tolerances(self) -> dict:
        """The simple comparison's tolerances as keyword arguments (atol, rtol,
        check_error_stat, error_quantile, infinities_compare_equal, check_shapes)."""
        return {"atol": self.atol, "rtol": self.rtol, "check_error_stat": self.check_error_stat,
                "error_quantile": self.error_quantile, "infinities_compare_equal": self.infinities_compare_equal,
                "check_shapes": self.check_shapes}

    def create_compare_func(self):
        """The comparison function of --compare (a list of them when several are given)."""
        from poly.compare import CompareFunc

        if self.compare_func_script is not None:
            from poly.compare import parse_script_and_func_name
            from poly.core.scripts import InvokeFromScript

            return InvokeFromScript(*parse_script_and_func_name(self.compare_func_script, "compare_outputs"))
        check_shapes, fail_fast = self.check_shapes, self.fail_fast
        show_heatmaps, save_heatmaps = resolve_display("--show-heatmaps", self.show_heatmaps, self.save_heatmaps)
        show_plot, save_plot = resolve_display("--show-error-metrics-plot", self.show_error_metrics_plot,
                                               self.save_error_metrics_plot)
        funcs = []
        for name in self.compare_funcs or ("simple",):
            if name == "simple":
                funcs.append(CompareFunc.simple(
                    check_shapes=check_shapes, rtol=self.rtol, atol=self.atol, fail_fast=fail_fast,
                    check_error_stat=self.check_error_stat, error_quantile=self.error_quantile,
                    infinities_compare_equal=self.infinities_compare_equal or None,
                    save_heatmaps=save_heatmaps, save_error_metrics_plot=save_plot, show_heatmaps=show_heatmaps,
                    show_error_metrics_plot=show_plot))
            elif name == "indices":
                funcs.append(CompareFunc.indices(index_tolerance=self.index_tolerance, fail_fast=fail_fast))
            elif name == "distance_metrics":
                funcs.append(CompareFunc.distance_metrics(
                    l2_tolerance=self.l2_threshold, cosine_similarity_threshold=self.cosine_similarity_threshold,
                    check_shapes=check_shapes, fail_fast=fail_fast))
            elif name == "quality_metrics":
                funcs.append(CompareFunc.quality_metrics(
                    psnr_tolerance=self.psnr_threshold, snr_tolerance=self.snr_threshold,
                    check_shapes=check_shapes, fail_fast=fail_fast))
            elif name == "l2":
                funcs.append(CompareFunc.l2(self.l2_threshold, check_shapes, fail_fast))
            elif name == "cosine_similarity":
                funcs.append(CompareFunc.cosine_similarity(self.cosine_similarity_threshold, check_shapes, fail_fast))
            elif name == "psnr":
                funcs.append(CompareFunc.psnr(self.psnr_threshold, check_shapes, fail_fast))
            elif name == "snr":
                funcs.append(CompareFunc.snr(self.snr_threshold, check_shapes, fail_fast))
            elif name == "perceptual_metrics":
                funcs.append(CompareFunc.perceptual_metrics(self.lpips_threshold, check_shapes, fail_fast))
        return funcs[0] if len(funcs) == 1 else funcs

    def add_loaded_outputs(self, run_results) -> None:
        """Extends ``run_results`` (poly.compare.RunResults) with the --load-outputs files."""
        from poly.compare import RunResults

        for path in self.load_outputs:  # RunResults.load logs each file it loads
            run_results.extend(RunResults.load(path))

    def check_results(self, run_results) -> bool:
        """--validate (NaNs, Infs) and, with two or more result sets, the accuracy comparison of
        every one with the first; whether all passed."""
        from poly.compare import Comparator

        passed = True
        if self.validate:
            passed = bool(Comparator.validate(run_results, check_inf=True, check_nan=True)) and passed
        if len(run_results) > 1:
            accuracy = Comparator.compare_accuracy(run_results, fail_fast=self.fail_fast,
                                                   compare_func=self.create_compare_func(),
                                                   check_average=self.check_average)
            passed = bool(accuracy) and passed
        return passed
