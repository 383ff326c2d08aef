#!/usr/bin/env bash
# Runs the GPU suites on the lent GPU machine in one call: the native device buffers
# (tests/core/test_core_cuda.py; tests/core/test_core_memory_ownership.py, the ownership rule
# with a recording allocator), TrtRunner's execution path against an execution-context double
# on real device memory (tests/trt/test_trt_runner_double.py, tests/trt/test_trt_tensor_binding.py),
# and the calibrator's device feeding (tests/trt/test_trt_calibrator.py); Polygraphy's CUDA API
# (tests/core/test_core_cuda_arrays.py) and TrtRunner's allocation strategies, weight streaming
# and FileReader (tests/trt/test_trt_context_memory.py; these need onnx and TensorRT there); torch
# tensors (CPU and CUDA) and CuPy arrays in comparisons and JSON (tests/core/test_core_host_arrays.py), PytRunner on a
# torch module (tests/core/test_core_pyt_runner.py); the
# on-device error statistics against the CPU engine (tests/compare/test_compare_gpu_stats.py, which needs
# cuda-python: wheels in .devcarry-gpu/ are installed when present). It builds poly-core
# there with the machine's own pybind11/scikit-build-core/cmake (it has no network) and puts the
# pure packages on PYTHONPATH. Output goes to $OUT/cuda_tests.log when $OUT is set (the device
# tool's result folder).
set -euo pipefail
cd "$(dirname "$0")/.."
log="${OUT:-/tmp}/cuda_tests.log"
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader || true
  python3 -m pip install -q --no-build-isolation --no-deps --no-index ./packages/poly-core
  if compgen -G ".devcarry-gpu/*.whl" >/dev/null; then python3 -m pip install -q --no-deps --no-index .devcarry-gpu/*.whl; fi
  export PYTHONPATH="$PWD/packages/poly-compare/src:$PWD/packages/poly-onnx/src:$PWD/packages/poly-trt/src:$PWD/packages/poly-debug/src${PYTHONPATH:+:$PYTHONPATH}"
  python3 -c "from poly.core import cuda; print('cuda available:', cuda.cuda_available(), 'driver', cuda.cuda_driver_version())"
  python3 -m pytest -q -p no:cacheprovider -o addopts="" -rs \
    tests/core/test_core_cuda.py tests/core/test_core_memory_ownership.py tests/trt/test_trt_runner_double.py \
    tests/trt/test_trt_calibrator.py tests/trt/test_trt_tensor_binding.py tests/core/test_core_cuda_arrays.py \
    tests/trt/test_trt_context_memory.py tests/core/test_core_host_arrays.py tests/compare/test_compare_gpu_stats.py \
    tests/compare/test_compare_torch_results.py tests/trt/test_trt_debug_tensors.py tests/trt/test_trt_layer_map.py \
    tests/trt/test_trt_localize.py tests/core/test_core_pyt_runner.py "$@"
} 2>&1 | tee "$log"
