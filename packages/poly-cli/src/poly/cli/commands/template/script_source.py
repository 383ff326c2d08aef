"""The Python source of the `poly template` scripts: literals, calls with keyword arguments,
and the file itself (a docstring, the imports, the loaders, the function to edit)."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.gen_script.script_source import literal as python_literal

INDENT = "    "


def literal(value: Any) -> str:
    """``value`` as Python source (``gen_script``'s literals; other objects as their ``repr``)."""
    return python_literal(value, strict=False)


def call(name: str, *args: str, **kwargs: str) -> str:
    """`name(arg, key=value, ...)` from source fragments; keyword arguments one per line when
    there are several."""
    parts = list(args) + [f"{key}={value}" for key, value in kwargs.items()]
    if len(parts) <= 1 or sum(len(p) for p in parts) < 60:
        return f"{name}({', '.join(parts)})"
    body = "".join(f"\n{INDENT}{part}," for part in parts)
    return f"{name}({body}\n)"


def merge_imports(imports: list[str]) -> list[str]:
    """Import lines without duplicates, in order of first appearance, `from M import a` and
    `from M import b` merged into `from M import a, b`."""
    merged: dict[str, list[str]] = {}
    for line in imports:
        if line.startswith("from ") and " import " in line:
            module, names = line[len("from "):].split(" import ", 1)
            key = f"from {module} import "
            merged.setdefault(key, [])
            merged[key] += [n.strip() for n in names.split(",") if n.strip() not in merged[key]]
        else:
            merged.setdefault(line, [])
    return [key + ", ".join(names) if names else key for key, names in merged.items()]


def write_script(path: str, summary: str, usage: str, imports: list[str], body: list[str]) -> None:
    """Writes the script: a docstring (``summary``, then ``usage``), ``imports`` (lines, kept
    in order without duplicates) and ``body`` (blocks separated by blank lines)."""
    from poly.core import G_LOGGER, atomic_write_text

    lines = ["#!/usr/bin/env python3", f'"""\n{summary}\n\n{usage}\n"""', ""]
    lines += merge_imports(imports)
    text = "\n".join(lines) + "\n\n\n" + "\n\n\n".join(body) + "\n"
    try:
        atomic_write_text(path, text)
    except OSError as err:
        raise click.BadParameter(f"cannot write {path!r}: {err.strerror or err}", param_hint="'-o'") from None
    G_LOGGER.info(f"Wrote template script to {path}")


def output_option() -> Any:
    """-o/--output, the script's path (required)."""
    return click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
                        help="Path to save the generated script.")
