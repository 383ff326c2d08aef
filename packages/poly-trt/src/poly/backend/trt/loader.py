"""Polygraphy-compatible import path `poly.backend.trt.loader`: re-exports the `poly.trt` modules that hold
what Polygraphy keeps there (`poly.trt.networks`: creation, network_postprocess, modify_network,
layer_precisions, plugins, onnx_like; `poly.trt.engines.loaders`)."""

from poly.trt.engines import loaders as engine
from poly.trt.engines.loaders import *  # noqa: F401,F403
from poly.trt.networks import creation as network
from poly.trt.networks import layer_precisions, modify_network, network_postprocess, onnx_like, plugins
from poly.trt.networks.creation import *  # noqa: F401,F403
from poly.trt.networks.layer_precisions import *  # noqa: F401,F403
from poly.trt.networks.modify_network import *  # noqa: F401,F403
from poly.trt.networks.network_postprocess import *  # noqa: F401,F403
from poly.trt.networks.onnx_like import *  # noqa: F401,F403
from poly.trt.networks.plugins import *  # noqa: F401,F403

__all__ = [*network.__all__, *network_postprocess.__all__, *modify_network.__all__, *layer_precisions.__all__, *engine.__all__, *plugins.__all__, *onnx_like.__all__]
