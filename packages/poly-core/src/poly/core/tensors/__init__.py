"""Tensor descriptions: ``TensorMetadata`` (name -> dtype and shape), shapes with dynamic
dimensions (``BoundedShape``), fitting an array to a tensor's shape, and options given once or per
tensor name. The names are exported by ``poly.core``; this package holds no code."""
