"""
The one contract of `poly validate`'s engines. An engine (threads in this process, worker
processes, Ray actors) declares the flags it cannot take (``check_usage``), the ONNX-Runtime
session options of the runners it runs (``session_options``), and runs a ``ValidationJob`` between
``start`` and ``stop`` (a context manager), returning one ``ValidationOutcome``. The command picks
an engine and drives it through this interface only.

``BatchEngine`` is the part the distributed engines share: the job's listed work items cut into
batches, handed to workers that each hold a ``ValidationWorker``, and their accumulators merged
into one as they return (progress, ``--max-failures`` and Ctrl-C handled once, here).
"""

from __future__ import annotations

import abc
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import click

from poly.compare.dataset import Accumulator, Dataset, Reference, ValidationOutcome, is_uri, items_per_batch

__all__ = ["ValidationSources", "ValidationJob", "ValidationEngine", "BatchEngine"]


@dataclass(frozen=True)
class ValidationSources:
    """Where a validation's samples and golden outputs come from, as given on the command line."""

    dataset: tuple[str, ...] = ()
    """--dataset: paths (or URIs, with --ray)."""
    data_loader_script: str | None = None
    """--data-loader-script: FILE[:FUNC]."""
    golden: tuple[str, ...] = ()
    """--golden: paths (or URIs, with --ray); empty with a second backend."""

    def describe(self) -> str:
        """The dataset, as the report's config names it."""
        return ", ".join(self.dataset) or self.data_loader_script  # type: ignore[return-value]


@dataclass
class ValidationJob:
    """What every engine validates: the samples of one dataset through one runner, each compared
    with its reference outputs."""

    runner: object
    """The runner under test (not active: the engine activates it, or each worker its copy)."""
    samples: Dataset
    """The dataset (a ``ListedDataset`` for the distributed engines)."""
    reference: Reference
    """The golden outputs (see ``open_reference``)."""
    checker: object
    """The per-sample verdict (a ``SampleChecker``)."""
    max_failures: int | None = None
    worst_k: int = 10
    batch: int = 1
    progress: Callable | None = None
    """Called with the accumulator and the seconds since the start as the run goes on."""

    def worker_kwargs(self) -> dict:
        """The keyword arguments of each worker's ``ValidationWorker``."""
        return {"runner": self.runner, "checker": self.checker, "reference": self.reference,
                "worst_k": self.worst_k, "batch": self.batch}


class ValidationEngine(abc.ABC):
    """The interface of `poly validate`'s engines (see the module's docstring)."""

    flag = ""
    """The flag that picks the engine, named in its usage errors."""
    listed = False
    """Whether one --dataset path is always listed as work items (a sample file is one item)."""

    def check_usage(self, sources: ValidationSources) -> None:
        """Raises click.UsageError for sources this engine cannot take."""
        return None  # a hook: engines without the need keep it

    def session_options(self, runners: Any, onnxrt: Any) -> None:
        """The ONNX-Runtime session options of the runners (None: ONNX-Runtime's defaults)."""
        return None

    def describe(self) -> str:
        """How the run is spread, appended to the VALIDATING line ("" in one process)."""
        return ""

    def width(self) -> dict:
        """The report config's entry for how wide the engine runs (e.g. ``{"workers": 2}``)."""
        return {}

    def run_details(self) -> dict:
        """The report config's entries known once the run is over (after ``batch``)."""
        return {}

    def start(self) -> None:
        """Acquires what the run needs beyond this process (a Ray connection)."""
        return None  # a hook: engines without the need keep it

    @abc.abstractmethod
    def run(self, job: ValidationJob) -> ValidationOutcome:
        """Validates ``job`` to the end of its dataset, its ``max_failures`` or a Ctrl-C, and
        returns what was done (never raises KeyboardInterrupt for a Ctrl-C)."""

    def stop(self) -> None:
        """Releases what ``start`` acquired."""
        return None  # a hook: engines without the need keep it

    def __enter__(self) -> Any:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> bool:  # type: ignore[exit-return]
        self.stop()
        return False


