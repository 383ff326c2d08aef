"""
``poly.debug.mixed_precision``: which nodes of an ONNX model must stay float32 for its float16
conversion to keep accuracy (``poly convert --fp-to-fp16 --keep-accuracy``,
``poly debug precision --onnxrt``). ``search`` holds ``MixedPrecisionSearch`` (measured
sensitivity ranking, prefix search, minimization to a 1-minimal set) and its result.
"""

from poly.debug.mixed_precision import search
from poly.debug.mixed_precision.search import *  # noqa: F401,F403

__all__ = [*search.__all__]
