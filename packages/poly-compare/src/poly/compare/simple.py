"""
``SimpleCompareFunc``: absolute/relative tolerances on an error statistic (elementwise, max, mean,
median or a quantile), computed by the native engine in one call per output pair.
"""

from __future__ import annotations

import math

import numpy as np

from poly.compare.compare_base import BaseCompareFunc, _dtype_str, _shape
from poly.compare.compare_results import OutputCompareResult
from poly.compare.error_stats import DiffStats, ErrorStats, error_stats
from poly.compare.options import default, value_or_from_dict
from poly.compare.output_stats import (
    LOGGED_QUANTILES,
    diff_stats_view,
    display_diffs,
    indent_block,
    log_output_stats,
    str_diff_histogram,
)
from poly.compare.thresholds import VALID_CHECK_ERROR_STATS, SimpleThreshold
from poly.core.logger import G_LOGGER, LogMode

__all__ = ["SimpleCompareFunc", "simple_error_stats"]

_EPSILON = 2.220446049250313e-16


def _is_floating(arr: np.ndarray) -> bool:
    return arr.dtype.kind == "f" or arr.dtype.name == "bfloat16"


def _numpy_lerp_ranks(n: int, q: float) -> tuple[int, int, float]:
    # The two ranks and the weight numpy.quantile's default (linear) method uses, computed the
    # way NumPy computes them (so that the float rounding of the weight agrees).
    virtual = n * q + (1 - q) - 1
    if virtual >= n - 1:
        return n - 1, n - 1, virtual + 1  # NumPy's weight against index -1
    lo = int(math.floor(virtual))
    return lo, lo + 1, virtual - lo


def _with_infinite_top(diff: DiffStats, n: int, k: int) -> DiffStats:
    """
    Median and quantiles as NumPy computes them on non-negative data whose ``k`` largest values
    are +inf. NumPy interpolates ``a + (b - a) * t`` (``b - (b - a) * (1 - t)`` from t = 0.5), which
    gives NaN next to an infinity unless 0 < t < 0.5; Polygraphy reports those NaNs (and fails on
    them), so the native exact order statistics are mapped to the same values.
    """
    if k == 0 or n == 0 or diff.nan_count:
        return diff
    first_inf = n - k

    def quantile(q: float, native: float) -> float:
        lo, hi, t = _numpy_lerp_ranks(n, q)
        if hi < first_inf:
            return native
        if lo >= first_inf:
            return math.nan
        return math.inf if 0 < t < 0.5 else math.nan

    def median(native: float) -> float:
        upper = n // 2  # the middle element, or the upper of the two middle ones
        return math.inf if upper >= first_inf else native

    return DiffStats(
        min=diff.min, max=diff.max, mean=diff.mean, std=diff.std, var=diff.var, median=median(diff.median),
        argmin=diff.argmin, argmax=diff.argmax,
        quantiles={q: quantile(q, v) for q, v in diff.quantiles.items()},
        nan_count=diff.nan_count, inf_count=diff.inf_count,
    )


def _integer_divisor_reldiff(out0: np.ndarray, out1: np.ndarray, rel: DiffStats) -> DiffStats:
    """
    Polygraphy divides by an integer or bool ``out1`` as it is, without replacing zeros by an
    epsilon (it only does that for floating-point outputs): ``x / 0`` is ``inf`` and ``0 / 0`` is
    ``NaN``. The native engine divides by the epsilon instead, which ranks those positions above
    every other relative difference (an integer difference is at least 1, so ``1 / 2.2e-16``).
    This maps the native statistics to Polygraphy's, so that reported figures and verdicts agree.
    """
    zero = out1 == 0
    if not zero.any():
        return rel
    n = out1.size
    zero_flat = np.flatnonzero(zero)
    with np.errstate(all="ignore"):
        zero_absdiff = np.abs(np.asarray(out0).reshape(-1)[zero_flat].astype(np.float64))
    shape = out1.shape

    def index(flat):
        return tuple(int(i) for i in np.unravel_index(int(flat), shape)) if shape else ()

    undefined = (zero_absdiff == 0) | np.isnan(zero_absdiff)
    if undefined.any() or rel.nan_count:
        # A NaN anywhere makes every NumPy statistic NaN; arg{min,max} point at the first NaN.
        first = int(zero_flat[np.argmax(undefined)]) if undefined.any() else n
        if rel.nan_count and rel.argmin is not None:
            first = min(first, int(np.ravel_multi_index(rel.argmin, shape)) if shape else 0)
        nan = math.nan
        return DiffStats(
            min=nan, max=nan, mean=nan, std=nan, var=nan, median=nan, argmin=index(first), argmax=index(first),
            quantiles={q: nan for q in rel.quantiles}, nan_count=rel.nan_count + int(undefined.sum()),
            inf_count=rel.inf_count + int((~undefined).sum()),
        )

    # Every zero divisor gives +inf: they rank above everything else.
    k = zero_flat.size
    first_zero = index(zero_flat[0])
    all_inf = k == n
    infinite = DiffStats(
        min=math.inf if all_inf else rel.min, max=math.inf, mean=math.inf, std=math.nan, var=math.nan,
        median=rel.median, argmin=first_zero if all_inf else rel.argmin, argmax=first_zero,
        quantiles=dict(rel.quantiles), nan_count=rel.nan_count, inf_count=rel.inf_count + k,
    )
    return _with_infinite_top(infinite, n, infinite.inf_count)


