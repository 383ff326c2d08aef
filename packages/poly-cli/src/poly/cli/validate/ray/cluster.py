"""The Ray cluster a validation runs on: a local Ray started for the run, or an existing cluster
(``auto``, ``ray://HOST:PORT`` or a GCS ``HOST:PORT``) connected to and disconnected from."""

from __future__ import annotations

import importlib
import logging
import os
from typing import Any

from poly.core.optional_import import lazy_import

__all__ = ["ray", "RayCluster", "LOCAL", "UV_HOOK"]

ray = lazy_import("ray", install="poly-cli[ray]", purpose="Validating on a Ray cluster (--ray)")

UV_HOOK = "RAY_ENABLE_UV_RUN_RUNTIME_ENV"

LOCAL = ""
"""The address that starts a local Ray for the run (``--ray`` given without an address)."""


class RayCluster:
    """
    A context manager: on entry, connects to ``address`` (``LOCAL``: starts a local Ray with
    ``num_cpus`` CPUs, all of the machine's by default); on exit, disconnects (a local Ray is shut
    down with its workers; on a remote cluster, the run's actors end with the connection). A Ray
    already initialized in this process (by the caller) is used as it is and left running.
    """

    def __init__(self, address: str = LOCAL, num_cpus: int | None = None) -> None:
        self.address = address
        self.num_cpus = num_cpus
        self._owned = False

    def __enter__(self) -> Any:
        # Under `uv run`, Ray would otherwise run each worker in a fresh `uv run` of the packaged
        # working directory (rebuilding the project there): workers use this environment as it is.
        # Read when Ray is imported, so set before the first use of ``ray``.
        os.environ.setdefault(UV_HOOK, "0")
        if ray.is_initialized():
            return self
        kwargs = {"logging_level": logging.WARNING, "log_to_driver": False}
        # Ray's notice that a local cluster uses token authentication is not a warning to the user.
        logging.getLogger("ray._private.authentication.authentication_token_setup").setLevel(logging.ERROR)
        if self.address == LOCAL:
            ray.init(num_cpus=self.num_cpus, include_dashboard=False, **kwargs)
        else:
            ray.init(address=self.address, **kwargs)
        self._owned = True
        # Ray Data (and the pandas and pyarrow it loads: about a second) is imported while connecting,
        # not once the validation's clock runs.
        importlib.import_module("ray.data")
        return self

    def __exit__(self, *exc: Any) -> bool:  # type: ignore[exit-return]
        if self._owned:
            ray.shutdown()
            self._owned = False
        return False

    def describe(self) -> str:
        return "a local Ray" if self.address == LOCAL else f"the Ray cluster at {self.address}"
