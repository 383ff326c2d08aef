"""Polygraphy-compatible import path `poly.util.array`: operations on NumPy arrays and PyTorch
tensors alike. The code lives in `poly.core.arrays.ops`; this module only re-exports it."""

from poly.core.arrays.ops import *  # noqa: F401,F403
from poly.core.arrays.ops import __all__  # noqa: F401
