"""
The comparison-function protocol: pairing the outputs of two ``IterationResult`` s (by name, then
loosely, then by position), aligning their shapes, and the log lines around each output.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from typing import Any

import numpy as np

from poly.compare.stats.on_device import is_device_output, may_compare_on_device
from poly.core import G_LOGGER, DataType, LogMode
from poly.core.arrays.host import host_array, is_device_array
from poly.core.tensors.fit_shape import try_match_shape
from poly.core.tensors.per_output import warn_unknown_keys
from poly.core.util.sequences import default, find_str_in_iterable

__all__ = [
    "BaseCompareFunc", "default_find_output_func", "run_comparison", "metric_fields_for_func", "describe_array",
]


def describe_array(arr: Any) -> str:
    """``dtype=float32, shape=(1, 3)``: how log lines name an output's type and shape."""
    dtype = getattr(arr, "dtype", None)
    dtype_str = type(arr).__name__ if dtype is None else str(DataType.from_dtype(dtype))
    return f"dtype={dtype_str}, shape={tuple(int(d) for d in np.shape(arr))}"


def _pair_for_comparison(output0: Any, output1: Any) -> Any:
    if may_compare_on_device(output0, output1):  # the GPU path imported only for CUDA arrays
        from poly.compare.stats.gpu.device_output import device_outputs

        pair = device_outputs(output0, output1)
        if pair is not None:
            return pair
    return host_array(output0), host_array(output1)


def default_find_output_func(output_name: Any, index: Any, iter_result: Any, base_iter_result: Any) -> Any:
    """
    Finds the output of ``iter_result`` to compare with ``output_name`` (output ``index`` of
    ``base_iter_result``): the same name, else a loose (substring, case-insensitive) match, else
    the output at the same position. A loose match is refused when that name has an exact match
    of its own in ``base_iter_result``.

    Returns:
        List[str] or None: The names to compare against.
    """
    found = find_str_in_iterable(output_name, iter_result.keys(), index)
    if found is None:
        return None
    if found != output_name:
        exact = find_str_in_iterable(found, base_iter_result.keys())
        if exact == found:
            G_LOGGER.verbose(
                f"Will not compare {found} with {output_name}, since the former already has an exact match: {exact}"
            )
            return None
        G_LOGGER.warning(
            f"Output names did not match exactly. Assuming {iter_result.runner_name} output: {found} "
            f"corresponds to output: {output_name}"
        )
    return [found]


def run_comparison(func: Any, fail_fast: Any, iter_result0: Any, iter_result1: Any, find_output_func: Any, func_name: Any = None) -> Any:
    """
    Runs ``func(out0_name, output0, out1_name, output1)`` on every output of ``iter_result0`` and
    the output(s) ``find_output_func`` pairs it with, logging as Polygraphy does.

    Args:
        func (Callable): Compares one pair; returns a result whose truth is the verdict.
        fail_fast (bool): Stop at the first failed output.
        iter_result0, iter_result1 (IterationResult): The two runners' outputs.
        find_output_func (Callable(str, int, IterationResult) -> List[str]): The pairing.
        func_name (str): A label for the log lines (e.g. ``simple``, ``L2 Norm``).

    Returns:
        OrderedDict[str, Any]: output name of the first runner -> result.
    """
    label = f"{func_name} | " if func_name else ""
    output_status = OrderedDict()

    for index, (out0_name, output0) in enumerate(iter_result0.items()):
        # Two CUDA outputs stay on the device (their statistics are computed there, see
        # poly.compare.stats.gpu); anything else is compared as a host copy.
        raw0 = output0
        output0 = output0 if is_device_array(output0) else host_array(output0)
        out1_names = default(find_output_func(out0_name, index, iter_result1), [])
        if len(out1_names) > 1:
            G_LOGGER.info(
                f"Will attempt to compare output: '{out0_name}' [{iter_result0.runner_name}] with multiple "
                f"outputs: '{list(out1_names)}' [{iter_result1.runner_name}]"
            )
        for out1_name in out1_names:
            if out1_name is None or out1_name not in iter_result1:
                G_LOGGER.warning(
                    f"For output: '{out0_name}' [{iter_result0.runner_name}], skipping corresponding output: "
                    f"'{out1_name}' [{iter_result1.runner_name}], since the output was not found"
                )
                continue
            output0, output1 = _pair_for_comparison(raw0, iter_result1[out1_name])
            G_LOGGER.start(
                lambda o0=output0, o1=output1, n0=out0_name, n1=out1_name: f"{label}Comparing Output: '{n0}' "
                f"({describe_array(o0)}) with '{n1}' ({describe_array(o1)})"
            )
            with G_LOGGER.indent():
                result = func(out0_name, output0, out1_name, output1)
                if not isinstance(result, bool):
                    result.output0_name = out0_name
                    result.output1_name = out1_name
                output_status[out0_name] = result
                if fail_fast and not result:
                    return output_status

    mismatched = [name for name, matched in output_status.items() if not matched]
    if mismatched:
        G_LOGGER.error(f"FAILED | {label}Mismatched outputs: {mismatched}")
    else:
        G_LOGGER.finish(f"PASSED | {label}All outputs matched | Outputs: {list(output_status.keys())}")

    if not output_status and (list(iter_result0.keys()) or list(iter_result1.keys())):
        G_LOGGER.critical(
            f"All outputs were skipped, no common outputs found! Note: "
            f"{iter_result0.runner_name} outputs: {list(iter_result0.keys())}, "
            f"{iter_result1.runner_name} outputs: {list(iter_result1.keys())}"
        )
    return output_status


