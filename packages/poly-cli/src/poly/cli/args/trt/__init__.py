"""The TensorRT option groups: network creation and edits, builder configuration and flags, config and network scripts, runtime."""
