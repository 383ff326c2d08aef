"""poly.onnx (in development)."""
