"""
poly.trt.inspection: reading what TensorRT makes of a model, for ``poly inspect``: text summaries
of engines (``engine_summary``) and networks (``network_summary``), and which parts of an ONNX
model the ONNX parser supports (``onnx_capability``).

Re-exports nothing (see ``poly.trt.networks``): import from ``poly.trt`` or the module.
"""
