"""
``ScriptSource``: the text of a generated Python script (its imports, gathered as code needs
them, and its sections of code), and ``literal``: Python source for a value of a parsed flag.
"""

from __future__ import annotations

import math
from typing import Any


def literal(value: Any, strict: bool = True) -> str:
    """Python source that evaluates to ``value`` (None, bools, numbers, strings, and lists,
    tuples and dicts of them); infinities and NaN become ``float("inf")`` and ``float("nan")``.
    Any other value raises TypeError, or with ``strict`` false is written as its ``repr``."""
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(key, strict)}: {literal(item, strict)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(literal(item, strict) for item in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(literal(item, strict) for item in value) + ("," if len(value) == 1 else "") + ")"
    if not strict or value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    raise TypeError(f"no Python literal for {type(value).__name__}")


def call(func: str, /, *args: str, **kwargs: Any) -> str:
    """Source of a call: ``args`` are source text, ``kwargs`` values (``literal``-ized, those
    that are None left out; a value that is already source text is wrapped in ``Code``)."""
    parts = list(args)
    for key, value in kwargs.items():
        if value is None:
            continue
        parts.append(f"{key}={value.text if isinstance(value, Code) else literal(value)}")
    return f"{func}({', '.join(parts)})"


class Code:
    """Source text passed to ``call`` as a keyword argument's value as it is."""

    def __init__(self, text: str) -> None:
        self.text = text


class ScriptSource:
    """A script under construction: ``use`` records imports, ``section`` adds code."""

    def __init__(self, header: list[str]) -> None:
        self.header = list(header)
        self.imports: dict[str, set] = {}
        self.plain_imports: set = set()
        self.sections: list[tuple[str, list[str]]] = []

    def use(self, module: str, *names: str) -> None:
        """``from module import names`` (or ``import module`` without names)."""
        if names:
            self.imports.setdefault(module, set()).update(names)
        else:
            self.plain_imports.add(module)

    def section(self, title: str, lines: list[str]) -> None:
        """A block of code under the comment ``# title``."""
        self.sections.append((title, list(lines)))

    def text(self) -> str:
        out = list(self.header) + [""]
        out += [f"import {module}" for module in sorted(self.plain_imports)]
        if self.plain_imports:
            out.append("")
        for module in sorted(self.imports):
            out.append(f"from {module} import {', '.join(sorted(self.imports[module]))}")
        for title, lines in self.sections:
            out += ["", f"# {title}"] + lines
        return "\n".join(out) + "\n"
