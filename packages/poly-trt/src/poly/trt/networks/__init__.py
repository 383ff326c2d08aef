"""
poly.trt.networks: TensorRT network definitions, from creation to the edits made before a build:
creating a network or parsing ONNX into one (``creation``), marking outputs (``modify_network``),
tensor datatypes, formats and debug marks (``network_postprocess``), layer precisions, plugin
libraries, the ONNX-like export of a network (``onnx_like``) and downcasting layers to their
concrete classes (``layer_classes``).

Like every folder of poly.trt, this package re-exports nothing: its modules import modules of the
other folders (and they import these), which a re-exporting ``__init__`` would turn into import
cycles. Import the public names from ``poly.trt``, or the others from their module.
"""
