"""
A validation spread over a Ray cluster: Ray Data shards the dataset's work items over a pool of
``ValidationWorker`` actors (one loaded runner each); the driver merges their accumulators into
one, so that the report is the one a local run over the same data gives. A worker that dies is
restarted and its batch run again (the driver counts each batch once); Ctrl-C stops the job and
returns what was merged so far.
"""

from __future__ import annotations

import logging
import pickle
import time
import warnings

from poly.cli.validate_ray.cluster import ray
from poly.cli.validate_ray.work_items import list_work_items
from poly.cli.validate_ray.worker import ValidationWorker
from poly.compare.dataset import Accumulator, ValidationOutcome

MAX_WORKER_RESTARTS = 3
"""How often a dead worker is restarted and its batch retried before the run fails with the
worker's error (a sample that crashes every worker must end the run, not loop)."""

__all__ = ["RayValidation"]


class RayValidation:
    """
    Validates ``runner`` over ``dataset`` on the Ray cluster this process is connected to (see
    ``RayCluster``).

    Args:
        runner (BaseRunner): The runner under test, not active; sent to each worker.
        dataset (str): A directory or file, local or a URI (see ``list_work_items``).
        checker (SampleChecker): The per-sample verdict.
        golden (str): A directory of golden outputs named as the samples, readable by the workers
                (a path, or a URI pyarrow opens).
        reference_runner (BaseRunner): Or a second runner producing the golden outputs.
        workers (int): Actors, each holding a loaded runner. Defaults to 2.
        cpus_per_worker (float): CPUs reserved per actor. Defaults to 1.
        gpus_per_worker (float): GPUs reserved per actor. Defaults to 0.
        items_per_task (int): Work items validated per actor call at least (the retry unit; a large
                dataset gets up to 16 times more, about a quarter of an actor's share). Defaults to 8.
        max_failures (int): Stop once this many samples failed. Defaults to None (never).
        worst_k (int): Worst samples kept. Defaults to 10.
        batch (int): Samples stacked per inference where the model allows it. Defaults to 1.
        progress (Callable[[Accumulator, float], None]): Called after each merged batch.
    """

    def __init__(self, runner, dataset, checker, golden=None, reference_runner=None, workers=2, cpus_per_worker=1.0,
                 gpus_per_worker=0.0, items_per_task=8, max_failures=None, worst_k=10, batch=1, progress=None):
        if (golden is None) == (reference_runner is None):
            raise ValueError("give either golden or reference_runner")
        self.runner = runner
        self.dataset = dataset
        self.checker = checker
        self.golden = golden
        self.reference_runner = reference_runner
        self.workers = max(1, int(workers))
        self.cpus_per_worker = cpus_per_worker
        self.gpus_per_worker = gpus_per_worker
        self.items_per_task = max(1, int(items_per_task))
        self.max_failures = max_failures
        self.worst_k = worst_k
        self.batch = batch
        self.progress = progress

    def _dataset(self, items, per_task):
        data = ray.data
        context = data.DataContext.get_current()
        context.enable_progress_bars = False
        context.execution_options.preserve_order = False
        logging.getLogger("ray.data").setLevel(logging.ERROR)
        # One block per actor call: each call's accumulator reaches the driver when the call ends (progress,
        # a partial report on Ctrl-C), not when a block of several calls does.
        blocks = max(1, -(-len(items) // per_task))
        ds = data.from_items([item.to_row() for item in items], override_num_blocks=blocks)
        # Ray Data restarts a dead actor and runs its batch again (the batch's partial result is
        # only returned by a call that completed). Ray's default is to retry without end: a sample
        # that kills every worker would hang the run, so restarts and retries are bounded.
        with warnings.catch_warnings():
            # Ray 2.60 warns that max_restarts / max_task_retries will lose their keyword form in
            # Ray 2.64 (they have no named parameter yet): not the user's concern.
            warnings.filterwarnings("ignore", message=".*ray_remote_args.*is deprecated")
            return ds.map_batches(
                ValidationWorker, batch_size=per_task, batch_format="numpy",
                compute=data.ActorPoolStrategy(size=self.workers),
                num_cpus=self.cpus_per_worker, num_gpus=self.gpus_per_worker or None,
                fn_constructor_kwargs={"runner": self.runner, "checker": self.checker, "golden": self.golden,
                                       "reference_runner": self.reference_runner, "worst_k": self.worst_k,
                                       "batch": self.batch},
                max_restarts=MAX_WORKER_RESTARTS, max_task_retries=MAX_WORKER_RESTARTS)

    @property
    def steady_samples_per_second(self):
        """Samples/s after the first merged batch (actor and Ray Data start-up excluded); None
        before a run or with a single batch."""
        steady = getattr(self, "steady", None)
        return steady[1] / steady[0] if steady and steady[0] > 0 else None

    def run(self) -> ValidationOutcome:
        """Runs to the end of the dataset, ``max_failures`` or a KeyboardInterrupt, and returns
        the merged outcome (never raises KeyboardInterrupt)."""
        items = list_work_items(self.dataset)
        # Batches of ~1/4 of an actor's share (at least items_per_task, at most 16x it): per-call
        # overhead is paid fewer times on a large dataset; retries and progress stay fine-grained.
        per_task = max(self.items_per_task, min(16 * self.items_per_task, len(items) // (4 * self.workers)))
        acc = Accumulator(worst_k=self.worst_k)
        self.steady = None  # (seconds, samples) from the first merged batch to the end
        seen = set()  # the first sample index of each merged batch
        interrupted = stopped_early = False
        start = time.perf_counter()
        first_merge = None
        iterator = None
        try:
            iterator = iter(self._dataset(items, per_task).iter_batches(batch_size=None, batch_format="numpy"))
            for batch in iterator:
                for first, blob in zip(batch["first"], batch["accumulator"], strict=True):
                    if int(first) in seen:
                        continue
                    seen.add(int(first))
                    acc.merge(pickle.loads(blob))
                if first_merge is None:
                    first_merge = (time.perf_counter(), acc.samples)
                if self.progress is not None:
                    self.progress(acc, time.perf_counter() - start)
                if self.max_failures is not None and acc.failed >= self.max_failures:
                    stopped_early = True
                    break
        except KeyboardInterrupt as exc:
            if isinstance(exc, ray.exceptions.RayError):  # a worker's error (Ray's errors subclass the cause's)
                raise
            interrupted = True
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:  # noqa: BLE001 - the job is being torn down anyway
                    pass
        if first_merge is not None and acc.samples > first_merge[1]:
            self.steady = (time.perf_counter() - first_merge[0], acc.samples - first_merge[1])
        return ValidationOutcome(acc, time.perf_counter() - start, interrupted=interrupted,
                                 stopped_early=stopped_early, max_failures=self.max_failures)
