"""
``SimpleCompareFunc``: absolute/relative tolerances on an error statistic (elementwise, max, mean,
median or a quantile), computed by the native engine in one call per output pair.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from poly.compare.funcs.base import BaseCompareFunc, describe_array
from poly.compare.stats import plots
from poly.compare.stats.known_summaries import remember_value_summaries
from poly.compare.stats.on_device import is_device_output
from poly.compare.stats.polygraphy_precision import is_floating, may_hold_zero, polygraphy_error_stats
from poly.compare.stats.report_lines import (
    LOGGED_QUANTILES,
    diff_stats_view,
    display_diffs,
    log_output_stats,
    stats_lines_logged,
    str_diff_histogram,
)
from poly.compare.verdicts.output_results import OutputCompareResult
from poly.compare.verdicts.simple_comparison import SimpleCompareOptions, simple_verdict
from poly.compare.verdicts.thresholds import VALID_CHECK_ERROR_STATS
from poly.core import G_LOGGER, LogMode
from poly.core.util.text import indent_block

__all__ = ["SimpleCompareFunc"]


def _has_zero(arr: Any) -> bool:
    """Whether ``arr`` holds a zero: counted on its device for a ``DeviceOutput`` (whose module is
    imported only then), on the host otherwise."""
    if is_device_output(arr):
        from poly.compare.stats.gpu.device_output import has_zero

        return has_zero(arr)
    return bool(np.any(np.asarray(arr) == 0))


# The options that may be dicts by output name (a dict's unknown names are warned about at each call).
_PER_OUTPUT_OPTIONS = [declared for declared in SimpleCompareOptions.declarations() if declared.dict_label is not None]


def _option_attribute(name: str) -> property:
    # func.atol reads (and sets) the option: the function keeps no second copy of it
    def get(func: Any) -> Any:
        return getattr(func.options, name)

    def set_(func: Any, value: Any) -> None:
        func.options = dataclasses.replace(func.options, **{name: value}).with_defaults()

    return property(get, set_, doc=SimpleCompareOptions.declaration(name).help + ".")


def _with_options(cls: Any) -> Any:
    """Gives ``cls`` an attribute per option and Polygraphy's signature for ``__init__``."""
    for declared in SimpleCompareOptions.declarations():
        setattr(cls, declared.name, _option_attribute(declared.name))
    cls.__init__.__signature__ = SimpleCompareOptions.signature(first=("self",))
    return cls


