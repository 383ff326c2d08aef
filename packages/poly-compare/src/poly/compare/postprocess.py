"""Post-processing of outputs before comparison: ``PostprocessFunc.top_k``."""

from __future__ import annotations

from typing import Any

import numpy as np

from poly.core.arrays.host import host_array
from poly.core.tensors.per_output import value_or_from_dict
from poly.core.util.sequences import default

__all__ = ["BasePostprocessFunc", "TopKPostprocessFunc", "PostprocessFunc", "topk"]


def topk(arr: Any, k: int, axis: int = -1) -> tuple[Any, ...]:
    """
    The ``k`` largest values along ``axis`` (``k`` clamped to the axis length), largest first, with
    ties in index order.

    Returns:
        Tuple[numpy.ndarray, numpy.ndarray]: The values and their indices.
    """
    arr = host_array(arr)
    # Sorting the negation with a stable sort keeps equal values in index order.
    # (Unsigned and bool data cannot be negated, so they are reflected instead.)
    if arr.dtype == np.bool_:
        negated = ~arr
    elif arr.dtype.kind == "u":
        negated = np.iinfo(arr.dtype).max - arr
    else:
        negated = -arr
    indices = np.argsort(negated, axis=axis, kind="stable")
    indices = np.take(indices, np.arange(min(int(k), indices.shape[axis])), axis=axis)
    return np.take_along_axis(arr, indices, axis=axis), indices


class BasePostprocessFunc:
    """Base class of post-processing functions: ``func(iter_result) -> IterationResult``."""

    def __call__(self, iter_result: Any) -> Any:
        raise NotImplementedError()


class TopKPostprocessFunc(BasePostprocessFunc):
    """Replaces each output with the indices of its ``k`` largest values."""

    def __init__(self, k: Any = None) -> None:
        """
        Args:
            k (Union[int, Tuple[int, int], Dict[str, Union[int, Tuple[int, int]]]]):
                    How many indices to keep, optionally with the axis: ``(5, 0)`` keeps the top 5
                    along axis 0 (default axis: -1). Per output as a dict with ``""`` as the
                    default; outputs a dict does not cover are left alone. Defaults to 10.
        """
        self.k = default(k, 10)

    def __call__(self, iter_result: Any) -> Any:
        """Post-processes ``iter_result`` in place and returns it."""
        for name, output in list(iter_result.items()):
            k_val = value_or_from_dict(self.k, name)
            if k_val:
                axis = -1
                if isinstance(k_val, (tuple, list)):
                    k_val, axis = k_val
                iter_result[name] = topk(output, k_val, axis)[1]
        return iter_result


class PostprocessFunc:
    """Factories of post-processing functions, for ``Comparator.postprocess``."""

    @staticmethod
    def top_k(k: Any = None) -> TopKPostprocessFunc:
        """A ``TopKPostprocessFunc``: each output becomes the indices of its ``k`` largest values."""
        return TopKPostprocessFunc(k=k)
