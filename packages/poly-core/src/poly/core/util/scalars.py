"""Checks on Python scalars: ``is_nan`` and ``is_inf`` (False for anything but a float)."""

import math

__all__ = ["is_nan", "is_inf"]


def is_nan(obj):
    """Whether ``obj`` is a float NaN."""
    return isinstance(obj, float) and math.isnan(obj)


def is_inf(obj):
    """Whether ``obj`` is a float infinity."""
    return isinstance(obj, float) and math.isinf(obj)
