"""The Ray group of `poly validate`: --ray [ADDRESS], --ray-workers, --ray-cpus-per-worker and
--ray-gpus-per-worker, which spread a validation over a Ray cluster."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.multi_option import stack_options
from poly.cli.validate.ray.cluster import LOCAL as LOCAL_RAY


class PathOrUri(click.Path):
    """An existing local path, or a URI (``s3://...``, ``gs://...``) left for Ray Data to open."""

    name = "path_or_uri"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and "://" in value:
            return value
        return super().convert(value, param, ctx)


@dataclass(frozen=True)
class RayArgs:
    """Where and how wide a validation runs on Ray."""

    address: str | None = None
    """--ray: None runs without Ray; "" starts a local Ray for the run; else `auto`, `ray://HOST:PORT`
    or a cluster's HOST:PORT."""
    workers: int = 2
    """--ray-workers: actors, each holding a loaded runner."""
    cpus_per_worker: float = 1.0
    """--ray-cpus-per-worker: CPUs Ray reserves per actor."""
    gpus_per_worker: float = 0.0
    """--ray-gpus-per-worker: GPUs Ray reserves per actor (fractions share a GPU)."""

    @classmethod
    def options(cls) -> Any:
        return stack_options([
            click.option("--ray", "ray_address", metavar="[ADDRESS]", is_flag=False, flag_value=LOCAL_RAY, default=None,
                         help="Spread the validation over a Ray cluster: `auto` (the cluster this machine belongs "
                         "to), `ray://HOST:PORT`, or no address to start a local Ray for the run. Needs "
                         "`pip install poly-cli[ray]`. Put it after the model (or write --ray=ADDRESS)."),
            click.option("--ray-workers", type=click.IntRange(min=1), default=2, show_default=True,
                         help="Ray actors validating side by side, each loading the model once (with --ray)."),
            click.option("--ray-cpus-per-worker", type=click.FloatRange(min=0, min_open=True), default=1.0,
                         show_default=True, help="CPUs Ray reserves for each actor (with --ray)."),
            click.option("--ray-gpus-per-worker", type=click.FloatRange(min=0), default=0.0, show_default=True,
                         help="GPUs Ray reserves for each actor, fractions to share one GPU (with --ray)."),
        ], section="Ray Cluster")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> RayArgs:
        args = cls(address=kwargs["ray_address"], workers=kwargs["ray_workers"],
                   cpus_per_worker=kwargs["ray_cpus_per_worker"], gpus_per_worker=kwargs["ray_gpus_per_worker"])
        if args.address is None:
            changed = [flag for flag, value, default in (("--ray-workers", args.workers, 2),
                                                         ("--ray-cpus-per-worker", args.cpus_per_worker, 1.0),
                                                         ("--ray-gpus-per-worker", args.gpus_per_worker, 0.0))
                       if value != default]
            if changed:
                raise click.UsageError(f"{changed[0]} needs --ray.")
        return args

    def check_paths(self, **paths: Any) -> None:
        """A usage error for a URI given without --ray (``paths``: flag name -> values)."""
        if self.enabled:
            return
        for flag, values in paths.items():
            for value in values or ():
                if "://" in str(value):
                    raise click.UsageError(f"--{flag} '{value}' is a URI: URIs are read with --ray only.")

    @property
    def enabled(self) -> bool:
        return self.address is not None
