"""Polygraphy-compatible import path: `polygraphy.tools.sparse` becomes `poly.tools.sparse`
(`SparsityPruner`, `PruneInfo`); the code lives in `poly.onnx.surgery.sparsity`."""

from poly.onnx.surgery.sparsity import *  # noqa: F401,F403
from poly.onnx.surgery.sparsity import __all__  # noqa: F401
