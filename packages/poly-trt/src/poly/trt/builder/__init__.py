"""
poly.trt.builder: what configures a TensorRT build: the builder configuration (``config``, and
``config_rtx`` for TensorRT-RTX's build targets, ``config_postprocess``), optimization profiles
(``profile``), INT8 calibrators (``calibrator``), timing caches (``timing_cache``), and tactic
recording and replay (``tactic_selectors``, with the replay file format in ``tactics``).

Re-exports nothing (see ``poly.trt.networks``): import from ``poly.trt`` or the module.
"""