@_with_options
class SimpleCompareFunc(BaseCompareFunc):
    """
    Compares two ``IterationResult`` s with absolute and relative tolerances on an error statistic.
    Instances are the ``compare_func`` of ``Comparator.compare_accuracy``.

    Its arguments (Polygraphy's ``CompareFunc.simple`` signature) are the options declared in
    ``SimpleCompareOptions``, each None for its default; ``options`` holds them with the defaults
    filled in, and each one reads as an attribute of the function (``func.atol``).
    """

    _SUMMARY_LABEL = "simple"
    _RESULT_CLASS = OutputCompareResult

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """
        Args:
            The options of ``SimpleCompareOptions`` (``check_shapes``, ``rtol``, ``atol``,
            ``fail_fast``, ``find_output_func``, ``check_error_stat``...), by position in
            Polygraphy's order or by keyword; None or absent: the option's default.
        """
        self.options = SimpleCompareOptions.from_arguments(*args, **kwargs).with_defaults()
        """The ``SimpleCompareOptions`` compared with, the defaults filled in."""

    def options_for(self, output_name: Any) -> SimpleCompareOptions:
        """The options output ``output_name`` is checked with (per-output dicts resolved)."""
        return self.options.for_output(output_name)

    def thresholds_for(self, output_name: Any) -> Any:
        return self.options_for(output_name).threshold

    def _check_outputs_match(self, out0: Any, out0_name: Any, out1: Any, out1_name: Any, options: Any, runner0_name: Any, runner1_name: Any) -> Any:
        err_stat, quantile = options.check_error_stat, options.error_quantile
        if err_stat not in VALID_CHECK_ERROR_STATS:
            G_LOGGER.critical(
                f"Invalid choice for check_error_stat: {err_stat}.\n"
                f"Note: Valid choices are: {list(VALID_CHECK_ERROR_STATS)}"
            )
        G_LOGGER.super_verbose(
            lambda: f"{runner0_name:35} | Output: {out0_name} ({describe_array(out0)}):\n{indent_block(out0)}"
        )
        G_LOGGER.super_verbose(
            lambda: f"{runner1_name:35} | Output: {out1_name} ({describe_array(out1)}):\n{indent_block(out1)}"
        )

        if err_stat == "quantile" and not 0.0 <= quantile <= 1.0:
            G_LOGGER.critical(f"Invalid error_quantile for output {out0_name}: {quantile}; expected a value in [0, 1]")
        # the p90/p95/p99 are shown by the statistics lines alone: not computed when those are not printed
        quantiles = list(LOGGED_QUANTILES) if stats_lines_logged() else []
        if err_stat == "quantile" and quantile not in quantiles:
            quantiles.append(quantile)
        stats, absd, rel = polygraphy_error_stats(out0, out1, options, self.infinities_compare_equal, quantiles,  # type: ignore[attr-defined]
                                                  median=True)
        remember_value_summaries(out0, out1, stats)  # for the comparator's report of both outputs

        if is_floating(out1) and may_hold_zero(stats) and G_LOGGER.is_enabled(G_LOGGER.WARNING):
            if _has_zero(out1):
                G_LOGGER.warning(
                    f"{runner1_name:35} | Output: {out1_name}: Some values are 0. "
                    f"Will add a small epsilon quantity to these when computing relative difference. "
                    f"Note that this may cause some relative differences to be extremely high. ",
                    mode=LogMode.ONCE,
                )

        result = simple_verdict(stats, absd, rel, options)
        if err_stat == "elemwise":
            G_LOGGER.super_verbose(lambda: f"Number of mismatched elements: {stats.mismatches}")
        failed = not bool(result)

        diffs = None

        def get_diffs() -> Any:
            nonlocal diffs
            if diffs is None:
                diffs = display_diffs(out0, out1, self.infinities_compare_equal)  # type: ignore[attr-defined]
            return diffs

        G_LOGGER.info(f"Error Metrics: {out0_name}")
        with G_LOGGER.indent():
            def required_tolerance() -> str:
                required = result.checked_values()
                msg = (
                    f"Minimum Required Tolerance: {err_stat} error | [abs={required[0]:.5g}] OR [rel={required[1]:.5g}]"
                )
                if err_stat == "elemwise":
                    msg += " (requirements may be lower if both abs/rel tolerances are set)"
                elif err_stat == "quantile":
                    msg += f" (quantile={quantile:.4g})"
                return msg

            G_LOGGER.info(required_tolerance)

            if self.save_error_metrics_plot or self.show_error_metrics_plot:  # type: ignore[attr-defined]
                with G_LOGGER.indent():
                    absdiff, reldiff = get_diffs()
                    plots.scatter_plot_error_magnitude(
                        absdiff, reldiff, out1, rel.min, rel.max, runner0_name, runner1_name, out0_name,
                        out1_name, save_dir=self.save_error_metrics_plot, show=self.show_error_metrics_plot,  # type: ignore[attr-defined]
                    )

            def heatmaps(which: Any, diff_stats: Any, prefix: Any, use_lognorm: Any = None) -> None:
                if self.save_heatmaps or self.show_heatmaps:  # type: ignore[attr-defined]
                    with G_LOGGER.indent():
                        plots.build_heatmaps(
                            get_diffs()[which], diff_stats.min, diff_stats.max, prefix=f"{prefix} Error | {out0_name}",
                            save_dir=self.save_heatmaps, show=self.show_heatmaps, use_lognorm=use_lognorm,  # type: ignore[attr-defined]
                        )

            bool_pair = out0.dtype == np.bool_ and out1.dtype == np.bool_

            def diff_histogram(stream: Any, diff_stats: Any) -> Any:
                # counted natively from the two outputs: no difference array is built
                if bool_pair:
                    return None
                return lambda: str_diff_histogram(out0, out1, stream, diff_stats.min, diff_stats.max,
                                                  stats.compute_dtype, self.infinities_compare_equal)  # type: ignore[attr-defined]

            log_output_stats(  # (the views are built only where their lines print)
                lambda: diff_stats_view(absd, with_quantiles=not bool_pair), lambda: get_diffs()[0], out0.size, failed,
                "Absolute Difference", histogram=diff_histogram("absdiff", absd),
            )
            heatmaps(0, absd, "Absolute")
            log_output_stats(
                lambda: diff_stats_view(rel), lambda: get_diffs()[1], out0.size, failed, "Relative Difference",
                histogram=diff_histogram("reldiff", rel),
            )
            heatmaps(1, rel, "Relative", use_lognorm=True)

        G_LOGGER.extra_verbose(
            lambda: f"Finished comparing: '{out0_name}' ({describe_array(out0)}) "
            f"[{runner0_name}] and '{out1_name}' ({describe_array(out1)}) [{runner1_name}]"
        )
        return result

    def __call__(self, iter_result0: Any, iter_result1: Any) -> Any:
        """
        Compares every output of ``iter_result0`` with its counterpart in ``iter_result1``.

        Returns:
            OrderedDict[str, OutputCompareResult]: By output name of ``iter_result0``; a shape
            mismatch gives ``False``.
        """
        valid_keys = None
        for declared in _PER_OUTPUT_OPTIONS:
            option = getattr(self.options, declared.name)
            if isinstance(option, Mapping):  # (only a dict can name unknown outputs)
                if valid_keys is None:
                    valid_keys = set(iter_result0.keys()) | set(iter_result1.keys()) | {""}
                self._warn_on_unknown_keys(option, f"the {declared.dict_label} dictionary", valid_keys)

        def match(out0_name: Any, output0: Any, out1_name: Any, output1: Any) -> Any:
            options = self.options_for(out0_name)
            atol, rtol, err_stat = options.atol, options.rtol, options.check_error_stat
            G_LOGGER.info(lambda: f"Tolerance: [abs={atol:.5g}, rel={rtol:.5g}] | Checking {err_stat} error")
            G_LOGGER.extra_verbose(lambda: f"Note: Comparing {iter_result0.runner_name} vs. {iter_result1.runner_name}")

            aligned = self._align_shapes(out0_name, output0, output1)
            if aligned is None:
                return False
            output0, output1 = aligned
            result = self._check_outputs_match(
                output0, out0_name, output1, out1_name, options, iter_result0.runner_name, iter_result1.runner_name,
            )
            if not result:
                G_LOGGER.error(
                    f"FAILED | Output: '{out0_name}' | Difference exceeds tolerance (rel={rtol}, abs={atol})"
                )
            else:
                G_LOGGER.finish(
                    f"PASSED | Output: '{out0_name}' | Difference is within tolerance (rel={rtol}, abs={atol})"
                )
            return result

        return self._run_comparison(iter_result0, iter_result1, match)

