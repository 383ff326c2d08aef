"""
The Ray engine of `poly validate` (``--ray``): the connection (``cluster``), the actors started and
fed for a run (``actor_pool``) and the engine itself (``engine``). Reading samples, golden outputs
under a URI and the actors' validator are engine-neutral, in ``poly.compare.dataset``. Ray is
imported only when used.
"""

from poly.cli.validate.ray import actor_pool, cluster, engine
from poly.cli.validate.ray.actor_pool import *  # noqa: F403
from poly.cli.validate.ray.cluster import *  # noqa: F403
from poly.cli.validate.ray.engine import *  # noqa: F403

__all__ = [*cluster.__all__, *actor_pool.__all__, *engine.__all__]
