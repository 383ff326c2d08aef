"""The progress of a `poly validate` run, whatever its engine: a one-line bar on a TTY, else a log
line every few seconds."""

from __future__ import annotations

import collections
import sys
from typing import Any

__all__ = ["Progress", "format_duration"]

# Seconds of results a rate needs before the line shows it (and the time left): the first results
# alone say nothing of the rate to come.
MIN_SPAN = 0.5


def format_duration(seconds: float) -> str:
    """``seconds`` as 42s, 3m05s or 2h07m."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Progress:
    """A one-line progress bar on a TTY, else a log line every ``interval`` seconds; ``total`` is
    the dataset's size where it is known (then the line shows the part done and the time left).

    The rate and the time left are taken over the last ``window`` seconds of results, from the
    first result on: the run's start (imports, sessions, workers) is not in them, and they follow
    a rate that changes. Until results have come in for ``MIN_SPAN`` seconds both show ``?``. The
    last line (``finish``) shows the whole run's rate, as the summary does.

    >>> import io
    >>> from types import SimpleNamespace
    >>> p = Progress(total=100, stream=io.StringIO())
    >>> for t in range(3, 8):  # the first results at 3 s, then 10 samples a second
    ...     p(SimpleNamespace(samples=10 * (t - 2), pass_rate=1.0, failed=0, errors=0), t)
    >>> p.rate(50, 7.0)
    10.0
    """

    def __init__(self, total: Any = None, stream: Any = None, interval: float = 5.0, window: float = 10.0) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.total = total
        self.interval = interval if not self.tty else 0.1
        self.window = window
        self._last = -1e9
        self._marks: collections.deque[tuple[float, int]] = collections.deque()  # (elapsed, samples)
        self._whole_run = False

    def observe(self, samples: int, elapsed: float) -> None:
        """Notes that ``samples`` results were in after ``elapsed`` seconds (at most a mark a tenth
        of the window; marks older than the window are dropped once a younger one spans it)."""
        marks = self._marks
        if not marks or elapsed - marks[-1][0] >= self.window / 10:
            marks.append((elapsed, samples))
        while len(marks) > 2 and elapsed - marks[1][0] >= self.window:
            marks.popleft()

    def rate(self, samples: int, elapsed: float) -> float | None:
        """Samples a second over the window of results before ``elapsed``; None while they span
        less than ``MIN_SPAN`` seconds. After ``finish``: the whole run's rate."""
        if self._whole_run:
            return samples / elapsed if elapsed > 0 else None
        if not self._marks:
            return None
        t0, s0 = self._marks[0]
        span = elapsed - t0
        return max(samples - s0, 0) / span if span >= MIN_SPAN else None

    def line(self, acc: Any, elapsed: Any) -> str:
        """The progress line of accumulator ``acc`` after ``elapsed`` seconds."""
        rate = self.rate(acc.samples, elapsed)
        pass_rate = f"{100 * acc.pass_rate:.2f}%" if acc.pass_rate is not None else "-"
        done = f"{acc.samples} samples"
        if self.total:  # the dataset's size is known: percent done and time left
            left = max(self.total - acc.samples, 0)
            if rate:
                eta = format_duration(left / rate)
            else:
                eta = "0s" if not left else "?"
            done = (f"{acc.samples}/{self.total} samples ({min(100.0, 100.0 * acc.samples / self.total):.0f}%) | "
                    f"{eta} left")
        shown = f"{rate:.1f}" if rate is not None else "?"
        return f"{done} | {shown} samples/s | pass rate {pass_rate} | failed {acc.failed} | unreadable {acc.errors}"

    def __call__(self, acc: Any, elapsed: Any) -> None:
        self.observe(acc.samples, elapsed)
        if elapsed - self._last < self.interval:
            return
        self._last = elapsed
        if self.tty:
            self.stream.write("\r\033[K" + self.line(acc, elapsed))
        else:
            self.stream.write("[I] validate | " + self.line(acc, elapsed) + "\n")
        self.stream.flush()

    def finish(self, acc: Any, elapsed: Any) -> None:
        """The last line: what was done, at the whole run's rate, without time left."""
        self.total = None
        self._whole_run = True
        if self.tty:
            self.stream.write("\r\033[K" + self.line(acc, elapsed) + "\n")
            self.stream.flush()
