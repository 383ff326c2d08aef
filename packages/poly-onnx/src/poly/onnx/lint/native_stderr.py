"""
``capture_native_stderr``: collects what native code (ONNX-Runtime's logger) writes to the
process's standard error while a block runs, at the file-descriptor level, where Python's
``sys.stderr`` redirection does not reach. Not thread-safe: the descriptor is the process's.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

__all__ = ["capture_native_stderr", "CapturedText"]


class CapturedText:
    """What a ``capture_native_stderr`` block wrote; ``text`` is filled when the block ends."""

    def __init__(self) -> None:
        self.text = ""


@contextlib.contextmanager
def capture_native_stderr() -> Iterator[Any]:
    """
    Redirects file descriptor 2 to a temporary file for the duration of the block.

    Yields:
        CapturedText: Its ``text`` holds the captured output (UTF-8, undecodable bytes replaced)
        once the block has ended.
    """
    captured = CapturedText()
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # no real descriptor (e.g. an in-memory stream)
        fd = 2
    sys.stderr.flush()
    saved = os.dup(fd)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), fd)
        try:
            yield captured
        finally:
            sys.stderr.flush()
            os.dup2(saved, fd)
            os.close(saved)
            sink.seek(0)
            captured.text = sink.read().decode("utf-8", errors="replace")
