"""Polygraphy-compatible import path `poly.util.array`: operations on NumPy arrays and PyTorch
tensors alike. The code lives in `poly.core.array_ops`; this module only re-exports it."""

from poly.core.array_ops import *  # noqa: F401,F403
from poly.core.array_ops import __all__  # noqa: F401
