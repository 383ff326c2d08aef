"""Polygraphy-compatible import path `poly.backend.trt.loader`: re-exports the `poly.trt` modules that hold
what Polygraphy keeps there (network, network_postprocess, modify_network, layer_precisions, engine, plugins, onnx_like)."""

from poly.trt import (
    engine,
    layer_precisions,
    modify_network,
    network,
    network_postprocess,
    onnx_like,
    plugins,
)
from poly.trt.engine import *  # noqa: F401,F403
from poly.trt.layer_precisions import *  # noqa: F401,F403
from poly.trt.modify_network import *  # noqa: F401,F403
from poly.trt.network import *  # noqa: F401,F403
from poly.trt.network_postprocess import *  # noqa: F401,F403
from poly.trt.onnx_like import *  # noqa: F401,F403
from poly.trt.plugins import *  # noqa: F401,F403

__all__ = [*network.__all__, *network_postprocess.__all__, *modify_network.__all__, *layer_precisions.__all__, *engine.__all__, *plugins.__all__, *onnx_like.__all__]
