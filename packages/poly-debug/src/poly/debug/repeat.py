"""``Repeat``: runs the check again and again (``poly debug repeat``), sorting the artifacts of
each run, until ``--until`` says stop."""

from typing import Any

from poly.core import G_LOGGER

__all__ = ["Repeat"]


class Repeat:
    """
    Repeats an iteration with no artifact of its own: the check command is the whole job.
    """

    def __init__(self, debugger: Any, make_artifact: Any = None) -> None:
        """
        Args:
            debugger (IterativeDebugger): With an ``until`` rule.
            make_artifact (Callable[[IterationContext], None]): Optional work before each check.
        """
        if debugger.until is None:
            G_LOGGER.critical("--until is required: 'good', 'bad' or a number of iterations")
        self.debugger = debugger
        self.make_artifact = make_artifact

    def run(self) -> Any:
        """
        Returns:
            IterationSummary
        """
        return self.debugger.iterate(self.make_artifact, suffix=None)
