"""
The Ray actor of a validation: one per worker, holding the runner under test (and the reference
runner, or the golden directory) loaded once for the whole run. Each call validates a block of
work items (a Ray Data block: an Arrow table with ``index``, ``path`` and ``row_group`` columns)
with the local pipeline and returns its accumulator (a retried call returns once, as any Ray
call: the driver merges each block once). It imports neither Ray Data nor pandas: an
actor's process starts with Ray's core and what the runner needs.
"""

from __future__ import annotations

from poly.cli.validate_ray.golden_reference import UriGoldenReference
from poly.cli.validate_ray.sample_reader import read_samples
from poly.cli.validate_ray.work_items import WorkItem, is_uri
from poly.compare.dataset import Accumulator, DirectoryReference, RunnerReference, ValidationPipeline

__all__ = ["ValidationWorker"]


class ValidationWorker:
    """
    Args:
        runner (BaseRunner): The runner under test (not yet active: it is activated here, once).
        checker (SampleChecker): The per-sample verdict.
        golden (str): A directory of golden outputs matched by sample name, a local path or a URI;
                or None with ``reference_runner``.
        reference_runner (BaseRunner): A second runner producing the golden outputs.
        worst_k (int): Worst samples kept per batch (the driver keeps the worst of all).
        batch (int): Samples stacked per inference where the model allows it.
    """

    def __init__(self, runner, checker, golden=None, reference_runner=None, worst_k=10, batch=1):
        self.runner = runner
        self.runner.activate()
        if reference_runner is not None:
            reference_runner.activate()
            self.reference = RunnerReference(reference_runner)
        elif is_uri(golden):
            self.reference = UriGoldenReference(golden)
        else:
            self.reference = DirectoryReference(golden)
        self.checker = checker
        self.worst_k = worst_k
        self.batch = batch
        self.inputs = dict(self.runner.get_input_metadata().items())

    def validate(self, items: dict) -> Accumulator:
        """The accumulator of the work items ``items`` (columns ``index``, ``path``, ``row_group``).
        Raises KeyboardInterrupt where the pipeline was interrupted."""
        samples = []
        for index, path, group in zip(items["index"], items["path"], items["row_group"], strict=True):
            samples.extend(read_samples(WorkItem(int(index), str(path), int(group)), self.inputs))
        pipeline = ValidationPipeline(self.runner, samples, self.reference, self.checker, workers=1,
                                      batch=self.batch, worst_k=self.worst_k)
        outcome = pipeline.run()
        if outcome.interrupted:
            raise KeyboardInterrupt
        return outcome.accumulator

    def validate_block(self, block) -> Accumulator:
        """The accumulator of a Ray Data block of work items (an Arrow table, or a dict of
        columns)."""
        return self.validate(block.to_pydict() if hasattr(block, "to_pydict") else block)

    def __del__(self):
        # Also called on the class's Ray stand-in (``ray.remote`` derives from this class), which
        # holds no runner.
        for runner in (getattr(self, "runner", None), getattr(getattr(self, "reference", None), "runner", None)):
            if runner is not None and getattr(runner, "is_active", False):
                try:
                    runner.deactivate()
                except Exception:  # noqa: BLE001 - the actor is going away
                    pass
