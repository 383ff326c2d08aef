"""
`poly validate --ray`: the validation spread over a Ray cluster. Ray Data shards the batches of
work items into blocks (one per actor call) held in Ray's object store, and a pool of actors
(one ``ValidationWorker`` each, started as the run begins) validates them; ``BatchEngine`` merges
their accumulators, so the report is the one a local run over the same data gives. A worker
that dies is restarted and its blocks run again (each block is merged once); Ctrl-C stops the
job and returns what was merged so far. Ray is imported only when this engine runs.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import click

from poly.cli.validate.engine import BatchEngine
from poly.cli.validate.ray.actor_pool import ActorPool
from poly.cli.validate.ray.cluster import RayCluster, ray
from poly.compare.dataset import ValidationWorker, check_uri_directory, is_uri

__all__ = ["RayEngine", "actor_session_options"]


def actor_session_options(ray_args: Any, onnxrt: Any) -> dict | None:
    """
    The ONNX-Runtime session options of each actor: on the CPU, one inference thread per CPU the
    actor reserves (``--ray-cpus-per-worker``, at least 1), as Ray sizes OpenMP pools. Left at
    ONNX-Runtime's default, every actor would spin a pool as wide as its machine: two actors on
    two cores then run a third as fast as one.
    """
    if not onnxrt.cpu_only:
        return None
    threads = max(1, math.floor(ray_args.cpus_per_worker))
    return {"intra_op_num_threads": threads, "inter_op_num_threads": 1}


class RayEngine(BatchEngine):
    """
    Args:
        ray_args (RayArgs): The cluster's address, the actors and what each reserves.
        items_per_task (int): Work items per actor call at least (the retry unit; a large dataset
                gets up to 16 times more, about a quarter of an actor's share). Defaults to 8.
        cluster (RayCluster): The connection; defaults to one to ``ray_args.address``.
    """

    flag = "--ray"
    batches_per_worker = 4  # a batch is also the unit Ray retries
    reads_uris = True

    def __init__(self, ray_args: Any, items_per_task: int = 8, cluster: RayCluster | None = None) -> None:
        super().__init__(ray_args.workers, items_per_task)
        self.ray_args = ray_args
        self.cluster = cluster if cluster is not None else RayCluster(ray_args.address or "")
        self._pool: Any = None

    def check_dataset(self, sources: Any) -> None:
        if sources.data_loader_script:
            raise click.UsageError("--data-loader-script cannot be used with --ray: give --dataset (a directory, a "
                                   "Parquet file or a URI).")
        if len(sources.dataset) != 1:
            raise click.UsageError("With --ray, give one --dataset: a directory of samples, a Parquet file or a URI.")

    def check_usage(self, sources: Any) -> None:
        super().check_usage(sources)
        if sources.golden and is_uri(sources.golden[0]):
            try:
                check_uri_directory(sources.golden[0])
            except ValueError as err:
                raise click.UsageError(f"--golden {err}") from None

    def session_options(self, runners: Any, onnxrt: Any) -> Any:
        return actor_session_options(self.ray_args, onnxrt)

    def describe(self) -> str:
        return f" | {self.workers} Ray workers on {self.cluster.describe()}"

    def width(self) -> dict[Any, Any]:
        return {"workers": self.workers}

    def run_details(self) -> dict[Any, Any]:
        return {"ray": self.ray_args.address or "local", "ray_workers": self.workers,
                "ray_steady_samples_per_second": self.steady_samples_per_second}

    def start(self) -> None:
        self.cluster.__enter__()

    def stop(self) -> None:
        self.cluster.__exit__(None, None, None)

    def start_workers(self, worker_kwargs: Any, count: Any) -> None:
        self._pool = ActorPool(ValidationWorker, count, worker_kwargs, "validate_block",
                               num_cpus=self.ray_args.cpus_per_worker, num_gpus=self.ray_args.gpus_per_worker)

    @staticmethod
    def _blocks(batches: Any) -> list:
        """Ray Data's shards of the batches: one block (an Arrow table in the object store) per
        batch, one per actor call. A dataset built from items is materialized as it is built: its
        blocks are taken as they are (``to_arrow_refs``), without starting Ray Data's streaming
        executor (and the helper actors it starts)."""
        data = ray.data
        data.DataContext.get_current().enable_progress_bars = False
        logging.getLogger("ray.data").setLevel(logging.ERROR)
        rows = [item.to_row() for batch in batches for item in batch]
        return data.from_items(rows, override_num_blocks=len(batches)).to_arrow_refs()

    def map_batches(self, batches: Any) -> Any:
        return self._pool.map_unordered(self._blocks(batches))  # each block once (ActorPool)

    def stop_workers(self, aborted: Any) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def worker_error(self, exc: Any) -> bool:
        return isinstance(exc, ray.exceptions.RayError)  # Ray's errors subclass the cause's
