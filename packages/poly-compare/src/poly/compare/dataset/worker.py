"""
``ValidationWorker``: the validator of one worker of a distributed engine (a worker process of
``--processes``, a Ray actor of ``--ray``). It holds the runner under test (and the reference)
loaded once for the whole run, and each call validates a batch of work items: their samples read
by ``sample_reader``, run through the in-process pipeline, and its accumulator returned for the
engine to merge. Nothing here imports Ray or starts processes.
"""

from __future__ import annotations

from typing import Any

from poly.compare.dataset.accumulator import Accumulator
from poly.compare.dataset.pipeline import ValidationPipeline
from poly.compare.dataset.sample_reader import read_samples
from poly.compare.dataset.work_items import WorkItem

__all__ = ["ValidationWorker"]


class ValidationWorker:
    """
    Args:
        runner (BaseRunner): The runner under test (not yet active: it is activated here, once).
        checker (SampleChecker): The per-sample verdict.
        reference (Reference): The golden outputs matched per sample (see ``open_reference``): a
                golden directory, or a ``RunnerReference`` whose runner is activated here too.
        worst_k (int): Worst samples kept per batch (the engine keeps the worst of all).
        batch (int): Samples stacked per inference where the model allows it.
        threaded (bool): Whether a batch's samples are run and compared by threads side by side
                (see ``ValidationPipeline``); False for a worker with one CPU to itself.
    """

    def __init__(self, runner: Any, checker: Any, reference: Any, worst_k: int = 10, batch: int = 1,
                 threaded: bool = True) -> None:
        self.runner = runner
        self.runner.activate()
        self.reference = reference
        reference_runner = getattr(reference, "runner", None)
        if reference_runner is not None:
            reference_runner.activate()
        self.checker = checker
        self.worst_k = worst_k
        self.batch = batch
        self.threaded = threaded
        self.inputs = dict(self.runner.get_input_metadata().items())

    def validate(self, items: dict) -> Accumulator:  # type: ignore[type-arg]
        """The accumulator of the work items ``items`` (columns ``index``, ``path``, ``row_group``
        and ``rows``, as ``WorkItem.to_row`` gives them). Raises KeyboardInterrupt where the
        pipeline was interrupted."""
        samples = []
        rows = items.get("rows") or [1] * len(items["index"])
        for index, path, group, count in zip(items["index"], items["path"], items["row_group"], rows, strict=True):
            samples.extend(read_samples(WorkItem(int(index), str(path), int(group), int(count)), self.inputs))
        pipeline = ValidationPipeline(self.runner, samples, self.reference, self.checker, workers=1,
                                      batch=self.batch, worst_k=self.worst_k, threaded=self.threaded)
        outcome = pipeline.run()
        if outcome.interrupted:
            raise KeyboardInterrupt
        return outcome.accumulator

    def validate_block(self, block: Any) -> Accumulator:
        """The accumulator of a Ray Data block of work items (an Arrow table, or a dict of
        columns)."""
        return self.validate(block.to_pydict() if hasattr(block, "to_pydict") else block)

    def __del__(self) -> None:
        # Also called on a Ray actor's stand-in class (derived from this one), which holds no runner.
        for runner in (getattr(self, "runner", None), getattr(getattr(self, "reference", None), "runner", None)):
            if runner is not None and getattr(runner, "is_active", False):
                try:
                    runner.deactivate()
                except Exception:  # noqa: BLE001 - the worker is going away
                    pass
