"""Arrays and data types: ``DataType`` and its conversions, the dtype and shape of any library's
arrays, operations shared by NumPy arrays and torch tensors, copies to the host, and
``FormattedArray``. The names are exported by ``poly.core``; this package holds no code."""
