"""Polygraphy-compatible import path `poly.common.struct`: tensor metadata, bounded shapes and
formatted arrays, from `poly.core.tensors.metadata`, `poly.core.tensors.shape` and
`poly.core.arrays.formatted_array`."""

from poly.core.arrays import formatted_array
from poly.core.arrays.formatted_array import *  # noqa: F401,F403
from poly.core.tensors import metadata
from poly.core.tensors.metadata import *  # noqa: F401,F403
from poly.core.tensors.shape import BoundedShape  # noqa: F401

__all__ = [*metadata.__all__, *formatted_array.__all__, "BoundedShape"]
