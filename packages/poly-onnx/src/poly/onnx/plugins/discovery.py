"""
Plugin directories: ``find_plugins`` lists the plugins of a directory (its subdirectories that
hold a ``pattern.py``), and ``PluginPattern`` runs one plugin's ``pattern.py`` (user code the
user named with ``--plugin-dir``) and gives access to the functions it defines.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from poly.core import PolyException
from poly.core.backend.scripts import import_from_script

__all__ = ["PATTERN_FILE_NAME", "find_plugins", "PluginPattern"]

PATTERN_FILE_NAME = "pattern.py"
"""The file of a plugin directory that describes the subgraphs the plugin replaces."""


def find_plugins(plugin_dir: str, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None) -> list:
    """
    The names of the plugins in ``plugin_dir`` (its subdirectories holding a ``pattern.py``),
    sorted; only those in ``include`` when given, none of those in ``exclude``. A missing
    directory is a PolyException naming it.
    """
    if not os.path.isdir(plugin_dir):
        raise PolyException(f"--plugin-dir {plugin_dir!r} is not a directory")
    names = {entry for entry in os.listdir(plugin_dir)
             if os.path.isfile(os.path.join(plugin_dir, entry, PATTERN_FILE_NAME))}
    if include:
        names &= set(include)
    if exclude:
        names -= set(exclude)
    return sorted(names)


class PluginPattern:
    """
    The ``pattern.py`` of one plugin, run once when created. It defines
    ``get_matching_subgraphs(graph)`` (a list of ``{"inputs": [...], "outputs": [...],
    "attributes": {...}}``, one per matched subgraph of the onnx-graphsurgeon ``graph``),
    ``get_plugin_metadata()`` (``{"name": ..., "op": ...}``), and optionally
    ``replace_with_plugin(graph, input_tensors, output_tensors, attrs, op)``.
    """

    def __init__(self, plugin_dir: str, name: str) -> None:
        self.name = name
        self.path = os.path.join(plugin_dir, name, PATTERN_FILE_NAME)
        if not os.path.isfile(self.path):
            raise PolyException(f"Plugin {name!r} has no {PATTERN_FILE_NAME} in --plugin-dir {plugin_dir!r}")
        # The namespace of the script's module: every function it defines, looked up once.
        self.namespace = import_from_script(self.path, "__dict__")

    def function(self, name: str, required: bool = True) -> Any:
        """The function ``name`` of the script; None when it is missing and not ``required``."""
        func = self.namespace.get(name)
        if func is None and required:
            raise PolyException(f"{self.path} defines no function {name}()")
        if func is not None and not callable(func):
            raise PolyException(f"{self.path}: {name} is not a function")
        return func

    def metadata(self) -> dict:
        """``get_plugin_metadata()``: the plugin's name and op (the op type of its node)."""
        metadata = self.function("get_plugin_metadata")()
        if not isinstance(metadata, dict) or not isinstance(metadata.get("op"), str):
            raise PolyException(f"{self.path}: get_plugin_metadata() must return a dict with a string 'op', "
                                f"got {metadata!r}")
        return metadata

    def matching_subgraphs(self, graph: Any) -> list:
        """``get_matching_subgraphs(graph)``, checked: a list of dicts with lists of tensor names
        under "inputs" and "outputs"."""
        matches = self.function("get_matching_subgraphs")(graph)
        if matches is None:
            return []
        if not isinstance(matches, list):
            raise PolyException(f"{self.path}: get_matching_subgraphs() must return a list, got {type(matches).__name__}")
        for match in matches:
            if not isinstance(match, dict) or not all(isinstance(match.get(key), list) for key in ("inputs", "outputs")):
                raise PolyException(f"{self.path}: get_matching_subgraphs() returned {match!r}; each match must "
                                    "be a dict with lists of tensor names under 'inputs' and 'outputs'")
        return matches
