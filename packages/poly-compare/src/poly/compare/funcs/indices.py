"""``IndicesCompareFunc``: compares outputs that hold indices (Top-K results) by position."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from poly.compare.funcs.base import BaseCompareFunc, default_find_output_func, run_comparison
from poly.core import G_LOGGER
from poly.core.arrays.host import host_array
from poly.core.tensors.per_output import value_or_from_dict
from poly.core.util.sequences import default

__all__ = ["IndicesCompareFunc"]


class IndicesCompareFunc(BaseCompareFunc):
    """
    Compares two ``IterationResult`` s holding indices, e.g. Top-K outputs: each value of the first
    output must appear in the second within ``index_tolerance`` positions. The last dimension holds
    the values; leading dimensions are batches.
    """

    _SUMMARY_LABEL = "indices"

    def __init__(self, index_tolerance: Any = None, fail_fast: Any = None) -> None:
        """
        Args:
            index_tolerance (Union[int, Dict[str, int]]):
                    How far apart (in positions) a value may be in the two outputs. With
                    ``[0, 1, 2]`` against ``[1, 0, 2]`` a tolerance of 1 passes and 0 fails.
                    The last ``index_tolerance`` values of each batch of the first output are
                    not checked (compare a Top-(K + tolerance) to compensate). Per output as a
                    dict with ``""`` as the default. Defaults to 0.
            fail_fast (bool): Stop at the first failure. Defaults to False.
        """
        self.index_tolerance = default(index_tolerance, 0)
        self.fail_fast = default(fail_fast, False)

    def _match_batch(self, vals0: np.ndarray, vals1: np.ndarray, tolerance: int) -> bool:
        if tolerance > 0:
            vals0 = vals0[:-tolerance]
        if vals0.size == 0:
            return True
        # Positions where the values already agree need no search.
        differ = np.flatnonzero(vals0 != vals1[: vals0.size])
        passed = True
        for index0 in differ:
            val0 = vals0[index0]
            found = np.flatnonzero(vals1 == val0)
            if found.size < 1:
                G_LOGGER.error(f"FAILED | Value: {val0} not found in output")
            elif abs(int(found[0]) - int(index0)) > tolerance:
                G_LOGGER.error(f"FAILED | Difference exceeds index tolerance ({tolerance})")
            else:
                continue
            passed = False
            if self.fail_fast:
                return False
        return passed

    def __call__(self, iter_result0: Any, iter_result1: Any) -> Any:
        """
        Returns:
            OrderedDict[str, bool]: By output name of ``iter_result0``, whether it matched.
        """

        def match(out0_name: Any, output0: Any, out1_name: Any, output1: Any) -> Any:
            tolerance = value_or_from_dict(self.index_tolerance, out0_name, 0)
            output0, output1 = host_array(output0), host_array(output1)
            if output0.shape != output1.shape:
                G_LOGGER.error("Cannot compare outputs of different shapes.")
                return False

            passed = True
            if output0.ndim == 0:
                output0, output1 = output0.reshape(1), output1.reshape(1)
            for batch in np.ndindex(output0.shape[:-1]):
                if not self._match_batch(output0[batch], output1[batch], tolerance):
                    passed = False
                    if self.fail_fast:
                        return False
            if passed:
                G_LOGGER.finish(f"PASSED | Difference is within index tolerance ({tolerance})")
            return passed

        return run_comparison(
            match,
            self.fail_fast,
            iter_result0,
            iter_result1,
            functools.partial(default_find_output_func, base_iter_result=iter_result0),
            func_name=self._summary_label(),
        )
