"""
`poly validate --processes N`: the validation spread over N worker processes on this machine.

Threads in one process share one interpreter lock: reading the sample files, the runner's
Python side and the accumulator hold it, and at some hundreds of samples per second per core
that lock, not the CPUs, sets the pace. Processes do not share it. Each worker process holds
its own loaded runner (one ONNX-Runtime session sized to its share of the CPUs) and validates
batches of sample files with the local pipeline; this process merges their accumulators, so
the report is the one a run in one process gives on the same data.

At most two batches per worker are in flight, so memory stays bounded. Ctrl-C stops the
workers and returns what was merged so far; ``max_failures`` stops handing out batches.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from poly.cli.validate_ray.work_items import WorkItem, items_per_batch
from poly.cli.validate_ray.worker import ValidationWorker
from poly.compare.dataset import Accumulator, DirectoryDataset, ValidationOutcome

__all__ = ["ProcessValidation", "local_work_items", "processes_supported"]

_worker = None  # this worker process's ValidationWorker


def _start_worker(kwargs):
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _worker = ValidationWorker(**kwargs)


def _validate(rows: dict) -> bytes:
    return pickle.dumps(_worker.validate(rows))


def processes_supported() -> bool:
    """Worker processes start by fork (the runners are handed over as they are, not pickled)."""
    return "fork" in multiprocessing.get_all_start_methods()


def local_work_items(directory) -> list[WorkItem]:
    """One work item per sample file of a local dataset directory, numbered in file-name order
    as a run in one process numbers them."""
    files = DirectoryDataset(directory).files()
    return [WorkItem(i, os.path.join(os.fspath(directory), name)) for i, name in enumerate(files)]


def _rows(items: list[WorkItem]) -> dict:
    return {"index": [i.index for i in items], "path": [i.path for i in items],
            "row_group": [i.row_group for i in items]}


class ProcessValidation:
    """
    Validates ``runner`` over the sample files of ``dataset`` with ``processes`` worker processes.

    Args:
        runner (BaseRunner): The runner under test, not active; each worker activates its own.
        dataset (str): A local directory of sample files (.npz, .json).
        checker (SampleChecker): The per-sample verdict.
        golden (str): A directory of golden outputs named as the samples; or None with
                ``reference_runner``.
        reference_runner (BaseRunner): A second runner producing the golden outputs.
        processes (int): Worker processes. Defaults to 2.
        items_per_task (int): Sample files per batch at least (a large dataset gets up to 16 times
                more, about an eighth of a worker's share). Defaults to 8.
        max_failures (int): Stop once this many samples failed. Defaults to None (never).
        worst_k (int): Worst samples kept. Defaults to 10.
        batch (int): Samples stacked per inference where the model allows it. Defaults to 1.
        progress (Callable[[Accumulator, float], None]): Called after each merged batch.
    """

    def __init__(self, runner, dataset, checker, golden=None, reference_runner=None, processes=2, items_per_task=8,
                 max_failures=None, worst_k=10, batch=1, progress=None):
        if (golden is None) == (reference_runner is None):
            raise ValueError("give either golden or reference_runner")
        self.worker_kwargs = {"runner": runner, "checker": checker, "golden": golden,
                              "reference_runner": reference_runner, "worst_k": worst_k, "batch": batch}
        self.dataset = dataset
        self.processes = max(1, int(processes))
        self.items_per_task = max(1, int(items_per_task))
        self.max_failures = max_failures
        self.worst_k = worst_k
        self.progress = progress

    def run(self) -> ValidationOutcome:
        """Runs to the end of the dataset, ``max_failures`` or a KeyboardInterrupt, and returns
        the merged outcome (never raises KeyboardInterrupt). A worker that fails to start (its
        runner cannot load) raises that error; a worker killed mid-run raises RuntimeError."""
        items = local_work_items(self.dataset)
        if not items:
            raise ValueError(f"--dataset '{self.dataset}' holds no sample files (.npz, .json)")
        # Batches of about an eighth of a worker's share: the per-batch cost (pickling an
        # accumulator) stays small, and the workers finish together.
        per_task = items_per_batch(len(items), self.items_per_task, self.processes, 8)
        batches = iter([items[i:i + per_task] for i in range(0, len(items), per_task)])
        acc = Accumulator(worst_k=self.worst_k)
        interrupted = stopped_early = False
        start = time.perf_counter()
        pool = ProcessPoolExecutor(max_workers=self.processes, mp_context=multiprocessing.get_context("fork"),
                                   initializer=_start_worker, initargs=(self.worker_kwargs,))
        pending = set()

        def hand_out():
            batch = next(batches, None)
            if batch is not None:
                pending.add(pool.submit(_validate, _rows(batch)))

        try:
            for _ in range(2 * self.processes):
                hand_out()
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    pending.discard(future)
                    try:
                        blob = future.result()
                    except BrokenProcessPool as err:
                        raise RuntimeError("a validation worker process died (killed, or out of memory); "
                                           f"{acc.samples} samples were merged before") from err
                    acc.merge(pickle.loads(blob))
                if self.progress is not None:
                    self.progress(acc, time.perf_counter() - start)
                if self.max_failures is not None and acc.failed >= self.max_failures:
                    stopped_early = True
                    break
                for _ in done:
                    hand_out()
        except KeyboardInterrupt:
            interrupted = True
        finally:
            for future in pending:
                future.cancel()
            if interrupted or stopped_early:
                for child in multiprocessing.active_children():  # their batches are not wanted any more
                    child.terminate()
            pool.shutdown(wait=True, cancel_futures=True)
        return ValidationOutcome(acc, time.perf_counter() - start, interrupted=interrupted,
                                 stopped_early=stopped_early, max_failures=self.max_failures)
