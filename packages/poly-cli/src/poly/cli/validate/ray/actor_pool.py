"""
The actors of a Ray validation: ``ValidationWorker`` actors created with ``ray.remote`` when the run
begins, before the dataset is sharded, so that their processes start and load the runner while the
driver builds the blocks; then fed the blocks, the next one handed to an actor as soon as one of
its calls returns. An actor that dies is restarted by Ray and its calls run again, at most
``MAX_WORKER_RESTARTS`` times; past that, the run fails with the worker's error.

The actors are plain Ray actors, not a Ray Data actor pool: a Ray Data pool starts its actors as
Ray Data map workers (each process importing Ray Data, pandas and pyarrow) and starts three helper
actors of Ray Data's (a location tracker, an autoscaling coordinator, a statistics actor), five
processes that shared this machine's two cores during a run's first two seconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from poly.cli.validate.ray.cluster import ray

__all__ = ["ActorPool", "MAX_WORKER_RESTARTS"]

MAX_WORKER_RESTARTS = 3
"""How often a dead worker is restarted and its calls run again before the run fails with the
worker's error (a sample that crashes every worker must end the run, not loop). Ray's default for
a restartable actor is to retry without end."""


class ActorPool:
    """
    Starts ``size`` actors of ``actor_class`` at once (each built with ``kwargs``) and runs
    ``method`` over blocks on them; ``shutdown`` ends them (also on Ctrl-C or an early stop, with
    calls still queued).

    Args:
        actor_class (type): The actor's class (made a Ray actor here).
        size (int): Actors.
        kwargs (dict): The constructor's keyword arguments, the same for each actor.
        method (str): The method called with one block.
        num_cpus (float): CPUs reserved per actor.
        num_gpus (float): GPUs reserved per actor (None: none).
        depth (int): Calls queued per actor at most: with 2, an actor starts its next block while
                the driver receives and merges the one it finished.
    """

    def __init__(self, actor_class: Any, size: Any, kwargs: Any, method: Any, num_cpus: float = 1.0, num_gpus: Any = None, depth: int = 2) -> None:
        remote = ray.remote(actor_class).options(num_cpus=num_cpus, num_gpus=num_gpus or None,
                                                 max_restarts=MAX_WORKER_RESTARTS,
                                                 max_task_retries=MAX_WORKER_RESTARTS)
        self.actors = [remote.remote(**kwargs) for _ in range(max(1, int(size)))]
        self.method = method
        self.depth = max(1, int(depth))

    def map_unordered(self, blocks: Iterable) -> Iterator:
        """The results of ``method`` over ``blocks``, in the order they complete. A worker's
        error is raised as Ray raises it (a subclass of the worker's exception)."""
        blocks = iter(blocks)
        pending = {}  # the call's ObjectRef -> its actor
        queued = [0] * len(self.actors)

        def hand_out() -> None:
            # Round-robin, one block per actor per pass, so that each actor gets work first.
            while True:
                idle = [k for k in range(len(self.actors)) if queued[k] < self.depth]
                if not idle:
                    return
                for k in sorted(idle, key=lambda k: queued[k]):
                    block = next(blocks, None)
                    if block is None:
                        return
                    pending[getattr(self.actors[k], self.method).remote(block)] = k
                    queued[k] += 1

        hand_out()
        while pending:
            (ref,), _ = ray.wait(list(pending), num_returns=1)
            queued[pending.pop(ref)] -= 1
            result = ray.get(ref)
            hand_out()  # before the driver merges: the actor is never left without work
            yield result

    def shutdown(self) -> None:
        """Ends the actors (their queued calls are dropped)."""
        for actor in self.actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone, or the connection is
                pass
        self.actors = []
