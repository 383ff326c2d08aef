"""Error statistics of CUDA arrays computed on their GPU (NVRTC-compiled kernels, cuda-python)."""

from poly.compare.stats.gpu.device_output import DeviceOutput, device_outputs, has_zero
from poly.compare.stats.gpu.device_run import drop_run_graphs, kept_run_graphs, transfer_counter
from poly.compare.stats.gpu.dispatch import cuda_operand, device_count_zeros, device_error_stats, gpu_ready
from poly.compare.stats.gpu.kernel_images import cache_dir

__all__ = ["DeviceOutput", "device_outputs", "has_zero", "cuda_operand", "device_count_zeros", "device_error_stats",
           "gpu_ready", "transfer_counter", "cache_dir", "drop_run_graphs", "kept_run_graphs"]
