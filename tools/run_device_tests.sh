#!/usr/bin/env bash
# Runs the CUDA suite (tests/core/test_core_cuda.py) on the lent GPU machine in one call:
# builds poly-core there with the machine's own pybind11/scikit-build-core/cmake (it has no
# network), installs it beside poly-compare, and runs pytest. Output goes to $OUT/cuda_tests.log
# when $OUT is set (the device tool's result folder).
set -euo pipefail
cd "$(dirname "$0")/.."
log="${OUT:-/tmp}/cuda_tests.log"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  python3 -m pip install -q --no-build-isolation --no-deps --no-index ./packages/poly-core
  export PYTHONPATH="$PWD/packages/poly-compare/src${PYTHONPATH:+:$PYTHONPATH}"
  python3 -c "from poly.core import cuda; print('cuda available:', cuda.cuda_available(), 'driver', cuda.cuda_driver_version())"
  python3 -m pytest -q -p no:cacheprovider tests/core/test_core_cuda.py -rs
} 2>&1 | tee "$log"
