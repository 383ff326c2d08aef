"""
``DebugReplay``: the results of the iterations so far, keyed ``_N<iteration>[_<phase>]`` as
in Polygraphy's replay files. Saved after every iteration; loading one skips the iterations it
already decided, so an interrupted session resumes where it stopped.
"""

import os
from collections import OrderedDict
from typing import Any

from poly.core import G_LOGGER, PolyException, load_json, save_json
from poly.debug.context import IterationContext

__all__ = ["DebugReplay", "DEFAULT_REPLAY_PATH", "replay_key", "skip_current_path"]

DEFAULT_REPLAY_PATH = "polygraphy_debug_replay.json"


def replay_key(index: Any, suffix: Any = None) -> Any:
    """The replay key of iteration ``index`` (0-based) of the loop named ``suffix``."""
    return f"_N{index}" + (f"_{suffix}" if suffix else "")


def skip_current_path(path: Any) -> str:
    """``replay.json`` -> ``replay_skip_current.json``: the replay that counts the running
    iteration as failed, for resuming past an iteration that crashes the session."""
    stem, ext = os.path.splitext(os.fspath(path))
    return f"{stem}_skip_current{ext}"


class DebugReplay(OrderedDict):
    """An ordered mapping of replay key to ``IterationContext``."""

    @classmethod
    def load(cls, path: Any) -> Any:
        """
        Reads a replay file (poly's or Polygraphy's).

        Raises:
            PolyException: One line naming the file when it is missing or not a replay.
        """
        path = os.fspath(path)
        if not os.path.exists(path):
            G_LOGGER.critical(f"--load-debug-replay: {path!r} does not exist")
        try:
            data = load_json(path, description="debug replay")
        except PolyException as err:
            G_LOGGER.critical(f"--load-debug-replay: {path!r} is not a debug replay: {err}")
        if not isinstance(data, dict) or not all(isinstance(v, IterationContext) for v in data.values()):
            G_LOGGER.critical(
                f"--load-debug-replay: {path!r} is not a debug replay (expected an object of iteration records)"
            )
        return cls(data)

    def save(self, path: Any, description: Any = None, durable: bool = True) -> None:
        """Writes the replay (atomically; ``durable=False``: without waiting for the disk)."""
        save_json(dict(self), path, description, durable=durable)

    def summary(self) -> str:
        """'3 iteration(s): 1 passed, 2 failed'."""
        passed = sum(1 for ctx in self.values() if ctx.success)
        return f"{len(self)} iteration(s): {passed} passed, {len(self) - passed} failed"
