"""``Until``: when an iteration loop stops (``--until good | bad | N``)."""

from typing import Any

from poly.core import G_LOGGER

__all__ = ["Until"]


class Until:
    """
    The stopping rule of ``--until``: ``"good"`` stops after the first passing iteration,
    ``"bad"`` after the first failing one, an integer N after N iterations.
    """

    def __init__(self, value: Any) -> None:
        """
        Args:
            value (Union[str, int]): ``"good"``, ``"bad"`` or a positive number of iterations.
        """
        problem = self.problem(value)
        if problem:
            G_LOGGER.critical(f"--until: {problem}")
        text = str(value).strip().lower()
        self.verdict = text if text in ("good", "bad") else None
        self.count = None if self.verdict else int(text)

    @staticmethod
    def problem(value: Any) -> str | None:
        """What is wrong with an ``--until`` value, or None when it is valid."""
        text = str(value).strip().lower()
        if text in ("good", "bad"):
            return None
        try:
            count = int(text)
        except ValueError:
            return f"expected 'good', 'bad' or a number of iterations, not {value!r}"
        if count < 1:
            return f"the number of iterations must be at least 1, not {count}"
        return None

    def done(self, context: Any) -> bool:
        """Whether to stop after the iteration of ``context``."""
        if self.verdict is not None:
            return context.success == (self.verdict == "good")
        return context.iteration + 1 >= self.count

    def remaining(self, iterations_done: Any) -> Any:
        """How many iterations are left, when that is known."""
        return None if self.count is None else max(self.count - iterations_done, 0)

    def __repr__(self) -> str:
        return f"Until({self.verdict or self.count!r})"