def metric_fields_for_func(func: Any) -> Any:
    """
    The metric fields a comparison function's thresholds check: None when the function has no
    ``thresholds_for`` at all (a plain function), ``[]`` when it has no averageable metric.
    """
    thresholds_for = getattr(func, "thresholds_for", None)
    if thresholds_for is None:
        return None
    try:
        return list(thresholds_for("").metric_fields())
    except NotImplementedError:
        return []


class BaseCompareFunc:
    """
    Base class of comparison functions: ``func(iter_result0, iter_result1)`` returns an
    ``OrderedDict`` of output name -> result (anything with a truth value).

    A function that sets ``_RESULT_CLASS`` and implements ``thresholds_for`` supports averaged
    checks (``compare_accuracy(check_average=True)``) and re-checking saved results.
    """

    _RESULT_CLASS: Any = None
    _SUMMARY_LABEL: Any = None

    check_shapes = True
    fail_fast = False
    find_output_func: Any = None

    def __call__(self, iter_result0: Any, iter_result1: Any) -> Any:
        raise NotImplementedError()

    def thresholds_for(self, output_name: Any) -> Any:
        """The ``Threshold`` that output ``output_name`` is checked against."""
        raise NotImplementedError()

    def _summary_label(self) -> Any:
        return self._SUMMARY_LABEL

    @staticmethod
    def _warn_on_unknown_keys(option: Any, option_name: Any, valid_keys: Any) -> None:
        warn_unknown_keys(option, option_name, valid_keys)

    def _align_shapes(self, out0_name: Any, output0: Any, output1: Any) -> Any:
        """
        Returns the pair made to agree in shape, or None (after logging the failure) when
        ``check_shapes`` is on and the shapes differ, or when no reshape or transpose fits.
        """
        if is_device_output(output0) and is_device_output(output1) and output0.shape == output1.shape:
            return output0, output1  # nothing to align: both stay on the device
        output0, output1 = np.asarray(output0), np.asarray(output1)
        shape0, shape1 = output0.shape, output1.shape
        if self.check_shapes and shape0 != shape1:
            G_LOGGER.error(
                f"FAILED | Output: `{out0_name}` | Will not compare outputs of different shapes.\n"
                f"Note: Output shapes are {shape0} and {shape1}."
            )
            G_LOGGER.error(
                "Note: Use --no-shape-check or set check_shapes=False to attempt to compare values anyway.",
                mode=LogMode.ONCE,
            )
            return None
        output1 = try_match_shape(output1, shape0)
        if output0.shape != output1.shape:
            try:
                output0 = output0.reshape(output1.shape)
            except ValueError:
                G_LOGGER.error(
                    f"FAILED | Output: `{out0_name}` | Cannot compare outputs of shapes {shape0} and {shape1}: "
                    f"no transpose or reshape makes them agree."
                )
                return None
        return output0, output1

    def _run_comparison(self, iter_result0: Any, iter_result1: Any, match: Any) -> Any:
        if not self.check_shapes:
            G_LOGGER.info(
                "Strict shape checking disabled. Will attempt to match output shapes before comparisons",
                mode=LogMode.ONCE,
            )
        find_output_func = default(
            self.find_output_func, functools.partial(default_find_output_func, base_iter_result=iter_result0)
        )
        return run_comparison(
            match, self.fail_fast, iter_result0, iter_result1, find_output_func, func_name=self._summary_label()
        )