def simple_error_stats(out0, out1, atol=1e-5, rtol=1e-5, quantiles=(), infinities_compare_equal=False, threads=0,
                       median=True):
    """
    The error statistics of ``out0`` against ``out1`` exactly as Polygraphy's simple comparison
    defines them (relative differences divide by ``out1``).

    Returns:
        Tuple[ErrorStats, DiffStats, DiffStats]: The native statistics, and the absolute and
        relative difference statistics with NumPy's quantile semantics next to infinities
        (``_with_infinite_top``) and Polygraphy's division by integer outputs
        (``_integer_divisor_reldiff``). ``threads`` and ``median`` are passed to ``error_stats``.
    """
    out0, out1 = np.asarray(out0), np.asarray(out1)
    try:
        stats = error_stats(
            out0, out1, atol=atol, rtol=rtol, quantiles=quantiles, infinities_compare_equal=infinities_compare_equal,
            threads=threads, median=median,
        )
    except ValueError as err:
        G_LOGGER.critical(f"Cannot compare outputs of dtypes {out0.dtype} and {out1.dtype}: {err}")
    absd = _with_infinite_top(stats.absdiff, stats.size, stats.absdiff.inf_count)
    if _is_floating(out1):
        rel = _with_infinite_top(stats.reldiff, stats.size, stats.reldiff.inf_count)
    else:
        rel = _integer_divisor_reldiff(out0, out1, stats.reldiff)
    return stats, absd, rel


def _may_hold_zero(stats: ErrorStats) -> bool:
    # Only a range that straddles zero (or NaN bounds) can hold one; skip the scan otherwise.
    return not (stats.b.min > 0 or stats.b.max < 0)


