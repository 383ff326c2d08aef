"""``Build``: builds the engine again each iteration (``poly debug build``), checks it and sorts
the artifacts, to isolate flaky tactics (the build is not deterministic: TensorRT times its
tactics anew each time)."""

from typing import Any

from poly.core import G_LOGGER
from poly.debug.repeat import Repeat

__all__ = ["Build"]


class Build(Repeat):
    """Repeat with an engine built into the iteration artifact before each check."""

    def __init__(self, debugger: Any, build_engine: Any) -> None:
        """
        Args:
            debugger (IterativeDebugger): With an ``until`` rule and an ``iter_artifact_path``.
            build_engine (Callable[[str], None]): Builds the engine and writes it to the path.
        """
        if not debugger.iter_artifact_path:
            G_LOGGER.critical("poly debug build needs --iter-artifact: the path each engine is written to")

        def make_artifact(context: Any) -> None:
            build_engine(context.artifact_path)
            context.iteration_info["engine"] = context.artifact_path

        super().__init__(debugger, make_artifact)
