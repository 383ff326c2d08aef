"""
poly.trt.execution: running engines: ``TrtRunner`` (``runner``), execution contexts and their
device memory and weight streaming (``context_memory``), binding input shapes and tensor addresses
(``tensor_binding``), outputs of data-dependent size (``output_allocator``) and device arrays
handed over as inputs (``device_arrays``).

Re-exports nothing (see ``poly.trt.networks``): import from ``poly.trt`` or the module.
"""
