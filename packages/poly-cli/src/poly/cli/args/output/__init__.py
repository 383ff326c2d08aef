"""The output option groups: post-processing of outputs (--postprocess)."""
