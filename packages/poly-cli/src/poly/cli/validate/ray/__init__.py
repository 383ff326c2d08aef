"""
The Ray engine of `poly validate` (``--ray``): the connection (``cluster``), the actors started and
fed for a run (``actor_pool``) and the engine itself (``engine``). Reading samples, golden outputs
under a URI and the actors' validator are engine-neutral, in ``poly.compare.dataset``. Ray is
imported only when used.

Its names are imported on first use (``poly.core.optional_import.lazy_exports``); the imports
under ``TYPE_CHECKING`` are the same names, for type checkers.
"""

from typing import TYPE_CHECKING

from poly.core.optional_import import lazy_exports

if TYPE_CHECKING:
    from poly.cli.validate.ray.actor_pool import MAX_WORKER_RESTARTS, ActorPool
    from poly.cli.validate.ray.cluster import LOCAL, UV_HOOK, RayCluster, ray
    from poly.cli.validate.ray.engine import RayEngine, actor_session_options

__all__ = [
    "ray",
    "RayCluster",
    "LOCAL",
    "UV_HOOK",
    "ActorPool",
    "MAX_WORKER_RESTARTS",
    "RayEngine",
    "actor_session_options",
]

__getattr__, __dir__ = lazy_exports(__name__, {
    "ray": "poly.cli.validate.ray.cluster",
    "RayCluster": "poly.cli.validate.ray.cluster",
    "LOCAL": "poly.cli.validate.ray.cluster",
    "UV_HOOK": "poly.cli.validate.ray.cluster",
    "ActorPool": "poly.cli.validate.ray.actor_pool",
    "MAX_WORKER_RESTARTS": "poly.cli.validate.ray.actor_pool",
    "RayEngine": "poly.cli.validate.ray.engine",
    "actor_session_options": "poly.cli.validate.ray.engine",
})