class BatchEngine(ValidationEngine):
    """
    A distributed engine: ``workers`` workers, each validating batches of about
    1/``batches_per_worker`` of its share of the work items (``items_per_task`` at least).
    Subclasses start the workers, map batches over them and stop them.
    """

    listed = True
    batches_per_worker = 8
    reads_uris = False
    """Whether --golden may be a URI."""

    def __init__(self, workers: int, items_per_task: int = 8) -> None:
        self.workers = max(1, int(workers))
        self.items_per_task = max(1, int(items_per_task))
        self.steady: Any = None  # (seconds, samples) from the first merged batch to the end

    def check_dataset(self, sources: ValidationSources) -> None:
        """Raises click.UsageError for a dataset this engine cannot take."""
        return None  # a hook: engines without the need keep it

    def check_usage(self, sources: Any) -> None:
        self.check_dataset(sources)
        golden = sources.golden
        if golden and (len(golden) != 1 or not (self.reads_uris and is_uri(golden[0])
                                                or not is_uri(golden[0]) and os.path.isdir(golden[0]))):
            raise click.UsageError(f"With {self.flag}, --golden is one directory of golden outputs named as the "
                                   "samples (or give a second backend).")

    @abc.abstractmethod
    def start_workers(self, worker_kwargs: dict, count: int) -> None:
        """Starts ``count`` workers, each building a ``ValidationWorker(**worker_kwargs)``."""

    @abc.abstractmethod
    def map_batches(self, batches: list[list]) -> Iterator[Accumulator]:
        """The accumulators of ``batches`` (lists of ``WorkItem``), each once, as they complete."""

    @abc.abstractmethod
    def stop_workers(self, aborted: bool) -> None:
        """Ends the workers (``aborted``: batches still queued are dropped)."""

    def worker_error(self, exc: BaseException) -> bool:
        """Whether a KeyboardInterrupt caught by the driver is a worker's error to re-raise."""
        return False

    @property
    def steady_samples_per_second(self) -> Any:
        """Samples/s after the first merged batch (worker start-up excluded); None before a run
        or with a single batch."""
        return self.steady[1] / self.steady[0] if self.steady and self.steady[0] > 0 else None

    def run(self, job: Any) -> Any:
        items = job.samples.items
        per_task = items_per_batch(len(items), self.items_per_task, self.workers, self.batches_per_worker)
        batches = [items[i:i + per_task] for i in range(0, len(items), per_task)]
        acc = Accumulator(worst_k=job.worst_k)
        self.steady = None
        interrupted = stopped_early = False
        start = time.perf_counter()
        first_merge = None
        parts: Iterable = ()
        started = False
        try:
            # The workers first: they start and load the runner while the batches are sent.
            self.start_workers(job.worker_kwargs(), min(self.workers, len(batches)))
            started = True
            parts = self.map_batches(batches)
            for part in parts:
                acc.merge(part)
                if first_merge is None:
                    first_merge = (time.perf_counter(), acc.samples)
                if job.progress is not None:
                    job.progress(acc, time.perf_counter() - start)
                if job.max_failures is not None and acc.failed >= job.max_failures:
                    stopped_early = True
                    break
        except KeyboardInterrupt as exc:
            if self.worker_error(exc):
                raise
            interrupted = True
        finally:
            close = getattr(parts, "close", None)
            if close is not None:
                close()
            if started:
                self.stop_workers(aborted=interrupted or stopped_early)
        if first_merge is not None and acc.samples > first_merge[1]:
            self.steady = (time.perf_counter() - first_merge[0], acc.samples - first_merge[1])
        return ValidationOutcome(acc, time.perf_counter() - start, interrupted=interrupted,
                                 stopped_early=stopped_early, max_failures=job.max_failures)
