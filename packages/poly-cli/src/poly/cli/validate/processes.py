"""
`poly validate --processes N`: the validation spread over N worker processes on this machine.

Threads in one process share one interpreter lock: reading the sample files, the runner's
Python side and the accumulator hold it, and at some hundreds of samples per second per core
that lock, not the CPUs, sets the pace. Processes do not share it. Each worker process holds
its own loaded runner (one ONNX-Runtime session sized to its share of the CPUs) in a
``ValidationWorker`` and validates batches of work items; ``BatchEngine`` merges their
accumulators, so the report is the one a run in one process gives on the same data.

At most two batches per worker are in flight, so memory stays bounded. Ctrl-C stops the
workers and returns what was merged so far; ``max_failures`` stops handing out batches.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import click

from poly.cli.validate.engine import BatchEngine
from poly.compare.dataset import ValidationWorker
from poly.core import lazy_import

__all__ = ["ProcessEngine", "processes_supported"]

_worker: Any = None  # this worker process's ValidationWorker


def _start_worker(kwargs: Any, cpus: Any, next_cpu: Any) -> None:
    """Builds this worker's ValidationWorker; with ``cpus``, first binds the worker to the next
    of them (``next_cpu`` counts the workers started)."""
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if cpus:
        with next_cpu.get_lock():
            slot = next_cpu.value
            next_cpu.value += 1
        try:
            os.sched_setaffinity(0, {cpus[slot % len(cpus)]})
        except (AttributeError, OSError):  # no affinity here (macOS): the scheduler places it
            pass
    _worker = ValidationWorker(**kwargs)


def _validate(rows: dict) -> bytes:
    return pickle.dumps(_worker.validate(rows))


def _rows(items: list) -> dict:
    rows = [item.to_row() for item in items]
    return {key: [row[key] for row in rows] for key in rows[0]} if rows else {}


def processes_supported() -> bool:
    """Worker processes start by fork (the runners are handed over as they are, not pickled)."""
    return "fork" in multiprocessing.get_all_start_methods()


class ProcessEngine(BatchEngine):
    """
    Args:
        processes (int): Worker processes. Defaults to 2.
        items_per_task (int): Work items per batch at least (a large dataset gets up to 16 times
                more, about an eighth of a worker's share). Defaults to 8.
    """

    flag = "--processes"
    batches_per_worker = 8

    def __init__(self, processes: int = 2, items_per_task: int = 8) -> None:
        super().__init__(processes, items_per_task)
        self._pool: Any = None
        self._pending: set[Any] = set()

    def check_dataset(self, sources: Any) -> None:
        if not processes_supported():
            raise click.UsageError("--processes needs worker processes started by fork (Linux, macOS); "
                                   "use --workers and --infer-threads here.")
        dataset = sources.dataset
        if sources.data_loader_script or len(dataset) != 1 or not os.path.isdir(dataset[0]):
            raise click.UsageError("With --processes, give --dataset as one local directory of sample files "
                                   "(.npz, .json).")

    def session_options(self, runners: Any, onnxrt: Any) -> Any:
        """One inference at a time per process, its session pool sized to the process's share of
        the CPUs."""
        if "onnxrt" not in runners.names:
            return None
        from poly.onnx.runners import usable_cpus

        options = lazy_import("onnxruntime").SessionOptions()
        options.intra_op_num_threads = max(1, usable_cpus() // self.workers)
        options.inter_op_num_threads = 1
        return options

    def describe(self) -> str:
        return f" | {self.workers} processes"

    def width(self) -> dict[Any, Any]:
        return {"processes": self.workers}

    def start_workers(self, worker_kwargs: Any, count: Any) -> None:
        # As many workers as CPUs (or more): each has one CPU to itself, bound to it (no
        # migrations), and runs its samples in turn (threads would only take turns on it).
        from poly.onnx.runners import usable_cpu_ids

        cpus = usable_cpu_ids()
        one_each = count >= len(cpus)
        worker_kwargs = {**worker_kwargs, "threaded": not one_each}
        context = multiprocessing.get_context("fork")
        self._pool = ProcessPoolExecutor(max_workers=count, mp_context=context, initializer=_start_worker,
                                         initargs=(worker_kwargs, cpus if one_each else None, context.Value("i", 0)))
        self._pending = set()

    def map_batches(self, batches: Any) -> Iterator[Any]:
        batches = iter(batches)
        merged = 0

        def hand_out() -> None:
            batch = next(batches, None)
            if batch is not None:
                self._pending.add(self._pool.submit(_validate, _rows(batch)))

        for _ in range(2 * self.workers):
            hand_out()
        while self._pending:
            done, _ = wait(self._pending, return_when=FIRST_COMPLETED)
            for future in done:
                self._pending.discard(future)
                try:
                    part = pickle.loads(future.result())
                except BrokenProcessPool as err:
                    raise RuntimeError("a validation worker process died (killed, or out of memory); "
                                       f"{merged} samples were merged before") from err
                merged += part.samples
                yield part
                hand_out()

    def stop_workers(self, aborted: Any) -> None:
        for future in self._pending:
            future.cancel()
        if aborted:
            for child in multiprocessing.active_children():  # their batches are not wanted any more
                child.terminate()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._pending = set()
        self._pool = None
