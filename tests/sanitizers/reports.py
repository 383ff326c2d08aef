"""A sanitizer's report in the standard error of a process that ran under one: the first lines
say what went wrong and where, so a failure message shows the report from its start (its end
is the shadow-memory legend)."""

from __future__ import annotations

import re

REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer|ThreadSanitizer)|WARNING: ThreadSanitizer"
                    r"|runtime error:|SUMMARY: \w+Sanitizer")


def report_excerpt(stderr: str, limit: int = 12000) -> str:
    """The sanitizer report in ``stderr`` from just before its first line, at most ``limit``
    characters; without a report, the last ``limit`` characters."""
    found = REPORT.search(stderr)
    if found is None:
        return stderr[-limit:]
    return stderr[max(0, found.start() - 200):][:limit]
