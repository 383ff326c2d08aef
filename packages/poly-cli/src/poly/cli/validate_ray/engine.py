"""
A validation spread over a Ray cluster: Ray Data shards the dataset's work items into blocks (one
per actor call) held in Ray's object store, and a pool of ``ValidationWorker`` actors (one loaded
runner each), started as the run begins, validates them; the driver merges their accumulators into
one, so that the report is the one a local run over the same data gives. A worker that dies is
restarted and its blocks run again (the driver counts each block once); Ctrl-C stops the job and
returns what was merged so far.
"""

from __future__ import annotations

import logging
import time

from poly.cli.validate_ray.actor_pool import ActorPool
from poly.cli.validate_ray.cluster import ray
from poly.cli.validate_ray.work_items import items_per_batch, list_work_items
from poly.cli.validate_ray.worker import ValidationWorker
from poly.compare.dataset import Accumulator, ValidationOutcome

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

    @staticmethod
    def _blocks(items, blocks) -> list:
        """Ray Data's shards of ``items``: ``blocks`` blocks (Arrow tables in the object store), one
        per actor call. A dataset built from items is materialized as it is built: its blocks are
        taken as they are (``to_arrow_refs``), without starting Ray Data's streaming executor (and
        the helper actors it starts)."""
        data = ray.data
        data.DataContext.get_current().enable_progress_bars = False
        logging.getLogger("ray.data").setLevel(logging.ERROR)
        return data.from_items([item.to_row() for item in items], override_num_blocks=blocks).to_arrow_refs()

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
        # Batches of ~1/4 of an actor's share: a batch is also the unit Ray retries
        per_task = items_per_batch(len(items), self.items_per_task, self.workers, 4)
        blocks = -(-len(items) // per_task)
        acc = Accumulator(worst_k=self.worst_k)
        self.steady = None  # (seconds, samples) from the first merged batch to the end
        interrupted = stopped_early = False
        start = time.perf_counter()
        first_merge = None
        pool = None
        try:
            # The actors first: their processes start and load the runner while Ray Data shards the items.
            pool = ActorPool(ValidationWorker, min(self.workers, blocks),
                             {"runner": self.runner, "checker": self.checker, "golden": self.golden,
                              "reference_runner": self.reference_runner, "worst_k": self.worst_k, "batch": self.batch},
                             "validate_block", num_cpus=self.cpus_per_worker, num_gpus=self.gpus_per_worker)
            for part in pool.map_unordered(self._blocks(items, blocks)):  # each block once (ActorPool)
                acc.merge(part)
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
            if pool is not None:
                pool.shutdown()
        if first_merge is not None and acc.samples > first_merge[1]:
            self.steady = (time.perf_counter() - first_merge[0], acc.samples - first_merge[1])
        return ValidationOutcome(acc, time.perf_counter() - start, interrupted=interrupted,
                                 stopped_early=stopped_early, max_failures=self.max_failures)
