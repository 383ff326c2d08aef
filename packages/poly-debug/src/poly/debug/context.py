"""
``IterationContext``: what one debugging iteration knows about itself (its number, what it
produced, whether it passed), and ``SkipIteration``, which an artifact callback raises to
decide an iteration without running the check.
"""

import copy
from types import MappingProxyType
from typing import Any

from poly.core import Decoder, Encoder

__all__ = ["IterationContext", "SkipIteration"]


class IterationContext:
    """
    The record of one iteration, as kept in a debug replay.

    Attributes:
        state (dict): What the artifact callback chose to remember about the iteration (e.g.
                which nodes a candidate model holds). JSON-serializable.
        iteration_info (dict): What is written to ``--iter-info``; holds ``"iteration"``, the
                0-based iteration number.
        success (bool): Whether the iteration passed.
        returncode (int): The check command's exit status; None for interactive or skipped checks.
                Not part of the replay.
        artifact_path (str): Where the artifact callback writes (``--iter-artifact``). Not
                part of the replay.
    """

    def __init__(self, state: Any = None, iteration_info: Any = None, success: bool = True) -> None:
        self.state = dict(state or {})
        self.iteration_info = dict(iteration_info or {})
        self.success = bool(success)
        self.returncode: Any = None
        self.artifact_path: Any = None

    @property
    def iteration(self) -> Any:
        """The 0-based iteration number."""
        return self.iteration_info.get("iteration")

    def copy(self) -> Any:
        """A deep copy (unfrozen)."""
        return IterationContext(
            copy.deepcopy(dict(self.state)), copy.deepcopy(dict(self.iteration_info)), self.success
        )

    def freeze(self) -> Any:
        """Makes ``state`` and ``iteration_info`` read-only, so ``advance`` callbacks cannot
        change what the replay recorded."""
        self.state = MappingProxyType(self.state)  # type: ignore[assignment]
        self.iteration_info = MappingProxyType(self.iteration_info)  # type: ignore[assignment]
        return self

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, IterationContext)
            and dict(self.state) == dict(other.state)
            and dict(self.iteration_info) == dict(other.iteration_info)
            and self.success == other.success
        )

    def __repr__(self) -> str:
        return f"IterationContext(state={dict(self.state)}, iteration_info={dict(self.iteration_info)}, success={self.success})"


@Encoder.register(IterationContext)
def _encode(context: Any) -> dict[Any, Any]:
    # Same fields and type name as Polygraphy's replay files, so replays load in both.
    return {
        "state": dict(context.state),
        "iteration_info": dict(context.iteration_info),
        "success": context.success,
    }


@Decoder.register(IterationContext)
def _decode(dct: Any) -> Any:
    return IterationContext(dct.get("state"), dct.get("iteration_info"), dct.get("success", False))


class SkipIteration(Exception):
    """
    Raised by an artifact callback to decide the current iteration without running the check
    (e.g. a candidate that cannot even be built counts as a failure).
    """

    def __init__(self, success: bool = False, reason: Any = None) -> None:
        super().__init__(reason or ("skipped as a pass" if success else "skipped as a failure"))
        self.success = bool(success)
