"""
Polygraphy's script-writing API (``polygraphy.tools.script``), with which argument groups add the
code of their loaders and runners to a script: ``Script`` (imports, a data loader, loaders,
variables and runners, rendered as a Python program that sets ``runners``), ``make_invocable``
(the source text of a call), ``safe`` and ``inline`` (text that is trusted code, not a string
value) and ``inline_identifier``.

Values given to ``make_invocable`` and ``safe`` are written as Python literals (``repr``), so a
user's string can never become code; only text marked ``safe`` *and* ``inline`` is written as
it is.

Example::

    script = Script(summary="Runs my runner")
    script.add_import(imports=["MyRunner"], frm="my_extension.backend")
    loader = script.add_loader(make_invocable("OnnxFromPath", "model.onnx"), "load_onnx")
    script.add_runner(make_invocable("MyRunner", inline(loader), speed="fast"))
    print(script)     # ... load_onnx = OnnxFromPath('model.onnx') ... runners = [MyRunner(load_onnx, speed='fast')]
"""

from __future__ import annotations

import time
from typing import Any

from poly.core import G_LOGGER

__all__ = ["Script", "make_invocable", "make_invocable_if_nondefault", "make_invocable_if_nondefault_kwargs",
           "inline", "safe", "inline_identifier", "ensure_safe"]


class _String(str):
    """Source text: ``safe`` when it is trusted code, ``inline`` when it is written as it is
    (else as a string literal)."""

    def __new__(cls, s: str, safe: bool = False, inline: bool = False) -> _String:
        obj = super().__new__(cls, s)
        obj.safe, obj.inline = bool(safe), bool(inline)
        return obj

    safe: bool
    inline: bool


def _code(value: Any) -> str:
    """How ``value`` is written in a script: inline text as it is, anything else as a literal."""
    if isinstance(value, _String) and value.inline:
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_code(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_code(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_code(k)}: {_code(v)}" for k, v in value.items()) + "}"
    return repr(str(value) if isinstance(value, _String) else value)


def safe(base_str: str, *args: Any, **kwargs: Any) -> _String:
    """Marks ``base_str`` as trusted code, formatting ``args``/``kwargs`` into it as literals
    (inline ones as they are): ``safe("f({}, {})", 1, "a")`` is ``f(1, 'a')``."""
    return _String(base_str.format(*map(_code, args), **{k: _code(v) for k, v in kwargs.items()}), safe=True)


def inline(inp: Any) -> _String:
    """Marks safe text as written as it is (a variable name, an expression) wherever it is used."""
    if not isinstance(inp, _String) or not inp.safe:
        G_LOGGER.critical(f"inline() takes text made by safe() (or make_invocable()), not {inp!r}: unchecked "
                          "text could put arbitrary code in the script")
    return _String(str(inp), safe=True, inline=True)


def inline_identifier(ident: str) -> _String:
    """``ident`` as inline text, after checking that it is a Python identifier."""
    if not str(ident).isidentifier():
        G_LOGGER.critical(f"This argument must be a Python identifier, which {ident!r} is not")
    return _String(str(ident), safe=True, inline=True)


def ensure_safe(inp: Any) -> _String:
    """``inp`` itself when it is safe text; an error otherwise."""
    if not isinstance(inp, _String) or not inp.safe:
        G_LOGGER.critical(f"Unsafe text cannot go into a script: {inp!r} (make it with safe() or make_invocable())")
    return inp


def make_invocable(type_str: str, *args: Any, **kwargs: Any) -> _String:
    """The source of the call ``type_str(*args, **kwargs)`` (inline text, as it is trusted code):
    values are written as literals (inline ones as they are); keyword arguments that are None
    are left out."""
    parts = [_code(arg) for arg in args] + [f"{k}={_code(v)}" for k, v in kwargs.items() if v is not None]
    return _String(f"{type_str}({', '.join(parts)})", safe=True, inline=True)


def make_invocable_if_nondefault(type_str: str, *args: Any, **kwargs: Any) -> _String | None:
    """``make_invocable``, or None when every argument is None."""
    if all(v is None for v in (*args, *kwargs.values())):
        return None
    return make_invocable(type_str, *args, **kwargs)


def make_invocable_if_nondefault_kwargs(type_str: str, *args: Any, **kwargs: Any) -> _String | None:
    """``make_invocable``, or None when every keyword argument is None (whatever the positional ones)."""
    if all(v is None for v in kwargs.values()):
        return None
    return make_invocable(type_str, *args, **kwargs)


