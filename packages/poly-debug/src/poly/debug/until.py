"""``Until``: when an iteration loop stops (``--until good | bad | N``)."""

from poly.core.logger import G_LOGGER

__all__ = ["Until"]


class Until:
    """
    The stopping rule of ``--until``: ``"good"`` stops after the first passing iteration,
    ``"bad"`` after the first failing one, an integer N after N iterations.
    """

    def __init__(self, value):
        """
        Args:
            value (Union[str, int]): ``"good"``, ``"bad"`` or a positive number of iterations.
        """
        self.count = None
        self.verdict = None
        text = str(value).strip().lower()
        if text in ("good", "bad"):
            self.verdict = text
            return
        try:
            self.count = int(text)
        except ValueError:
            G_LOGGER.critical(f"--until must be 'good', 'bad' or a number of iterations, not {value!r}")
        if self.count < 1:
            G_LOGGER.critical(f"--until: the number of iterations must be at least 1, not {self.count}")

    def done(self, context):
        """Whether to stop after the iteration of ``context``."""
        if self.verdict is not None:
            return context.success == (self.verdict == "good")
        return context.iteration + 1 >= self.count

    def remaining(self, iterations_done):
        """How many iterations are left, when that is known."""
        return None if self.count is None else max(self.count - iterations_done, 0)

    def __repr__(self):
        return f"Until({self.verdict or self.count!r})"
