"""Checks on Python scalars: ``is_nan`` and ``is_inf`` (False for anything but a float)."""

import math
from typing import Any

__all__ = ["is_nan", "is_inf"]


def is_nan(obj: Any) -> Any:
    """Whether ``obj`` is a float NaN."""
    return isinstance(obj, float) and math.isnan(obj)


def is_inf(obj: Any) -> Any:
    """Whether ``obj`` is a float infinity."""
    return isinstance(obj, float) and math.isinf(obj)
