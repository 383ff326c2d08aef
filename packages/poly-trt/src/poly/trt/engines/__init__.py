"""
poly.trt.engines: TensorRT engines and their files: building a serialized engine from a network,
deserializing, serializing and saving engines (``loaders``), and streaming an engine file to the
deserializer (``file_reader``).

Re-exports nothing (see ``poly.trt.networks``): import from ``poly.trt`` or the module.
"""
