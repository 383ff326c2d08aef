"""Shapes with dynamic dimensions: a dimension is dynamic when it is negative, None or a name."""

import numbers
from typing import Any

import poly.core.constants as constants

__all__ = [
    "BoundedShape",
    "is_dimension_dynamic",
    "is_shape_dynamic",
    "is_valid_shape_override",
    "override_dynamic_shape",
    "volume",
    "is_empty_shape",
    "num_dynamic_dimensions",
]


class BoundedShape(list):  # type: ignore[type-arg]
    """A shape (a list of dimensions) with optional ``min`` and ``max`` bounds."""

    def __init__(self, shape: Any, min: Any = None, max: Any = None) -> None:
        """
        Args:
            shape (Sequence[Union[int, str, None]]): The dimensions.
            min (Sequence[int]): The smallest valid shape, if known.
            max (Sequence[int]): The largest valid shape, if known.
        """
        super().__init__(shape)
        self.min = min
        self.max = max

    def __repr__(self) -> str:
        return f"BoundedShape({list(self)}, min={self.min}, max={self.max})"


def is_dimension_dynamic(dim: Any) -> bool:
    """Whether ``dim`` is dynamic: None, a string (a named dimension) or a negative integer."""
    if dim is None or isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        return True
    return dim < 0


def is_shape_dynamic(shape: Any) -> bool:
    """Whether any dimension of ``shape`` is dynamic."""
    return any(is_dimension_dynamic(dim) for dim in shape)


def is_valid_shape_override(new_shape: Any, original_shape: Any) -> bool:
    """
    Whether the concrete ``new_shape`` fits ``original_shape``: same rank, and equal in every
    dimension that is not dynamic in ``original_shape``.
    """
    new_shape, original_shape = list(new_shape), list(original_shape)
    if len(new_shape) != len(original_shape):
        return False
    return all(
        is_dimension_dynamic(odim) or odim == ndim
        for odim, ndim in zip(original_shape, new_shape, strict=True)
    )


def override_dynamic_shape(shape: Any, default_shape_value: Any = None) -> list[Any]:
    """
    Returns ``shape`` with every dynamic dimension replaced by ``default_shape_value``
    (``constants.DEFAULT_SHAPE_VALUE``, 1, when None).
    """
    value = constants.DEFAULT_SHAPE_VALUE if default_shape_value is None else default_shape_value
    return [value if is_dimension_dynamic(dim) else dim for dim in shape]


def volume(shape: Any) -> Any:
    """The number of elements of a concrete ``shape``."""
    result = 1
    for dim in shape:
        result *= dim
    return result


def is_empty_shape(shape: Any) -> Any:
    """Whether a concrete ``shape`` holds no elements (some dimension is 0)."""
    return volume(shape) == 0


def num_dynamic_dimensions(shape: Any) -> Any:
    """How many dimensions of ``shape`` are dynamic."""
    return sum(1 for dim in shape if is_dimension_dynamic(dim))