class Script:
    """A Python program that builds ``runners``: imports, a data loader, loaders, variables and
    runners, in that order; ``str(script)`` is its source."""

    String = _String
    DATA_LOADER_NAME = inline(safe("data_loader"))

    def __init__(self, summary: str | None = None, always_create_runners: bool = True) -> None:
        self.summary = summary
        self.always_create_runners = always_create_runners
        self.preimports: list[str] = []
        self.imports: dict[str, list[str]] = {}
        self.data_loader: str | None = None
        self.sections: dict[str, dict[str, str]] = {"Loaders": {}, "Variables": {}}
        self.runners: list[str] = []
        self.suffix: list[str] = []

    def add_import(self, imports: Any, frm: str | None = None, imp_as: str | None = None) -> None:
        """``from frm import a, b`` (or ``import a [as imp_as]`` without ``frm``)."""
        names = [imports] if isinstance(imports, str) else list(imports)
        if imp_as is not None and len(names) != 1:
            G_LOGGER.critical("add_import: imp_as needs exactly one import")
        for name in names:
            if not all(part.isidentifier() for part in str(name).split(".")):
                G_LOGGER.critical(f"add_import: {name!r} is not a module or name")
            line = f"from {frm} import {name}" if frm else f"import {name}"
            line += f" as {imp_as}" if imp_as else ""
            self.imports.setdefault(frm or "", [])
            if line not in self.imports[frm or ""]:
                self.imports[frm or ""].append(line)

    def append_preimport(self, line: Any) -> None:
        """A line (safe text) before the imports."""
        self.preimports.append(str(ensure_safe(line)))

    def append_suffix(self, line: Any) -> None:
        """A line (safe text) after the runners."""
        self.suffix.append(str(ensure_safe(line)))

    def set_data_loader(self, data_loader_str: Any) -> _String:
        """Sets the data loader (safe text); returns its variable name."""
        self.data_loader = str(ensure_safe(data_loader_str))
        return self.DATA_LOADER_NAME

    def _add(self, section: str, code: Any, name: str, force: bool | None) -> _String:
        code = str(ensure_safe(code))
        taken = {n for entries in self.sections.values() for n in entries}
        unique, n = name, 0
        while unique in taken and not force:
            n += 1
            unique = f"{name}_{n}"
        self.sections.setdefault(section, {})[unique] = code
        return inline_identifier(unique)

    def add_loader(self, loader_str: Any, loader_id: str, force: bool | None = None) -> _String:
        """Adds ``loader_id = loader_str``; returns the variable's name (``loader_id``, or with a
        suffix when taken, unless ``force``)."""
        return self._add("Loaders", loader_str, loader_id, force)

    def add_var(self, var_str: Any, var_id: str, category: str = "Variables", force: bool | None = None) -> _String:
        """Adds ``var_id = var_str`` under ``category``; returns the variable's name."""
        return self._add(category, var_str, var_id, force)

    def add_runner(self, runner_str: Any) -> None:
        """Adds a runner (safe text) to ``runners``."""
        self.runners.append(str(ensure_safe(runner_str)))

    def get_runners(self) -> _String:
        """The name of the runners list."""
        return inline(safe("runners"))

    def code(self, runners_name: str = "runners") -> str:
        """The program without its header: imports, data loader, loaders, variables, and the
        runners assigned to ``runners_name``."""
        lines = list(self.preimports)
        lines += [line for group in self.imports.values() for line in group]
        if self.data_loader is not None:
            lines += ["", "# Data Loader", f"{self.DATA_LOADER_NAME} = {self.data_loader}"]
        for section, entries in self.sections.items():
            if entries:
                lines += ["", f"# {section}"] + [f"{name} = {code}" for name, code in entries.items()]
        if self.runners or self.always_create_runners:
            lines += ["", "# Runners", f"{runners_name} = [", *[f"    {runner}," for runner in self.runners], "]"]
        if self.suffix:
            lines += ["", *self.suffix]
        return "\n".join(lines).strip("\n") + "\n"

    def __str__(self) -> str:
        lines = ["#!/usr/bin/env python3", f"# Written by poly on {time.strftime('%Y-%m-%d at %H:%M:%S')}"]
        if self.summary:
            lines += [f"# {line}" for line in self.summary.splitlines()]
        return "\n".join(lines) + "\n" + self.code()

    def save(self, dest: Any) -> None:
        """Writes the script to ``dest`` (a path or a file-like object)."""
        from poly.core import save_file

        save_file(str(self), dest, mode="w", description="script")
