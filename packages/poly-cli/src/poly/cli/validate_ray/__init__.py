"""
``poly validate --ray``: the validation of a dataset spread over a Ray cluster. The connection
(``cluster``), the work items a dataset is sharded into (``work_items``), reading an item's
samples on a worker (``sample_reader``), golden outputs under a URI (``golden_reference``), the
actor that holds a loaded runner (``worker``), the actors started and fed for a run
(``actor_pool``) and the run that merges the workers' accumulators (``engine``). Ray is imported
only when used.
"""

from poly.cli.validate_ray import (
    actor_pool,
    cli_entry,
    cluster,
    engine,
    golden_reference,
    sample_reader,
    work_items,
    worker,
)
from poly.cli.validate_ray.actor_pool import *  # noqa: F403
from poly.cli.validate_ray.cli_entry import *  # noqa: F403
from poly.cli.validate_ray.cluster import *  # noqa: F403
from poly.cli.validate_ray.engine import *  # noqa: F403
from poly.cli.validate_ray.golden_reference import *  # noqa: F403
from poly.cli.validate_ray.sample_reader import *  # noqa: F403
from poly.cli.validate_ray.work_items import *  # noqa: F403
from poly.cli.validate_ray.worker import *  # noqa: F403

__all__ = [*cli_entry.__all__, *cluster.__all__, *work_items.__all__, *sample_reader.__all__,
           *golden_reference.__all__, *worker.__all__, *actor_pool.__all__, *engine.__all__]
