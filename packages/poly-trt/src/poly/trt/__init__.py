"""poly.trt (in development)."""
