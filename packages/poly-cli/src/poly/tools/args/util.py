"""Helpers of argument groups (``polygraphy.tools.args.util``): ``get`` reads an option's value from
parsed arguments, None when the option is not there (a tool that leaves it out)."""

from __future__ import annotations

from typing import Any

__all__ = ["get"]


def get(args: Any, attr: str, default: Any = None) -> Any:
    """``args.attr`` (an ``argparse.Namespace``), or ``default`` when it is missing or None."""
    value = getattr(args, attr, None)
    return default if value is None else value