class SimpleCompareFunc(BaseCompareFunc):
    """
    Compares two ``IterationResult`` s with absolute and relative tolerances on an error statistic.
    Instances are the ``compare_func`` of ``Comparator.compare_accuracy``.
    """

    _DEFAULT_RTOL = 1e-5
    _DEFAULT_ATOL = 1e-5
    _DEFAULT_QUANTILE = 0.99
    _DEFAULT_ERROR_STAT = "elemwise"
    _SUMMARY_LABEL = "simple"
    _RESULT_CLASS = OutputCompareResult

    def __init__(
        self,
        check_shapes=None,
        rtol=None,
        atol=None,
        fail_fast=None,
        find_output_func=None,
        check_error_stat=None,
        infinities_compare_equal=None,
        save_heatmaps=None,
        show_heatmaps=None,
        save_error_metrics_plot=None,
        show_error_metrics_plot=None,
        error_quantile=None,
    ):
        """
        Args:
            check_shapes (bool):
                    Require identical shapes. When False, the second output is transposed or
                    reshaped to the first one's shape where possible. Defaults to True.
            rtol (Union[float, Dict[str, float]]):
                    Relative tolerance, as a fraction of the second output's values; a dict gives
                    it per output name, with ``""`` as the default for names not listed.
                    Defaults to 1e-5.
            atol (Union[float, Dict[str, float]]):
                    Absolute tolerance, a number or a dict as for ``rtol``. Defaults to 1e-5.
            fail_fast (bool): Stop at the first output that fails. Defaults to False.
            find_output_func (Callable(str, int, IterationResult) -> List[str]):
                    Given an output name and index of the first result and the second result,
                    the names of the second result's outputs to compare with; ``[]`` or None
                    skips the output. Defaults to name matching with a fallback to position.
            check_error_stat (Union[str, Dict[str, str]]):
                    ``"elemwise"`` (every element must be within atol or rtol), ``"max"``,
                    ``"mean"``, ``"median"`` or ``"quantile"`` (that statistic of the absolute
                    or relative difference must be within its tolerance); per output as a dict.
                    Defaults to ``"elemwise"``.
            infinities_compare_equal (bool):
                    Equal infinities have absolute difference 0 instead of NaN. Defaults to False.
            save_heatmaps (str): Directory to save heatmaps of the differences to (matplotlib).
            show_heatmaps (bool): Show heatmaps of the differences (matplotlib). Defaults to False.
            save_error_metrics_plot (str): Directory to save plots of the error against the
                    reference magnitude to (matplotlib).
            show_error_metrics_plot (bool): Show those plots (matplotlib). Defaults to False.
            error_quantile (Union[float, Dict[str, float]]):
                    The quantile in [0, 1] checked by ``"quantile"``; per output as a dict.
                    Defaults to 0.99.
        """
        self.check_shapes = default(check_shapes, True)
        self.rtol = default(rtol, self._DEFAULT_RTOL)
        self.atol = default(atol, self._DEFAULT_ATOL)
        self.error_quantile = default(error_quantile, self._DEFAULT_QUANTILE)
        self.fail_fast = default(fail_fast, False)
        self.find_output_func = find_output_func
        self.check_error_stat = default(check_error_stat, self._DEFAULT_ERROR_STAT)
        self.infinities_compare_equal = default(infinities_compare_equal, False)
        self.save_heatmaps = save_heatmaps
        self.show_heatmaps = default(show_heatmaps, False)
        self.save_error_metrics_plot = save_error_metrics_plot
        self.show_error_metrics_plot = default(show_error_metrics_plot, False)

    def _per_output_options(self, output_name):
        return (
            value_or_from_dict(self.atol, output_name, self._DEFAULT_ATOL),
            value_or_from_dict(self.rtol, output_name, self._DEFAULT_RTOL),
            value_or_from_dict(self.check_error_stat, output_name, self._DEFAULT_ERROR_STAT),
            value_or_from_dict(self.error_quantile, output_name, self._DEFAULT_QUANTILE),
        )

    def thresholds_for(self, output_name):
        atol, rtol, err_stat, _ = self._per_output_options(output_name)
        return SimpleThreshold(err_stat, atol, rtol)

    def _check_outputs_match(self, out0, out0_name, out1, out1_name, atol, rtol, err_stat, quantile,
                             runner0_name, runner1_name):
        if err_stat not in VALID_CHECK_ERROR_STATS:
            G_LOGGER.critical(
                f"Invalid choice for check_error_stat: {err_stat}.\n"
                f"Note: Valid choices are: {list(VALID_CHECK_ERROR_STATS)}"
            )
        G_LOGGER.super_verbose(
            lambda: f"{runner0_name:35} | Output: {out0_name} (dtype={_dtype_str(out0)}, shape={_shape(out0)}):\n"
            f"{indent_block(out0)}"
        )
        G_LOGGER.super_verbose(
            lambda: f"{runner1_name:35} | Output: {out1_name} (dtype={_dtype_str(out1)}, shape={_shape(out1)}):\n"
            f"{indent_block(out1)}"
        )

        if err_stat == "quantile" and not 0.0 <= quantile <= 1.0:
            G_LOGGER.critical(f"Invalid error_quantile for output {out0_name}: {quantile}; expected a value in [0, 1]")
        quantiles = list(LOGGED_QUANTILES)
        if err_stat == "quantile" and quantile not in quantiles:
            quantiles.append(quantile)
        stats, absd, rel = simple_error_stats(out0, out1, atol, rtol, quantiles, self.infinities_compare_equal)

        if _is_floating(out1) and _may_hold_zero(stats) and G_LOGGER.is_enabled(G_LOGGER.WARNING):
            if np.any(out1 == 0):
                G_LOGGER.warning(
                    f"{runner1_name:35} | Output: {out1_name}: Some values are 0. "
                    f"Will add a small epsilon quantity to these when computing relative difference. "
                    f"Note that this may cause some relative differences to be extremely high. ",
                    mode=LogMode.ONCE,
                )

        quantile_abs = absd.quantiles.get(quantile) if err_stat == "quantile" else None
        quantile_rel = rel.quantiles.get(quantile) if err_stat == "quantile" else None
        result = OutputCompareResult(
            absd.max, rel.max, absd.mean, rel.mean, absd.median, rel.median, quantile_abs, quantile_rel,
            thresholds=SimpleThreshold(err_stat, atol, rtol),
        )
        if err_stat == "elemwise":
            result._stored_passed = stats.mismatches == 0
            G_LOGGER.super_verbose(lambda: f"Number of mismatched elements: {stats.mismatches}")
        failed = not bool(result)

        diffs = None

        def get_diffs():
            nonlocal diffs
            if diffs is None:
                diffs = display_diffs(out0, out1, self.infinities_compare_equal)
            return diffs

        G_LOGGER.info(f"Error Metrics: {out0_name}")
        with G_LOGGER.indent():
            required = {
                "mean": (absd.mean, rel.mean),
                "median": (absd.median, rel.median),
                "max": (absd.max, rel.max),
                "elemwise": (absd.max, rel.max),
                "quantile": (quantile_abs, quantile_rel),
            }[err_stat]
            msg = (
                f"Minimum Required Tolerance: {err_stat} error | [abs={required[0]:.5g}] OR [rel={required[1]:.5g}]"
            )
            if err_stat == "elemwise":
                msg += " (requirements may be lower if both abs/rel tolerances are set)"
            elif err_stat == "quantile":
                msg += f" (quantile={quantile:.4g})"
            G_LOGGER.info(msg)

            if self.save_error_metrics_plot or self.show_error_metrics_plot:
                from poly.compare import plotting

                with G_LOGGER.indent():
                    absdiff, reldiff = get_diffs()
                    plotting.scatter_plot_error_magnitude(
                        absdiff, reldiff, out1, rel.min, rel.max, runner0_name, runner1_name, out0_name,
                        out1_name, save_dir=self.save_error_metrics_plot, show=self.show_error_metrics_plot,
                    )

            def heatmaps(which, diff_stats, prefix, use_lognorm=None):
                if self.save_heatmaps or self.show_heatmaps:
                    from poly.compare import plotting

                    with G_LOGGER.indent():
                        plotting.build_heatmaps(
                            get_diffs()[which], diff_stats.min, diff_stats.max, prefix=f"{prefix} Error | {out0_name}",
                            save_dir=self.save_heatmaps, show=self.show_heatmaps, use_lognorm=use_lognorm,
                        )

            bool_pair = out0.dtype == np.bool_ and out1.dtype == np.bool_

            def diff_histogram(stream, diff_stats):
                # counted natively from the two outputs: no difference array is built
                if bool_pair:
                    return None
                return lambda: str_diff_histogram(out0, out1, stream, diff_stats.min, diff_stats.max,
                                                  stats.compute_dtype, self.infinities_compare_equal)

            log_output_stats(
                diff_stats_view(absd, with_quantiles=not bool_pair), lambda: get_diffs()[0], out0.size, failed,
                "Absolute Difference", histogram=diff_histogram("absdiff", absd),
            )
            heatmaps(0, absd, "Absolute")
            log_output_stats(
                diff_stats_view(rel), lambda: get_diffs()[1], out0.size, failed, "Relative Difference",
                histogram=diff_histogram("reldiff", rel),
            )
            heatmaps(1, rel, "Relative", use_lognorm=True)

        G_LOGGER.extra_verbose(
            lambda: f"Finished comparing: '{out0_name}' (dtype={_dtype_str(out0)}, shape={_shape(out0)}) "
            f"[{runner0_name}] and '{out1_name}' (dtype={_dtype_str(out1)}, shape={_shape(out1)}) [{runner1_name}]"
        )
        return result

    def __call__(self, iter_result0, iter_result1):
        """
        Compares every output of ``iter_result0`` with its counterpart in ``iter_result1``.

        Returns:
            OrderedDict[str, OutputCompareResult]: By output name of ``iter_result0``; a shape
            mismatch gives ``False``.
        """
        valid_keys = set(iter_result0.keys()) | set(iter_result1.keys()) | {""}
        self._warn_on_unknown_keys(self.rtol, "the rtol dictionary", valid_keys)
        self._warn_on_unknown_keys(self.atol, "the atol dictionary", valid_keys)
        self._warn_on_unknown_keys(self.check_error_stat, "the check_error_stat dictionary", valid_keys)
        self._warn_on_unknown_keys(self.error_quantile, "the quantile dictionary", valid_keys)

        def match(out0_name, output0, out1_name, output1):
            atol, rtol, err_stat, quantile = self._per_output_options(out0_name)
            G_LOGGER.info(f"Tolerance: [abs={atol:.5g}, rel={rtol:.5g}] | Checking {err_stat} error")
            G_LOGGER.extra_verbose(f"Note: Comparing {iter_result0.runner_name} vs. {iter_result1.runner_name}")

            aligned = self._align_shapes(out0_name, output0, output1)
            if aligned is None:
                return False
            output0, output1 = aligned
            result = self._check_outputs_match(
                output0, out0_name, output1, out1_name, atol, rtol, err_stat, quantile,
                iter_result0.runner_name, iter_result1.runner_name,
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
