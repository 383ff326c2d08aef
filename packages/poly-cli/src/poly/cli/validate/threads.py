"""
The default engine of `poly validate`: the in-process pipeline (``ValidationPipeline``), with
``--workers`` comparison threads and ``--infer-threads`` inferences side by side, each
ONNX-Runtime session's thread pool sized to its share of the CPUs.
"""

from __future__ import annotations

from typing import Any

from poly.cli.validate.engine import ValidationEngine
from poly.compare.dataset import ListedDataset, ValidationPipeline
from poly.core import lazy_import

__all__ = ["ThreadEngine"]


class ThreadEngine(ValidationEngine):
    """
    Args:
        workers (int): Comparison threads.
        prefetch (int): Samples read ahead of inference.
        infer_threads (int): Inferences run side by side; None: 2 for ONNX-Runtime on the CPU
                with at least 2 CPUs, else 1 (resolved by ``session_options``).
    """

    flag = "--workers"

    def __init__(self, workers: int = 2, prefetch: int = 8, infer_threads: int | None = None) -> None:
        self.workers = workers
        self.prefetch = prefetch
        self.infer_threads = infer_threads

    def session_options(self, runners: Any, onnxrt: Any) -> Any:
        """Resolves --infer-threads' default; ONNX-Runtime sessions whose thread pools share the
        CPUs among the inference threads (None with one)."""
        from poly.onnx.runners import usable_cpus

        if self.infer_threads is None:
            all_ort = all(name == "onnxrt" for name in runners.names)
            self.infer_threads = 2 if all_ort and onnxrt.cpu_only and usable_cpus() >= 2 else 1
        if self.infer_threads <= 1 or "onnxrt" not in runners.names:
            return None
        options = lazy_import("onnxruntime").SessionOptions()
        options.intra_op_num_threads = max(1, usable_cpus() // self.infer_threads)
        options.inter_op_num_threads = 1
        return options

    def width(self) -> dict[Any, Any]:
        return {"workers": self.workers}

    def run(self, job: Any) -> Any:
        if isinstance(job.samples, ListedDataset) and job.samples.inputs is None:
            # read when a .npy or Parquet sample needs it, once the pipeline activated the runner
            job.samples.inputs = job.runner.get_input_metadata
        pipeline = ValidationPipeline(job.runner, job.samples, job.reference, job.checker, workers=self.workers,
                                      max_failures=job.max_failures, prefetch=self.prefetch, batch=job.batch,
                                      worst_k=job.worst_k, progress=job.progress,
                                      infer_threads=self.infer_threads or 1)
        return pipeline.run()
