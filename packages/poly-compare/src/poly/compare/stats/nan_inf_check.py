"""Output validation (``--validate``): NaN and Inf checks of every output, counted by the native engine."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from poly.compare.stats.report_lines import array_stats, log_output_stats
from poly.core import G_LOGGER, LogMode
from poly.core.arrays.host import host_array

__all__ = ["validate_run_results", "validate_stream"]


def _validate_output(runner_name: Any, output_name: Any, output: Any, check_inf: Any, check_nan: Any, iter_prefix: Any) -> Any:
    G_LOGGER.start(
        f"{runner_name:35} | {iter_prefix}Validating output: {output_name} (check_inf={check_inf}, check_nan={check_nan})"
    )
    with G_LOGGER.indent():
        output = host_array(output)
        stats = array_stats(output)
        log_output_stats(stats, output, output.size)
        valid = True
        if stats is not None and check_nan and stats.nan_count:
            G_LOGGER.error("NaN Detected | One or more NaNs were encountered in this output")
            G_LOGGER.info(
                "Note: Use -vv or set logging verbosity to EXTRA_VERBOSE to display locations of NaNs",
                mode=LogMode.ONCE,
            )
            G_LOGGER.extra_verbose(lambda: f"Note: NaNs at:\n{np.argwhere(np.isnan(output))}")
            valid = False
        if stats is not None and check_inf and (stats.nan_count or stats.inf_count):
            G_LOGGER.error("Inf Detected | One or more non-finite values were encountered in this output")
            G_LOGGER.info(
                "Note: Use -vv or set logging verbosity to EXTRA_VERBOSE to display non-finite values",
                mode=LogMode.ONCE,
            )
            G_LOGGER.extra_verbose(lambda: f"Note: non-finite values at:\n{np.argwhere(~np.isfinite(output))}")
            G_LOGGER.extra_verbose(lambda: f"Note: non-finite values:\n{output[~np.isfinite(output)]}")
            valid = False
        if valid:
            G_LOGGER.finish(f"PASSED | Output: {output_name} is valid")
        else:
            G_LOGGER.error(f"FAILED | Errors detected in output: {output_name}")
        return valid


def validate_run_results(run_results: Any, check_inf: Any, check_nan: Any, fail_fast: Any, iteration: Any = None, emit_summary: bool = True) -> bool:
    """
    Checks every output of ``run_results`` for NaNs (``check_nan``) and non-finite values
    (``check_inf``), logging each output's statistics.

    Returns:
        bool: Whether every output is valid.
    """
    iter_prefix = "" if iteration is None else f"Iteration {iteration} | "
    all_valid = True
    if emit_summary:
        G_LOGGER.start(f"Output Validation | Runners: {list(run_results.keys())}")
    with G_LOGGER.indent() if emit_summary else contextlib.nullcontext():
        for runner_name, results in run_results:
            for result in results:
                for output_name, output in result.items():
                    all_valid &= _validate_output(runner_name, output_name, output, check_inf, check_nan, iter_prefix)
                    if fail_fast and not all_valid:
                        return False
        if emit_summary:
            if all_valid:
                G_LOGGER.finish("PASSED | Output Validation")
            else:
                G_LOGGER.error("FAILED | Output Validation")
    return all_valid


def validate_stream(stream: Any, check_inf: Any, check_nan: Any) -> Iterator[Any]:
    """Passes a stream of single-iteration ``RunResults`` through, validating each; an invalid one is an error."""
    try:
        for index, single in enumerate(stream):
            if not validate_run_results(single, check_inf, check_nan, True, iteration=index, emit_summary=False):
                G_LOGGER.critical(
                    f"Output validation failed: iteration {index} contains invalid values (NaNs/Infs). "
                    "See the errors above."
                )
            yield single
    finally:
        close = getattr(stream, "close", None)
        if callable(close):
            close()
