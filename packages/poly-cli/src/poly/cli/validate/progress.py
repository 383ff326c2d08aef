"""The progress of a `poly validate` run, whatever its engine: a one-line bar on a TTY, else a log
line every few seconds."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["Progress", "format_duration"]


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
    the dataset's size where it is known (then the line shows the part done and the time left)."""

    def __init__(self, total: Any = None, stream: Any = None, interval: float = 5.0) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.total = total
        self.interval = interval if not self.tty else 0.1
        self._last = -1e9

    def line(self, acc: Any, elapsed: Any) -> str:
        """The progress line of accumulator ``acc`` after ``elapsed`` seconds."""
        rate = acc.samples / elapsed if elapsed > 0 else 0.0
        pass_rate = f"{100 * acc.pass_rate:.2f}%" if acc.pass_rate is not None else "-"
        done = f"{acc.samples} samples"
        if self.total:  # the dataset's size is known: percent done and time left
            left = max(self.total - acc.samples, 0)
            eta = format_duration(left / rate) if rate > 0 else "?"
            done = (f"{acc.samples}/{self.total} samples ({min(100.0, 100.0 * acc.samples / self.total):.0f}%) | "
                    f"{eta} left")
        return (f"{done} | {rate:.1f} samples/s | pass rate {pass_rate} | "
                f"failed {acc.failed} | unreadable {acc.errors}")

    def __call__(self, acc: Any, elapsed: Any) -> None:
        if elapsed - self._last < self.interval:
            return
        self._last = elapsed
        if self.tty:
            self.stream.write("\r\033[K" + self.line(acc, elapsed))
        else:
            self.stream.write("[I] validate | " + self.line(acc, elapsed) + "\n")
        self.stream.flush()

    def finish(self, acc: Any, elapsed: Any) -> None:
        """The last line: what was done, without time left."""
        self.total = None
        if self.tty:
            self.stream.write("\r\033[K" + self.line(acc, elapsed) + "\n")
            self.stream.flush()
