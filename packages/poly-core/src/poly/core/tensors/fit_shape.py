"""Making an array fit another shape by transposing or reshaping it (comparisons without a
strict shape check, and inputs loaded for a model whose input shape differs)."""

from __future__ import annotations

from typing import Any

import numpy as np

from poly.core.logging.logger import G_LOGGER
from poly.core.tensors.shape import is_dimension_dynamic, is_shape_dynamic, volume

__all__ = ["try_match_shape"]


def _freeze(arr: np.ndarray, shape: list) -> list:  # type: ignore[type-arg]
    # Dynamic dimensions take what the array implies: with one dynamic dimension, whatever the
    # volume leaves over; with several, the array's own dimensions when the ranks agree.
    dynamic = [dim for dim in shape if is_dimension_dynamic(dim)]
    if len(dynamic) == 1:
        static = [dim for dim in shape if not is_dimension_dynamic(dim)]
        static_volume = volume(static)
        inferred = arr.size // static_volume if static_volume else 0
        return [inferred if is_dimension_dynamic(dim) else dim for dim in shape]
    if len(shape) == arr.ndim:
        return [arr.shape[i] if is_dimension_dynamic(dim) else dim for i, dim in enumerate(shape)]
    return shape


def _reshape(arr: np.ndarray, shape: list) -> np.ndarray:  # type: ignore[type-arg]
    original = arr.shape
    try:
        arr = np.ascontiguousarray(arr).reshape(shape)
    except (ValueError, TypeError):
        G_LOGGER.warning(f"Could not reshape array from shape: {original} to {tuple(shape)}. Skipping reshape.")
        return arr
    if arr.shape != original:
        G_LOGGER.info(f"Reshaped array from shape: {original} to: {arr.shape}")
    return arr


def _permute(arr: np.ndarray, shape: list) -> np.ndarray:  # type: ignore[type-arg]
    original = arr.shape
    if sorted(original) != sorted(shape):
        G_LOGGER.extra_verbose(f"Array of shape: {original} cannot be permuted to: {tuple(shape)}")
        return arr
    # Each target dimension takes the first unused axis of the same length.
    free = dict(enumerate(original))
    perm = []
    for dimlen in shape:
        axis = next(index for index, length in free.items() if length == dimlen)
        del free[axis]
        perm.append(axis)
    arr = np.transpose(arr, perm)
    if arr.shape != original:
        G_LOGGER.info(f"Permuted array of shape: {original} to: {arr.shape} using permutation {perm}")
    return arr


def try_match_shape(arr: np.ndarray, shape: Any) -> np.ndarray:
    """
    Tries to make ``arr`` take ``shape`` the way Polygraphy does, without failing: dynamic
    dimensions of ``shape`` are first fixed from the array; an array of another rank is
    reshaped; an array of the same rank whose dimensions are a permutation of ``shape`` is
    transposed; finally it is reshaped. Steps that cannot apply are skipped (with a warning),
    so the result may still have another shape.

    Args:
        arr (numpy.ndarray): The array.
        shape (Sequence[Union[int, str, None]]): The wanted shape; dynamic dimensions allowed.

    Returns:
        numpy.ndarray: ``arr`` itself when it already has ``shape``, else a view or copy.
    """
    arr = np.asarray(arr)
    shape = list(shape)
    if tuple(shape) == arr.shape:
        return arr
    if is_shape_dynamic(shape):
        shape = _freeze(arr, shape)
        if any(is_dimension_dynamic(dim) for dim in shape):
            return arr
    if arr.ndim != len(shape):
        arr = _reshape(arr, shape)
    if arr.ndim == len(shape):
        arr = _permute(arr, shape)
    return _reshape(arr, shape)
