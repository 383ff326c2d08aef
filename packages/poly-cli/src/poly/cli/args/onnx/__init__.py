"""The ONNX option groups: loading, saving, shape inference, ONNX-Runtime sessions, plugins and sharding hints."""
