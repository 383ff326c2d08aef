"""
poly.trt.inspection: reading what TensorRT makes of a model, for ``poly inspect``: text summaries
of engines (``engine_summary``) and networks (``network_summary``), which parts of an ONNX
model the ONNX parser supports (``onnx_capability``), and which engine layers each ONNX node
ended up in (``layer_map``: ``LayerMap``, ``map_layers_to_nodes``, ``map_engine_layers``).

Re-exports nothing (see ``poly.trt.networks``): import from ``poly.trt`` or the module.
"""
