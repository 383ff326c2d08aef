"""Polygraphy-compatible import path `poly.common.struct`: tensor metadata, bounded shapes and
formatted arrays, from `poly.core.metadata`, `poly.core.shape` and `poly.core.formatted_array`."""

from poly.core import formatted_array, metadata
from poly.core.formatted_array import *  # noqa: F401,F403
from poly.core.metadata import *  # noqa: F401,F403
from poly.core.shape import BoundedShape  # noqa: F401

__all__ = [*metadata.__all__, *formatted_array.__all__, "BoundedShape"]
