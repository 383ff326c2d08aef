"""Files: crash-safe (atomic) writes and reads, ``.npy`` data read without trusting its header,
path helpers, lock files and temporary files. JSON lives in ``poly.core.json``. This package
holds no code."""
